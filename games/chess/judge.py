"""Chess between UCI engines, judged over the referee's JSON Lines protocol
(version 2). python-chess holds the rules; the harness times the engines on
their clocks, and this judge speaks UCI to them through it. Options,
openings, colours, adjudication (fastchess's) and the summary:
docs/chess.md.
"""

import difflib
import json
import random
import re
import sys
import time
import unicodedata

import chess
import chess.pgn


class Refused(Exception):
    """Settings the judge cannot play with: the game is refused (`refuse`),
    for `player`'s entrant's options, or for the game's when None."""

    def __init__(self, message, player=None):
        super().__init__(message)
        self.player = player


def whole(low):
    return lambda v: None if type(v) is int and v >= low else "a whole number, at least %d" % low


def boolean(value):
    return None if type(value) is bool else "true or false"


def text(value):
    return None if type(value) is str else "text"


def one_of(*words):
    return lambda v: None if v in words else " or ".join(json.dumps(w) for w in words)


def even_pairs(value):
    # The referee plays colour-swapped pairs: an opening holds whole pairs.
    ok = type(value) is int and value >= 2 and value % 2 == 0
    return None if ok else "an even whole number, at least 2 (games come in colour-swapped pairs)"


# The judge's options (the game's, `start.options`): default, and what a
# value must be. 0 turns an adjudication (or a limit of the search) off.
OPTIONS = {
    "openings": ("openings.epd", text),
    "order": ("sequential", one_of("sequential", "random")),
    "seed": (None, whole(0)),  # random order's seed; None: the run's seed
    "start": (1, whole(1)),
    "games_per_opening": (2, even_pairs),
    "swap": (True, boolean),
    "nodes": (0, whole(0)),
    "depth": (0, whole(0)),
    "movetime": (0, whole(1)),  # 0: not given (a seat without a clock needs a limit)
    "max_moves": (200, whole(0)),
    # Plies instead of max_moves' moves, when given (a tournament file's
    # max_plies over the game file's max_moves).
    "max_plies": (None, whole(0)),
    "draw_movenumber": (40, whole(0)),
    "draw_movecount": (4, whole(0)),
    "draw_score": (10, whole(0)),
    "resign_movecount": (4, whole(0)),
    "resign_score": (1000, whole(0)),
    "resign_twosided": (False, boolean),
}
# The names before fastchess's, still read: old name -> (new name, divisor).
ALIASES = {"draw_after": ("draw_movenumber", 2), "draw_plies": ("draw_movecount", 2),
           "draw_cp": ("draw_score", 1), "resign_cp": ("resign_score", 1),
           "resign_moves": ("resign_movecount", 1)}
# An entrant's options that are the judge's, never sent to its engine: its
# own search limits, overriding the game's (fastchess's per-engine nodes=).
SEARCH = {"nodes": whole(0), "depth": whole(0), "movetime": whole(1)}

MATE = 100000  # a mate score in centipawns: beyond any evaluation
# A score an engine sends is kept within this many centipawns, or moves to
# mate, of 0: a larger cp is never taken for a mate, a longer mate stays one.
LARGEST = MATE // 2 - 1
# UCI's integers, in ASCII digits: str.isdigit() also takes "²", which int() refuses.
INTEGER = re.compile(r"-?[0-9]+\Z")
# A move as UCI writes one (squares, a promotion, or the null move): any
# other text is unparsable; such a move that is not legal is illegal.
UCI_MOVE = re.compile(r"(?:[a-h][1-8][a-h][1-8][qrbn]?|0000)\Z")
OPTION_LINE = re.compile(r"option\s+name\s+(.+?)\s+type\s+(\S+)(.*)\Z")
SCORES = {"1-0": [1, 0], "0-1": [0, 1], "1/2-1/2": [0.5, 0.5], "*": [0, 0]}
# PGN's Termination tag for the summary's `termination`; a player's failure
# other than a timeout is "abandoned".
TAGS = dict.fromkeys(["checkmate", "stalemate", "insufficient_material", "fifty_moves",
                      "threefold_repetition"], "normal")
