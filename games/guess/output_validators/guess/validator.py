#!/usr/bin/env python3
"""Interactive validator of the guessing game.

Called as `validator.py INPUT ANSWER FEEDBACK_DIR`, with the program's
output on its standard input and its own output going to the program.
INPUT holds `N SECRET`. It sends N; the program guesses integers in 1..N,
one per line; it answers each with `lower` (the secret is lower), `higher`
or `correct`. At most ceil(log2(N)) + 1 guesses are allowed, and nothing
may follow the correct guess. Exit 42: accepted; 43: wrong answer; the
reason goes to FEEDBACK_DIR/judgemessage.txt.
"""

import os
import sys


def main():
    input_file, _answer_file, feedback = sys.argv[1:4]
    with open(input_file) as f:
        n, secret = map(int, f.read().split())
    # ceil(log2(n)) + 1, in integers.
    limit = (n - 1).bit_length() + 1

    def verdict(code, message):
        with open(os.path.join(feedback, "judgemessage.txt"), "w") as f:
            f.write(message + "\n")
        sys.exit(code)

    def say(text):
        try:
            print(text, flush=True)
        except BrokenPipeError:
            pass

    say(n)
    for guess_number in range(1, limit + 1):
        line = sys.stdin.readline()
        if not line:
            verdict(43, f"the output ended after {guess_number - 1} guesses")
        text = line.strip()
        try:
            guess = int(text)
        except ValueError:
            verdict(43, f"guess {guess_number}: not an integer: {text[:50]!r}")
        if not 1 <= guess <= n:
            verdict(43, f"guess {guess_number}: {guess} is not in 1..{n}")
        if guess == secret:
            say("correct")
            rest = sys.stdin.read()
            if rest.strip():
                verdict(43, f"output after the correct guess: {rest.strip()[:50]!r}")
            verdict(42, f"found {secret} in {guess_number} guesses (at most {limit})")
        say("lower" if secret < guess else "higher")
    verdict(43, f"no correct guess within {limit} guesses (secret {secret})")


if __name__ == "__main__":
    main()
