#!/usr/bin/env python3
"""A light cycle that picks a random safe move (one that does not hit a wall,
an obstacle or a trail), or N when none is safe. Its generator is seeded
with the game's first lines (grid, seat, start cells), so that a run with the
same seed replays. See ../README.md."""

import random
import sys

STEPS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}


def main():
    line = sys.stdin.readline()
    if not line:
        return
    w, h, k, me = map(int, line.split())
    seen = line
    blocked = set()
    rng = None
    for _ in range(int(sys.stdin.readline())):
        x, y = map(int, sys.stdin.readline().split())
        blocked.add((x, y))
    while True:
        heads = []
        for _ in range(k):
            line = sys.stdin.readline()
            if not line:
                return
            x, y, alive = map(int, line.split())
            heads.append((x, y))
            blocked.add((x, y))
            if rng is None:
                seen += line
        if rng is None:
            rng = random.Random(seen)
        x, y = heads[me]
        safe = [m for m, (dx, dy) in STEPS.items()
                if 0 <= x + dx < w and 0 <= y + dy < h and (x + dx, y + dy) not in blocked]
        sys.stdout.write((rng.choice(safe) if safe else "N") + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
