#!/usr/bin/env python3
"""Binary search: at most ceil(log2(N + 1)) guesses."""

n = int(input())
low, high = 1, n
while True:
    guess = (low + high) // 2
    print(guess, flush=True)
    answer = input().strip()
    if answer == "correct":
        break
    if answer == "lower":
        high = guess - 1
    else:
        low = guess + 1
