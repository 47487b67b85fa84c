#!/usr/bin/env python3
"""A light cycle that claims territory: for each safe move it counts the
cells it would reach strictly before every other cycle (a Voronoi split by
breadth-first distances) and takes the move with the most, avoiding cells an
opponent could also enter this turn (a head-on kills both). Once walled off
alone, that count is its whole region, and ties go to the move that hugs
walls and trails, which fills a region with less waste. See ../README.md."""

import sys
from collections import deque

STEPS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}


def distances(sources, blocked, w, h):
    """Breadth-first distances from the cells of `sources` (at 0) over the
    free cells."""
    dist = {}
    queue = deque()
    for cell in sources:
        dist[cell] = 0
        queue.append(cell)
    while queue:
        x, y = cell = queue.popleft()
        d = dist[cell] + 1
        for dx, dy in STEPS.values():
            nxt = (x + dx, y + dy)
            if (0 <= nxt[0] < w and 0 <= nxt[1] < h and nxt not in blocked
                    and nxt not in dist):
                dist[nxt] = d
                queue.append(nxt)
    return dist


def free(cell, blocked, w, h):
    x, y = cell
    return 0 <= x < w and 0 <= y < h and cell not in blocked


def choose(me, heads, alive, blocked, w, h):
    x, y = heads[me]
    others = [heads[s] for s in range(len(heads)) if s != me and alive[s]]
    # Cells an opponent may enter this turn.
    reach = {(ox + dx, oy + dy) for ox, oy in others for dx, dy in STEPS.values()}
    best, best_key = "N", None
    for move, (dx, dy) in STEPS.items():
        cell = (x + dx, y + dy)
        if not free(cell, blocked, w, h):
            continue
        walls = blocked | {cell}
        mine = distances([cell], walls, w, h)
        theirs = distances(others, walls, w, h)
        # My distance counts from next turn; theirs from now.
        territory = sum(1 for c, d in mine.items() if d + 1 < theirs.get(c, 1 << 30))
        hugging = sum(1 for ddx, ddy in STEPS.values()
                      if not free((cell[0] + ddx, cell[1] + ddy), walls, w, h))
        if cell in reach:
            # A head-on is a draw at best: risk it only when all else is much worse.
            territory -= w * h // 4
        key = (territory, len(mine), hugging)
        if best_key is None or key > best_key:
            best, best_key = move, key
    return best


def main():
    line = sys.stdin.readline()
    if not line:
        return
    w, h, k, me = map(int, line.split())
    blocked = set()
    for _ in range(int(sys.stdin.readline())):
        x, y = map(int, sys.stdin.readline().split())
        blocked.add((x, y))
    while True:
        heads, alive = [], []
        for _ in range(k):
            line = sys.stdin.readline()
            if not line:
                return
            x, y, living = map(int, line.split())
            heads.append((x, y))
            alive.append(living == 1)
            blocked.add((x, y))
        sys.stdout.write(choose(me, heads, alive, blocked, w, h) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
