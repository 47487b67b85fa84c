"""Chess between UCI engines, judged over the referee's JSON Lines protocol
(version 2). python-chess holds the rules; the harness times the engines on
their clocks, and this judge speaks UCI to them through it. Seat 0 plays
White. Openings, adjudication and the summary: docs/chess.md.
"""

import json
import re
import sys
import unicodedata

import chess
import chess.pgn

OPTIONS = {"openings": "openings.epd", "max_plies": 400, "movetime": 100, "nodes": 0,
           "draw_after": 80, "draw_cp": 10, "draw_plies": 8, "resign_cp": 1000, "resign_moves": 4}
MATE = 100000  # a mate score in centipawns: beyond any evaluation
# A score an engine sends is kept within this many centipawns, or moves to
# mate, of 0: a larger cp is never taken for a mate, a longer mate stays one.
LARGEST = MATE // 2 - 1
# UCI's integers, in ASCII digits: str.isdigit() also takes "²", which int() refuses.
INTEGER = re.compile(r"-?[0-9]+\Z")
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


def settings(given):
    for key, value in given.items():
        if key not in OPTIONS or type(value) is not type(OPTIONS[key]):
            sys.exit("chess judge: option %s = %r: the options are %s" % (key, value, OPTIONS))
    return dict(OPTIONS, **given)


def engine_score(lines):
    """The last score in the engine's info lines that the judge can read, in
    centipawns from the engine's own side (as UCI gives it), or None. A line
    it cannot read (no number after `cp` or `mate`, "²", a word) has none."""
    for words in (line.split() for line in reversed(lines)):
        if words[:1] != ["info"]:
            continue
        if "string" in words:  # UCI: the rest of the line is text
            words = words[:words.index("string")]
        if "score" not in words[:-2]:
            continue
        kind, value = words[words.index("score") + 1:][:2]
        if kind not in ("cp", "mate") or not INTEGER.match(value):
            continue
        # int() of thousands of digits is slow, and past 4300 an error.
        value = int(value) if len(value) <= 10 else -MATE if value[0] == "-" else MATE
        value = max(-LARGEST, min(LARGEST, value))
        if kind == "cp":
            return value
        return MATE - value if value > 0 else -MATE - value  # "mate 0", "mate -N": it is mated
    return None


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


def uci_value(value):
    return str(value).lower() if isinstance(value, bool) else str(value)  # UCI's true, false


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


