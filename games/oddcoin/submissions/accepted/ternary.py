#!/usr/bin/env python3
"""Three-way split: two equal pans and the rest aside. ceil(log3 N) weighings."""


def main():
    n = int(input())
    lo, hi = 1, n
    while lo < hi:
        k = (hi - lo + 3) // 3
        coins = " ".join(str(c) for c in range(lo, lo + 2 * k))
        print(f"? {k} {coins}", flush=True)
        reply = input().strip()
        if reply == ">":
            hi = lo + k - 1
        elif reply == "<":
            lo, hi = lo + k, lo + 2 * k - 1
        else:
            lo += 2 * k
    print(f"! {lo}", flush=True)


main()
