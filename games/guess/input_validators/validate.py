#!/usr/bin/env python3
"""Input validator of the guessing game, run as `validate.py < INPUT`: the
input is one line `N SECRET`, integers without leading zeros, with
1 <= SECRET <= N <= 10^9. Exit 42 accepts it; a failed assertion (exit
status 1, its message on standard error) rejects it."""

import re
import sys

text = sys.stdin.read()
match = re.fullmatch(r"([1-9][0-9]*) ([1-9][0-9]*)\n", text)
assert match, f"not one line `N SECRET`: {text!r}"
n, secret = map(int, match.groups())
assert n <= 10**9, f"N = {n} is over 10^9"
assert secret <= n, f"the secret {secret} is over N = {n}"
sys.exit(42)
