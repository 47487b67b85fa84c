#!/usr/bin/env python3
"""Halves the candidates each time: ceil(log2 N) weighings, too many unless
the test group allows more (sample 1 needs 3 where 2 are allowed)."""


def main():
    n = int(input())
    lo, hi = 1, n
    while lo < hi:
        k = (hi - lo + 1) // 2
        coins = " ".join(str(c) for c in range(lo, lo + 2 * k))
        print(f"? {k} {coins}", flush=True)
        reply = input().strip()
        if reply == ">":
            hi = lo + k - 1
        elif reply == "<":
            lo, hi = lo + k, lo + 2 * k - 1
        else:
            lo = hi
    print(f"! {lo}", flush=True)


main()
