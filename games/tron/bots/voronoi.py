#!/usr/bin/env python3
"""A light cycle that claims territory (a Voronoi split by breadth-first
distances: the cells it reaches strictly before any other cycle).

Against a single opponent it can still reach, it looks one turn ahead: for
each of its safe moves and each answer of the opponent (moving at the same
time; a head-on counts as nearly a loss), the cells each reaches first, and takes
the move whose worst case is best. With more opponents it takes the safe
move that claims the most cells, avoiding cells an opponent could also enter
this turn. Once walled off alone, that count is its whole region, and ties
go to the move that hugs walls and trails, which wastes fewer cells. See
../README.md."""

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


def split(mine, theirs, blocked, w, h):
    """Cells I reach strictly first minus cells the opponent does, both
    heads having moved."""
    walls = blocked | {mine, theirs}
    a = distances([mine], walls, w, h)
    b = distances([theirs], walls, w, h)
    far = 1 << 30
    cells = set(a) | set(b)
    return sum((a.get(c, far) < b.get(c, far)) - (b.get(c, far) < a.get(c, far)) for c in cells)


def duel(me, him, blocked, w, h):
    """Against one opponent still in touch: the move whose worst case over
    its answers (moving at the same time) leaves the best split."""
    def moves(head):
        return [(m, (head[0] + dx, head[1] + dy)) for m, (dx, dy) in STEPS.items()
                if free((head[0] + dx, head[1] + dy), blocked, w, h)]

    mine, his = moves(me), moves(him)
    best, best_value = "N", None
    for move, cell in mine:
        if not his:
            return move
        worst = None
        for _, other in his:
            # A head-on is a draw at best: worth risking only to escape a loss.
            value = -(w * h) // 2 if other == cell else split(cell, other, blocked, w, h)
            if worst is None or value < worst:
                worst = value
        if best_value is None or worst > best_value:
            best, best_value = move, worst
    return best


def choose(me, heads, alive, blocked, w, h):
    x, y = heads[me]
    others = [heads[s] for s in range(len(heads)) if s != me and alive[s]]
    if len(others) == 1 and others[0] in distances([heads[me]], blocked - {others[0]}, w, h):
        return duel(heads[me], others[0], blocked, w, h)
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