TAGS.update(dict.fromkeys(["resignation", "draw_by_score", "max_plies"], "adjudication"),
            illegal_move="rules infraction", timeout="time forfeit")
# Why the game ended, in fastchess's words, for the last move's comment:
# "%(winner)s" and "%(loser)s" are colours. A player's other failures
# (crashed, limit, ...) are fastchess's "disconnects".
REASONS = {"checkmate": "%(winner)s mates", "stalemate": "Draw by stalemate",
           "insufficient_material": "Draw by insufficient mating material",
           "fifty_moves": "Draw by fifty moves rule",
           "threefold_repetition": "Draw by 3-fold repetition",
           "resignation": "%(winner)s wins by adjudication",
           "draw_by_score": "Draw by adjudication", "max_plies": "Draw by adjudication",
           "illegal_move": "%(loser)s makes an illegal move", "timeout": "%(loser)s loses on time"}
LEGEND, COLORS = {}, {}  # for the replay: White's pieces are capitals, one colour a side
for symbol, piece in zip(chess.PIECE_SYMBOLS[1:], chess.PIECE_NAMES[1:]):
    LEGEND.update({symbol.upper(): "white " + piece, symbol: "black " + piece})
    COLORS.update({symbol.upper(): "#ffd966", symbol: "#8fb3de"})


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hear():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def closest(name, names):
    """The one of `names` nearest to `name`, compared without case."""
    lowered = {n.lower(): n for n in names}
    best = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0)
    return lowered[best[0]] if best else None


