#!/usr/bin/env python3
"""Regenerates the generated arrays of this directory (deterministically).

Usage: python3 generate.py   (from this directory)
"""
import random
import string

LETTERS = string.ascii_uppercase


def write(name, rows):
    with open(name, "w") as f:
        for row in rows:
            f.write("".join(row) + "\n")


def uniform(rng, cols, rows):
    return [[rng.choice(LETTERS) for _ in range(cols)] for _ in range(rows)]


def skewed(rng, cols, rows):
    # Mostly cheap letters; a Z is rare (weight of letter i is 27 - i).
    weights = [27 - i for i in range(26)]
    return [rng.choices(LETTERS, weights, k=cols) for _ in range(rows)]


def clustered(rng, cols, rows, spots):
    # Cheap background with a few rich patches.
    grid = [["A"] * cols for _ in range(rows)]
    for _ in range(spots):
        c, r = rng.randrange(cols), rng.randrange(rows)
        for dr in range(-2, 3):
            for dc in range(-3, 4):
                rr, cc = (r + dr) % rows, (c + dc) % cols
                value = 25 - 3 * (abs(dr) + abs(dc))
                if value > 0 and LETTERS.index(grid[rr][cc]) < value:
                    grid[rr][cc] = LETTERS[value]
    return grid


rng = random.Random(2000_03_27)
write("1x1.txt", [["Q"]])
write("1x30.txt", uniform(rng, 1, 30))
write("30x1.txt", uniform(rng, 30, 1))
write("3x7.txt", uniform(rng, 3, 7))
write("40x20.txt", uniform(rng, 40, 20))
write("40x20-clusters.txt", clustered(rng, 40, 20, 6))
write("200x100.txt", skewed(rng, 200, 100))
