#!/usr/bin/env python3
"""Reads N, then indexes past the end of its list: an IndexError, exit 1."""

n = int(input())
coins = [0] * n
print(coins[n], flush=True)
