"""Even Steven, judged over the referee's JSON Lines protocol (version 1).

The same game as `referee dealer`: the original dealer's shuffle (Park-Miller
"minimal standard" generator, forward Fisher-Yates over a value-major deck),
the same messages to the player, the same verdicts. Game i's hand size N and
shuffle seed come from the run's seed and i (see `deal_for`), so a run's
seed replays it. Standard library only. See docs/judge-protocol.md.
"""

import json
import sys

VALUES = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = "cdhs"
MASK = (1 << 64) - 1


def splitmix64(state):
    z = state & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def deal_for(seed, index):
    """N in 1..13 and a shuffle seed in 1..2147483646, from the run's seed
    and the game's index: z = splitmix64(seed + index * 0x9E3779B97F4A7C15),
    N = 1 + z mod 13, shuffle seed = 1 + (z >> 32) mod 2147483646."""
    z = splitmix64(seed + index * 0x9E3779B97F4A7C15)
    return 1 + z % 13, 1 + (z >> 32) % 2147483646


def shuffled(seed):
    deck = [VALUES[i // 4] + SUITS[i % 4] for i in range(52)]
    state = seed
    for i in range(51):
        state = 16807 * state % 2147483647
        j = i + state % (52 - i)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def value(card):
    return VALUES.index(card[:-1]) + 2


def is_card(text):
    return len(text) >= 2 and text[:-1] in VALUES and text[-1] in SUITS


def winnable(hand, deal):
    h = sorted(value(c) for c in hand)
    d = sorted(value(c) for c in deal)
    return all(a >= b for a, b in zip(h, d))


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hear():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def play(start):
    n, seed = deal_for(start["seed"], start["index"])
    deck = shuffled(seed)
    hand, deal = deck[:n], deck[n:2 * n]
    can_win = winnable(hand, deal)
    summary = {"n": n, "seed": seed, "hand": hand, "deal": deal, "winnable": can_win}
    player = start["players"][0]

    def end(score, outcome):
        summary["outcome"] = outcome
        say({"type": "end", "scores": [score], "summary": summary})

    if "status" in player:
        return end(0, player["status"])
    say({"type": "frame", "data": {"hand": hand, "deal": deal}})
    say({"type": "send", "to": [0], "text": "%d %s\n%s\n" % (n, " ".join(hand), deal[0])})
    left = list(hand)
    played = {}
    for move, dealt in enumerate(deal, start=1):
        say({"type": "ask", "players": [0]})
        reply = hear()["replies"][0]
        if "text" not in reply:
            return end(0, reply["status"])
        card = reply["text"]
        say({"type": "frame", "data": {"dealt": dealt, "played": card, "micros": reply["micros"]}})
        fault = None
        if not is_card(card):
            fault = "the player wrote %r, which is not a card" % card[:100]
        elif card in played:
            fault = "the player played %s again; it was already played on move %d" % (card, played[card])
        elif card not in left:
            fault = "the player played %s, which is not in its hand (it holds %s)" % (card, " ".join(left))
        if fault:
            message = "game %d, move %d (dealt %s): %s" % (start["index"], move, dealt, fault)
            say({"type": "eliminate", "player": 0, "status": "incorrect", "message": message})
            return end(0, "incorrect")
        played[card] = move
        left.remove(card)
        if value(card) < value(dealt):
            say({"type": "send", "to": [0], "text": "YOU LOSE\n"})
            return end(0, "lose_unnecessarily" if can_win else "lose_necessarily")
        if move < n:
            say({"type": "send", "to": [0], "text": deal[move] + "\n"})
    say({"type": "send", "to": [0], "text": "YOU WIN\n"})
    return end(1, "win")


def main():
    while True:
        message = hear()
        if message.get("type") != "start" or message.get("version") != 1:
            sys.exit("evensteven judge: expected a version 1 `start`, got %r" % message)
        play(message)


if __name__ == "__main__":
    main()
