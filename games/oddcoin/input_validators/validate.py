#!/usr/bin/env python3
"""Input validator of Odd Coin, run as `validate.py < INPUT`: the input is
one line `N H`, integers without leading zeros, with 1 <= H <= N <= 10^4
(H the heavy coin). Exit 42 accepts it; a failed assertion (exit status 1,
its message on standard error) rejects it."""

import re
import sys

text = sys.stdin.read()
match = re.fullmatch(r"([1-9][0-9]*) ([1-9][0-9]*)\n", text)
assert match, f"not one line `N H`: {text!r}"
n, heavy = map(int, match.groups())
assert n <= 10**4, f"N = {n} is over 10^4"
assert heavy <= n, f"the heavy coin {heavy} is over N = {n}"
sys.exit(42)
