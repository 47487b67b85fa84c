#!/usr/bin/env python3
"""Guesses 1, 2, 3, ...: right, but too many guesses unless the secret is small."""

import sys

n = int(input())
for guess in range(1, n + 1):
    print(guess, flush=True)
    answer = sys.stdin.readline().strip()
    if answer != "higher":
        break
