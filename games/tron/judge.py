"""Light cycles (Tron) for 2 to 4 players, judged over the referee's JSON
Lines protocol (version 1). Every living cycle moves at once each turn; a
cycle dies on a wall, an obstacle, a trail, or a head-on collision. Standard
library only. See games/tron/README.md and docs/judge-protocol.md.
"""

import json
import sys

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
STEPS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
OPTIONS = {"width": 15, "height": 15, "obstacles": 0}


def splitmix64(state):
    z = state & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Rng:
    """Draw k (from 1) of game `index` is splitmix64(seed + index * GAMMA +
    k * GAMMA); below(n) is that draw mod n."""

    def __init__(self, seed, index):
        self.state = (seed + index * GAMMA) & MASK

    def below(self, n):
        self.state = (self.state + GAMMA) & MASK
        return splitmix64(self.state) % n


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hear():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def options(given):
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        sys.exit("tron judge: unknown option %s (known: width, height, obstacles)" % unknown[0])
    merged = dict(OPTIONS, **given)
    for key, value in merged.items():
        if not isinstance(value, int) or isinstance(value, bool):
            sys.exit("tron judge: option %s = %r is not a whole number" % (key, value))
    w, h, b = merged["width"], merged["height"], merged["obstacles"]
    if not (5 <= w <= 100 and 5 <= h <= 100):
        sys.exit("tron judge: the grid is %dx%d; width and height must be 5 to 100" % (w, h))
    if not 0 <= b <= w * h // 8:
        sys.exit("tron judge: obstacles = %d; it must be 0 to width*height/8 = %d" % (b, w * h // 8))
    return w, h, b


def mirrors(x, y, w, h):
    """The cell and its images, in seat order: seat 0 (x, y), seat 1 the
    point reflection (w-1-x, h-1-y), seat 2 the left-right mirror (w-1-x, y),
    seat 3 the top-bottom mirror (x, h-1-y)."""
    return [(x, y), (w - 1 - x, h - 1 - y), (w - 1 - x, y), (x, h - 1 - y)]


def layout(seed, index, w, h, k, groups):
    rng = Rng(seed, index)
    # A cell in the top-left quarter, off the border, strictly before the
    # middle row and column, so that its four images are distinct.
    x = 1 + rng.below((w - 2) // 2)
    y = 1 + rng.below((h - 2) // 2)
    starts = mirrors(x, y, w, h)[:k]
    blocked = set()
    near = {(sx + dx, sy + dy) for sx, sy in mirrors(x, y, w, h)
            for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
    placed = 0
    tries = 0
    while placed < groups and tries < 1000:
        tries += 1
        cell = (rng.below(w), rng.below(h))
        group = set(mirrors(cell[0], cell[1], w, h))
        if group & near or group <= blocked:
            continue
        blocked |= group
        placed += 1
    return starts, blocked


def play(start):
    w, h, groups = options(start["options"])
    k = len(start["players"])
    starts, obstacles = layout(start["seed"], start["index"], w, h, k, groups)
    # grid[y][x]: '.' empty, '#' obstacle, 'a'..'d' trail of seat 0..3,
    # 'A'..'D' the head of seat 0..3, 'X' a head-on collision.
    grid = [["."] * w for _ in range(h)]
    for x, y in obstacles:
        grid[y][x] = "#"
    heads = list(starts)
    alive = [True] * k
    died = [None] * k  # the turn each player died on
    deaths = []
    for seat, (x, y) in enumerate(heads):
        grid[y][x] = "ABCD"[seat]

    def kill(seat, turn, cause):
        alive[seat] = False
        died[seat] = turn
        deaths.append({"seat": seat, "turn": turn, "cause": cause})

    for seat, player in enumerate(start["players"]):
        if "status" in player:
            kill(seat, 0, player["status"])

    # The legend of the referee's generic frame format (docs/judge-protocol.md).
    legend = {"#": "obstacle", "X": "head-on"}
    for s in range(k):
        legend["ABCD"[s]] = "seat %d" % s
        legend["abcd"[s]] = "seat %d's trail" % s

    def frame(turn, moves):
        out = [s for s in range(k) if not alive[s]]
        text = "turn %d" % turn
        if out:
            text += "; out: " + ", ".join("seat %d" % s for s in out)
        data = {
            "turn": turn,
            "grid": ["".join(row) for row in grid],
            "heads": [[x, y, int(alive[s])] for s, (x, y) in enumerate(heads)],
            "moves": moves,
            "text": text,
        }
        # The legend holds until a frame gives another: the first is enough.
        if turn == 0:
            data["legend"] = legend
        say({"type": "frame", "data": data})

    frame(0, [None] * k)
    living = [s for s in range(k) if alive[s]]
    cells = "".join("%d %d\n" % c for c in sorted(obstacles, key=lambda c: (c[1], c[0])))
    for seat in living:
        text = "%d %d %d %d\n%d\n%s" % (w, h, k, seat, len(obstacles), cells)
        say({"type": "send", "to": [seat], "text": text})
    turn = 0
    while sum(alive) > 1 and turn < w * h:
        turn += 1
        living = [s for s in range(k) if alive[s]]
        state = "".join("%d %d %d\n" % (x, y, int(alive[s])) for s, (x, y) in enumerate(heads))
        say({"type": "send", "to": living, "text": state})
        say({"type": "ask", "players": living})
        replies = hear()["replies"]
        moves = [None] * k
        targets = {}
        for seat, reply in zip(living, replies):
            if "text" not in reply:
                kill(seat, turn, reply["status"])
                continue
            move = reply["text"]
            moves[seat] = move
            if move not in STEPS:
                message = "game %d, turn %d: seat %d wrote %r, which is not one of N E S W" % (
                    start["index"], turn, seat, move[:100])
                say({"type": "eliminate", "player": seat, "status": "incorrect", "message": message})
                kill(seat, turn, "incorrect")
                continue
            dx, dy = STEPS[move]
            x, y = heads[seat]
            targets[seat] = (x + dx, y + dy)
        # Every moving head leaves a trail; then the moves land, all at
        # once. A dead cycle's head stays where it died.
        for seat in targets:
            x, y = heads[seat]
            grid[y][x] = "abcd"[seat]
        landing = {}
        for seat, cell in targets.items():
            landing.setdefault(cell, []).append(seat)
        out = {}
        for cell, seats in sorted(landing.items()):
            x, y = cell
            if not (0 <= x < w and 0 <= y < h):
                cause = "wall"
            elif grid[y][x] == "#":
                cause = "obstacle"
            elif grid[y][x] != ".":
                cause = "trail"
            elif len(seats) > 1:
                # They meet there: their heads are reported on that cell.
                cause = "head-on"
                grid[y][x] = "X"
                for seat in seats:
                    heads[seat] = cell
            else:
                cause = None
                grid[y][x] = "ABCD"[seats[0]]
            for seat in seats:
                if cause is None:
                    heads[seat] = cell
                else:
                    out[seat] = cause
                    kill(seat, turn, cause)
                    if cause != "head-on":
                        hx, hy = heads[seat]
                        grid[hy][hx] = "ABCD"[seat]
        # The dead are out by the rules: the harness stops them.
        for seat, cause in sorted(out.items()):
            message = "game %d, turn %d: out (%s)" % (start["index"], turn, cause)
            say({"type": "eliminate", "player": seat, "status": "ok", "message": message})
        frame(turn, moves)
    # Score: how many players died on an earlier turn than this one.
    last = turn + 1
    when = [d if d is not None else last for d in died]
    scores = [sum(1 for o in when if o < mine) for mine in when]
    ranking = [1 + sum(1 for o in scores if o > mine) for mine in scores]
    say({"type": "end", "scores": scores, "ranking": ranking, "summary": {
        "width": w, "height": h, "obstacles": len(obstacles), "turns": turn,
        "starts": [list(c) for c in starts], "deaths": deaths,
        "survivors": [s for s in range(k) if alive[s]],
    }})


def main():
    while True:
        message = hear()
        if message.get("type") != "start" or message.get("version") != 1:
            sys.exit("tron judge: expected a version 1 `start`, got %r" % message)
        play(message)


if __name__ == "__main__":
    main()