def settings(given):
    """The game's options, the defaults filled in; Refused names a key the
    judge does not know or a value it cannot take."""
    given = dict(given)
    for old, (new, divisor) in ALIASES.items():
        if old in given:
            if new in given:
                raise Refused("game options %s and %s are one setting: give %s" % (old, new, new))
            value = given.pop(old)
            if whole(0)(value):
                raise Refused("game option %s = %s: must be %s" % (old, json.dumps(value),
                                                                  whole(0)(value)))
            given[new] = -(-value // divisor)
    for key, value in given.items():
        if key not in OPTIONS:
            raise Refused("game option %s is not an option of the chess judge (the closest is %s); "
                          "its options: %s" % (json.dumps(key), closest(key, OPTIONS),
                                               ", ".join(OPTIONS)))
        wrong = OPTIONS[key][1](value)
        if wrong:
            raise Refused("game option %s = %s: must be %s" % (key, json.dumps(value), wrong))
    return {key: given.get(key, default) for key, (default, _) in OPTIONS.items()}


def search_limits(opts, players):
    """Each seat's search: the game's nodes, depth and movetime, each
    overridden by its entrant's option of that name (checked here)."""
    limits = []
    for seat, player in enumerate(players):
        own = {}
        for key, check in SEARCH.items():
            if key in player.get("options", {}):
                value = player["options"][key]
                if check(value):
                    raise Refused("entrant %s: option %s = %s: must be %s" % (
                        json.dumps(player["name"]), key, json.dumps(value), check(value)), seat)
                own[key] = value
        limits.append({key: own.get(key, opts[key]) for key in SEARCH})
    return limits


BOOKS = {}  # path -> [(line number, EPD)]: one read per file and judge process
ORDERS = {}  # (path, seed) -> the book's shuffled order: one shuffle per run


def shuffled(path, size, seed):
    if (path, seed) not in ORDERS:
        order = list(range(size))
        random.Random(seed).shuffle(order)  # Fisher-Yates, from Python's Mersenne Twister
        ORDERS[path, seed] = order
    return ORDERS[path, seed]


def book(path):
    if path not in BOOKS:
        try:
            with open(path, encoding="utf-8") as f:
                lines = [(n, line) for n, line in enumerate(f.read().splitlines(), 1)
                         if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise Refused("game option openings = %s: cannot read it: %s" % (json.dumps(path), e))
        if not lines:
            raise Refused("game option openings = %s: the file holds no position" % json.dumps(path))
        BOOKS[path] = lines
    return BOOKS[path]


def opening(start, opts):
    """The position of this game, its EPD operations and its line in the
    file: a round of the referee is 2 games, and `games_per_opening` games
    (whole rounds) share one line; in order from `start`, or in a shuffled
    order (`seed`, else the run's), as fastchess's -openings order=random
    -srand."""
    lines = book(opts["openings"])
    group = (start["opening"] - 1) // (opts["games_per_opening"] // 2)
    at = (opts["start"] - 1 + group) % len(lines)
    if opts["order"] == "random":
        seed = start["seed"] if opts["seed"] is None else opts["seed"]
        at = shuffled(opts["openings"], len(lines), seed)[at]
    number, epd = lines[at]
    try:
        return chess.Board.from_epd(epd) + (number,)  # the board, the EPD's operations
    except ValueError as e:
        raise Refused("openings %s, line %d: not an EPD position (%s): %s" % (
            opts["openings"], number, e, epd[:100]))


def engine_id(lines):
    """The engine's `id name` and `id author` from its `uci` reply."""
    ids = {}
    for line in lines:
        words = line.split(None, 2)
        if words[:1] == ["id"] and len(words) == 3 and words[1] in ("name", "author"):
            ids.setdefault(words[1], words[2].strip())
    return ids


def declared_options(lines):
    """The options an engine declares in its `uci` reply, by name without
    case: {name: (its name, type, {default, min, max: text; var: [texts]})}."""
    declared = {}
    for line in lines:
        match = OPTION_LINE.match(line.strip())
        if not match:
            continue
        name, kind, rest = match.groups()
        parts = re.split(r"(?:^|\s+)(default|min|max|var)(?:\s+|\Z)", rest)
        fields = {"var": []}
        for key, value in zip(parts[1::2], parts[2::2]):
            if key == "var":
                fields["var"].append(value.strip())
            else:
                fields[key] = value.strip()
        declared.setdefault(name.lower(), (name, kind.lower(), fields))
    return declared


def uci_value(value):
    return str(value).lower() if isinstance(value, bool) else str(value)  # UCI's true, false


def option_text(option, value):
    """`setoption`'s value for a declared option, or an error: what the
    value must be."""
    name, kind, fields = option
    if kind == "spin":
        number = value if type(value) is int else None
        if type(value) is str and INTEGER.match(value.strip()):
            number = int(value.strip())
        low, high = (int(fields[k]) if INTEGER.match(fields.get(k, "")) else None
                     for k in ("min", "max"))
        if number is None or (low is not None and number < low) \
                or (high is not None and number > high):
            return None, "a whole number from %s to %s" % (low, high)
        return str(number), None
    if kind == "check":
        if type(value) is bool or str(value).lower() in ("true", "false"):
            return uci_value(value).lower(), None
        return None, "true or false"
    if kind == "combo":
        chosen = [v for v in fields["var"] if v.lower() == uci_value(value).lower()]
        if chosen:
            return chosen[0], None
        return None, "one of %s" % ", ".join(json.dumps(v) for v in fields["var"])
    if kind == "button":
        return (True, None) if value is True else (None, "true (a button is pressed or not given)")
    return uci_value(value), None


def setoptions(player, seat, lines):
    """The `setoption` lines for an entrant's options, in its engine's own
    spelling; Refused names an option the engine does not declare (UCI's
    names compare without case) or a value it cannot take."""
    ids, declared = engine_id(lines), declared_options(lines)
    engine = ids.get("name", "its engine")
    out = []
    for key, value in player.get("options", {}).items():
        if key in SEARCH:
            continue
        entrant = "entrant %s: option %s" % (json.dumps(player["name"]), json.dumps(key))
        option = declared.get(key.lower())
        if option is None:
            near = closest(key, [o[0] for o in declared.values()])
            hint = "the closest is %s" % json.dumps(near) if near else "it declares no options"
            raise Refused("%s is not an option of %s (its id name); %s" % (entrant, engine, hint),
                          seat)
        sent, wrong = option_text(option, value)
        if wrong:
            raise Refused("%s = %s: %s takes %s" % (entrant, json.dumps(value), engine, wrong), seat)
        tail = "" if sent is True else " value %s" % sent
        out.append("setoption name %s%s\n" % (option[0], tail))
    return "".join(out), ids


def engine_score(lines):
    """The score of an engine's move from its info lines, as fastchess
    reads it: the last line with a score (multipv 1 only), an exact one
    before a bound; ("cp", n) or ("mate", n) from the engine's own side, or
    None. A line the judge cannot read (no whole number after `cp` or
    `mate`, "²", a word) has none."""
    bound = None
    for words in (line.split() for line in reversed(lines)):
        if words[:1] != ["info"]:
            continue
        if "string" in words:  # UCI: the rest of the line is text
            words = words[:words.index("string")]
        if "multipv" in words[:-1] and words[words.index("multipv") + 1] != "1":
            continue
        if "score" not in words[:-2]:
            continue
        kind, value = words[words.index("score") + 1:][:2]
        if kind not in ("cp", "mate") or not INTEGER.match(value):
            continue
        # int() of thousands of digits is slow, and past 4300 an error.
        value = int(value) if len(value) <= 10 else -MATE if value[0] == "-" else MATE
        score = (kind, max(-LARGEST, min(LARGEST, value)))
        if "lowerbound" not in words and "upperbound" not in words:
            return score
        bound = bound or score
    return bound


def shown(score):
    """A score for the PGN's comment and the frames: pawns, or M and moves."""
    if score is None:
        return ""
    kind, value = score
    if kind == "cp":
        return "%+.2f " % (value / 100)
    return "%sM%d " % ("-" if value < 0 or value == 0 else "+", abs(value))


def pgn_value(text):
    """A PGN tag's value as the standard writes it: `\\` and `"` escaped,
    and no line end or other control character (each a space), so that no
    name can end its tag or start another, or another game."""
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)
    return text.replace("\\", "\\\\").replace('"', '\\"')


def plain(text, limit=20):
    """An engine's text for a PGN comment: printable ASCII without braces
    (a `}` would end the comment), at most `limit` characters."""
    text = "".join(c if " " <= c <= "~" and c not in "{}" else "?" for c in text)
    return text if len(text) <= limit else text[:limit] + "..."


def rules_end(board):
    """The rules' own end, or None; a draw a player could claim is taken at
    once (as fastchess and cutechess do)."""
    if board.is_fifty_moves():
        return "1/2-1/2", "fifty_moves"
    if board.is_repetition(3):
        return "1/2-1/2", "threefold_repetition"
    outcome = board.outcome()
    return outcome and (outcome.result(), outcome.termination.name.lower())


def frame(board, text, **extra):
    grid = str(board).replace(" ", "").split("\n")
    return {"type": "frame", "data": dict(grid=grid, text=text, fen=board.fen(), **extra)}


class Adjudication:
    """fastchess's -draw, -resign and -maxmoves, counted as it counts them:
    updated after each move with the mover's score, asked before the next."""

    def __init__(self, opts):
        self.opts = opts
        self.quiet = 0  # plies in a row within draw_score of 0
        self.resigning = [0, 0]  # per colour (White, Black): its moves in a row lost
        self.lopsided = 0  # two-sided: plies in a row beyond resign_score
        self.plies = opts["max_plies"] if opts["max_plies"] is not None else 2 * opts["max_moves"]

    def update(self, board, score, colour):
        o = self.opts
        if score is None:  # a move without a score breaks the runs
            self.quiet, self.lopsided, self.resigning[colour] = 0, 0, 0
            return
        kind, value = score
        if board.halfmove_clock == 0:  # a capture or a pawn move: the draw count restarts
            self.quiet = 0
        self.quiet = self.quiet + 1 if kind == "cp" and abs(value) <= o["draw_score"] else 0
        big = (kind == "cp" and abs(value) >= o["resign_score"]) or kind == "mate"
        self.lopsided = self.lopsided + 1 if big else 0
        lost = (kind == "cp" and value <= -o["resign_score"]) or (kind == "mate" and value < 0)
        self.resigning[colour] = self.resigning[colour] + 1 if lost else 0

    def verdict(self, board, plies, score):
        """(result, termination) before the next move, or None; `score` is
        the last mover's."""
        o = self.opts
        count = o["resign_movecount"]
        resignable = count and (self.lopsided >= 2 * count if o["resign_twosided"]
                                else max(self.resigning) >= count)
        if resignable and score is not None and score[1] < 0:
            return "1-0" if board.turn == chess.WHITE else "0-1", "resignation"
        count = o["draw_movecount"]
        if count and board.fullmove_number - 1 >= o["draw_movenumber"] and self.quiet >= 2 * count:
            return "1/2-1/2", "draw_by_score"
        if self.plies and plies >= self.plies:
            return "1/2-1/2", "max_plies"
        return None



def first_listed(start):
    """The seat of the entrant listed first in the run (the lower
    `entrant`); from a harness that does not say, the seat of the round's
    first entrant (seat s holds the table's entrant (s + rotation) mod 2)."""
    numbers = [p.get("entrant") for p in start["players"]]
    if None in numbers:
        return start["rotation"] % 2
    return numbers.index(min(numbers))


class Game:
    """One game: its two seats, which colour each plays, the engines'
    search limits and clocks; the PGN and the summary at its end."""

    def __init__(self, start, opts):
        self.start, self.opts = start, opts
        players = start["players"]
        self.names = [p["name"] for p in players]
        self.search = search_limits(opts, players)
        self.board, operations, line = opening(start, opts)
        # swap = false (fastchess's -noswap): White is the entrant listed
        # first in the run (the lower `entrant`) in every game, whatever
        # seat the rotation gives it.
        self.white = 0 if opts["swap"] else first_listed(start)
        self.seats = [self.white, 1 - self.white]  # by colour: White's seat, Black's
        self.controls = [p["time_control"] for p in players]
        for seat, player in enumerate(players):
            # go with nothing to stop the engine: it would think for ever.
            if not self.controls[seat] and not any(self.search[seat].values()):
                raise Refused("entrant %s has no clock (time_control \"none\") and no search "
                              "limit: give nodes, depth or movetime (a game option, or the "
                              "entrant's own)" % json.dumps(player["name"]))
        self.clocks = [c and c["base_micros"] for c in self.controls]
        self.ids = [{}, {}]
        self.comments = []  # the PGN's, one per move: the engine's score and time
        self.date = time.strftime("%Y.%m.%d")
        self.summary = {"opening": start["opening"], "line": line,
                        "opening_name": operations.get("id"),
                        "fen": self.board.fen(), "white": self.names[self.white],
                        "black": self.names[1 - self.white]}

    def ask(self, seats, until, **setup):
        say(dict(type="ask", players=seats, until=until, **setup))
        answer = hear()
        self.clocks[:] = answer.get("clocks") or self.clocks
        return answer["replies"]

    def go(self, seat):
        """`go` for the engine of `seat`: its nodes and depth, the clocks
        when it has one (each side's own time and increment), else its
        movetime (a seat without a clock has one of the three)."""
        limits = self.search[seat]
        words = ["go"] + ["%s %d" % (k, limits[k]) for k in ("nodes", "depth") if limits[k]]
        if self.controls[seat]:
            timed = [(c, s) for c, s in zip("wb", self.seats) if self.controls[s]]
            words += ["%stime %d" % (c, max(1, self.clocks[s] // 1000)) for c, s in timed]
            words += ["%sinc %d" % (c, self.controls[s]["increment_micros"] // 1000)
                      for c, s in timed]
        elif not limits["nodes"] and not limits["depth"]:
            words.append("movetime %d" % limits["movetime"])
        return " ".join(words)

    def control(self, seat):
        """A seat's PGN time control, as fastchess writes it: `2+0.05`,
        `-` (no clock: nodes or depth), `0.1/move`."""
        control = self.controls[seat]
        if control:
            inc = control["increment_micros"]
            return "%g" % (control["base_micros"] / 1e6) + ("+%g" % (inc / 1e6) if inc else "")
        limits = self.search[seat]
        return "-" if limits["nodes"] or limits["depth"] else "%g/move" % (limits["movetime"] / 1e3)

    def pgn(self, result, termination):
        game = chess.pgn.Game.from_board(self.board)  # FEN and SetUp when not the usual start
        white, black = self.seats
        game.headers.update(Event=self.start["game"], Site="referee", Date=self.date,
                            Round=str(self.start["opening"]), White=self.names[white],
                            Black=self.names[black], Result=result)
        for colour, seat in zip(("White", "Black"), self.seats):
            for key in ("name", "author"):
                if key in self.ids[seat]:
                    game.headers["Engine%s%s" % (colour, key.title())] = self.ids[seat][key]
        game.headers.update(PlyCount=str(len(self.board.move_stack)),
                            Termination=TAGS.get(termination, "abandoned"))
        controls = [self.control(white), self.control(black)]
        if controls[0] == controls[1]:
            game.headers["TimeControl"] = controls[0]
        else:
            game.headers.update(WhiteTimeControl=controls[0], BlackTimeControl=controls[1])
        for key, value in list(game.headers.items()):
            game.headers[key] = pgn_value(value)
        return game

    def finish(self, result, termination, detail=""):
        game = self.pgn(result, termination)
        nodes = list(game.mainline())
        for node, comment in zip(nodes, self.comments):
            node.comment = comment
        if result != "*":  # the reason, as fastchess gives it; before any move, the game's
            colours = ("White", "Black") if result != "0-1" else ("Black", "White")
            reason = REASONS.get(termination, "%(loser)s disconnects") % dict(
                winner=colours[0], loser=colours[1]) + detail
            last = nodes[-1] if nodes else game
            last.comment = ", ".join(filter(None, [last.comment, reason]))
        self.summary.update(result=result, termination=termination,
                            plies=len(self.board.move_stack), pgn=str(game))
        by_colour = SCORES[result]
        scores = [by_colour[self.seats.index(seat)] for seat in (0, 1)]
        say({"type": "end", "scores": scores, "summary": self.summary})

    def forfeit(self, losers, termination, detail=""):
        lost = self.seats.index(losers[0])  # the colour that lost
        self.finish("*" if len(losers) > 1 else ("0-1", "1-0")[lost], termination, detail)

    def setup(self):
        """uci and the entrants' options for an engine process new to this
        judge, then a new game for both, on the start-up allowance, as
        fastchess sets up an engine once and starts each game with
        `ucinewgame`. False when the game is over (a failure) or refused."""
        process = [self.start["players"][seat].get("process") for seat in (0, 1)]
        fresh = [seat for seat in (0, 1) if process[seat] not in SET_UP]
        for seat in (0, 1):
            if seat not in fresh:
                self.ids[seat] = SET_UP[process[seat]]
        replies = []
        if fresh:
            say({"type": "send", "to": fresh, "text": "uci\n"})
            replies = self.ask(fresh, "uciok", setup=True)
        failed = [r for r in replies if "text" not in r]
        alive = sorted([r["player"] for r in replies if "text" in r] +
                       [seat for seat in (0, 1) if seat not in fresh])
        # Both entrants' options are checked before either is sent any.
        options = {}
        for reply in (r for r in replies if "text" in r):
            seat = reply["player"]
            player = self.start["players"][seat]
            options[seat], self.ids[seat] = setoptions(player, seat, reply.get("lines", []))
        for seat in alive:
            say({"type": "send", "to": [seat],
                 "text": options.get(seat, "") + "ucinewgame\nisready\n"})
        if alive:
            failed += [r for r in self.ask(alive, "readyok", setup=True) if "text" not in r]
        if failed:
            self.forfeit([r["player"] for r in failed], failed[0]["status"])
            return False
        for seat in fresh:
            if process[seat] is not None:
                SET_UP.pop(process[seat], None)
                SET_UP[process[seat]] = self.ids[seat]
                while len(SET_UP) > 16:
                    SET_UP.pop(next(iter(SET_UP)))
        return True

    def move(self, seat, moves):
        """Asks `seat` for its move; the move, or None when the game ended."""
        position = " ".join(["position fen", self.summary["fen"]] +
                            (["moves"] + moves if moves else []))
        say({"type": "send", "to": [seat], "text": position + "\n" + self.go(seat) + "\n"})
        (reply,) = self.ask([seat], "bestmove")
        if "text" not in reply:
            return self.forfeit([seat], reply["status"])
        words = reply["text"].split()
        written = words[1] if len(words) > 1 else ""
        well_formed = bool(UCI_MOVE.match(written))
        try:
            move = chess.Move.from_uci(written) if well_formed else None
        except ValueError:  # a1a1: squares, but no move
            move = None
        # Only the legal moves as UCI writes them: python-chess also takes a
        # king onto its rook (Chess960's castling), which the other engine,
        # sent it in `position`, would not.
        if move is None or move not in set(self.board.legal_moves):
            text = (written or reply["text"])[:100]
            what = "%s move %r" % ("illegal" if well_formed else "unparsable", text)
            where = "at ply %d, position %s" % (len(moves) + 1, self.board.fen())
            say({"type": "eliminate", "player": seat, "status": "incorrect",
                 "message": "%s %s" % (what, where)})
            return self.forfeit([seat], "illegal_move", ": " + plain(text))
        return move, engine_score(reply.get("lines", [])), reply["micros"]

    def play(self):
        if not self.setup():
            return
        board, adjudication = self.board, Adjudication(self.opts)
        opening_text = "%s: %s" % (self.summary["opening_name"], board.fen())
        say(frame(board, opening_text, legend=LEGEND, colors=COLORS))
        moves, score = [], None
        while True:
            end = rules_end(board) or adjudication.verdict(board, len(moves), score)
            if end:
                return self.finish(*end)
            seat = self.seats[0 if board.turn == chess.WHITE else 1]
            played = self.move(seat, moves)
            if played is None:
                return
            move, score, micros = played
            self.comments.append("%s%.3fs" % (shown(score), micros / 1e6))
            label = "%d%s %s" % (board.fullmove_number, "." if board.turn else "...",
                                 board.san(move))
            colour = 0 if board.turn == chess.WHITE else 1
            board.push(move)
            moves.append(move.uci())
            adjudication.update(board, score, colour)
            say(frame(board, "%s (%s, %s)" % (label, self.names[seat], self.comments[-1])))


# The engine processes this judge has set up (`uci` and their options),
# by their number in `start` (`process`), and their ids: a kept process
# gets only `ucinewgame` in its next games. The last 16 are remembered.
SET_UP = {}


def main():
    while True:
        start = hear()
        if start.get("version") != 2:
            sys.exit("chess judge: needs judge protocol 2 (protocol = 2 in game.toml)")
        try:
            game = Game(start, settings(start["options"]))
            game.play()
        except Refused as refused:
            message = {"type": "refuse", "message": str(refused)}
            if refused.player is not None:
                message["player"] = refused.player
            say(message)


if __name__ == "__main__":
    main()