def play(start, opts, book):
    names = [p["name"] for p in start["players"]]
    board, ops = chess.Board.from_epd(book[(start["opening"] - 1) % len(book)])
    summary = {"opening": start["opening"], "opening_name": ops.get("id"), "fen": board.fen(),
               "white": names[0], "black": names[1]}
    controls = [p["time_control"] for p in start["players"]]
    clocks = [c and c["base_micros"] for c in controls]
    comments = []  # the PGN's, one per move: the engine's score and time

    def ask(seats, until, **setup):
        say(dict(type="ask", players=seats, until=until, **setup))
        answer = hear()
        clocks[:] = answer.get("clocks") or clocks
        return answer["replies"]

    def finish(result, termination, detail=""):
        game = chess.pgn.Game.from_board(board)  # FEN and SetUp when not the usual start
        game.headers.update(Event=start["game"], Site="referee", Round=str(start["opening"]),
                            White=names[0], Black=names[1], Result=result,
                            Termination=TAGS.get(termination, "abandoned"))
        if all(controls):
            game.headers["TimeControl"] = "%g+%g" % (controls[0]["base_micros"] / 1e6,
                                                     controls[0]["increment_micros"] / 1e6)
        for key, value in list(game.headers.items()):
            game.headers[key] = pgn_value(value)
        nodes = list(game.mainline())
        for node, comment in zip(nodes, comments):
            node.comment = comment
        if result != "*":  # the reason, as fastchess gives it; before any move, the game's
            colours = ("White", "Black") if result != "0-1" else ("Black", "White")
            reason = REASONS.get(termination, "%(loser)s disconnects") % dict(
                winner=colours[0], loser=colours[1]) + detail
            last = nodes[-1] if nodes else game
            last.comment = ", ".join(filter(None, [last.comment, reason]))
        summary.update(result=result, termination=termination, plies=len(board.move_stack),
                       pgn=str(game))
        say({"type": "end", "scores": SCORES[result], "summary": summary})

    def forfeit(losers, termination, detail=""):
        finish("*" if len(losers) > 1 else ("0-1", "1-0")[losers[0]], termination, detail)

    # Set-up, on the start-up allowance: uci, the entrant's options, a new game.
    say({"type": "send", "to": [0, 1], "text": "uci\n"})
    failed = [r for r in ask([0, 1], "uciok", setup=True) if "text" not in r]
    alive = [s for s in (0, 1) if s not in [r["player"] for r in failed]]
    for seat in alive:
        options = start["players"][seat]["options"].items()
        text = "".join("setoption name %s value %s\n" % (k, uci_value(v)) for k, v in options)
        say({"type": "send", "to": [seat], "text": text + "ucinewgame\nisready\n"})
    if alive:
        failed += [r for r in ask(alive, "readyok", setup=True) if "text" not in r]
    if failed:
        return forfeit([r["player"] for r in failed], failed[0]["status"])

    opening = "%s: %s" % (summary["opening_name"], board.fen())
    say(frame(board, opening, legend=LEGEND, colors=COLORS))
    moves, resigning, quiet = [], [0, 0], 0
    while True:
        if rules_end(board):
            return finish(*rules_end(board))
        if max(resigning) >= opts["resign_moves"]:
            return finish("0-1" if resigning[0] >= opts["resign_moves"] else "1-0", "resignation")
        if len(moves) >= opts["draw_after"] and quiet >= opts["draw_plies"]:
            return finish("1/2-1/2", "draw_by_score")
        if len(moves) >= opts["max_plies"]:
            return finish("1/2-1/2", "max_plies")

        seat = 0 if board.turn == chess.WHITE else 1
        go = "go nodes %d" % opts["nodes"] if opts["nodes"] else "go"  # fixed work per move
        if all(controls):
            left = [max(1, c // 1000) for c in clocks]
            inc = [c["increment_micros"] // 1000 for c in controls]
            go += " wtime %d btime %d winc %d binc %d" % (*left, *inc)
        elif not opts["nodes"]:
            go += " movetime %d" % opts["movetime"]
        position = " ".join(["position fen", summary["fen"]] + (["moves"] + moves if moves else []))
        say({"type": "send", "to": [seat], "text": position + "\n" + go + "\n"})
        (reply,) = ask([seat], "bestmove")
        if "text" not in reply:
            return forfeit([seat], reply["status"])
        words = reply["text"].split()
        try:
            move = chess.Move.from_uci(words[1])
        except (IndexError, ValueError):
            move = None
        # Only the legal moves as UCI writes them: python-chess also takes a
        # king onto its rook (Chess960's castling), which the other engine,
        # sent it in `position`, would not.
        if move is None or move not in set(board.legal_moves):
            text = (" ".join(words[1:2]) or reply["text"])[:100]
            what = "%s move %r" % ("illegal" if move else "unparsable", text)
            say({"type": "eliminate", "player": seat, "status": "incorrect",
                 "message": "%s at ply %d, position %s" % (what, len(moves) + 1, board.fen())})
            return forfeit([seat], "illegal_move", ": " + plain(text))

        # Adjudication counts consecutive moves: a move without a score resets them.
        score = engine_score(reply.get("lines", []))
        bad = score is not None and score <= -opts["resign_cp"]
        resigning[seat] = resigning[seat] + 1 if bad else 0
        quiet = quiet + 1 if score is not None and abs(score) <= opts["draw_cp"] else 0
        shown = "" if score is None else "%+.2f " % (score / 100) if abs(score) < MATE // 2 \
            else "%sM%d " % ("+-"[score < 0], MATE - abs(score))
        comments.append("%s%.3fs" % (shown, reply["micros"] / 1e6))
        label = "%d%s %s" % (board.fullmove_number, "." if board.turn else "...", board.san(move))
        board.push(move)
        moves.append(move.uci())
        say(frame(board, "%s (%s, %s)" % (label, names[seat], comments[-1])))


def main():
    book = None
    while True:
        start = hear()
        if start.get("version") != 2:
            sys.exit("chess judge: needs judge protocol 2 (protocol = 2 in game.toml)")
        opts = settings(start["options"])
        if book is None:  # one file per run: the game file's options do not change
            with open(opts["openings"]) as f:
                book = [line for line in f.read().splitlines() if line.strip()]
        play(start, opts, book)


if __name__ == "__main__":
    main()
