// Odd Coin's validator: N coins, one heavier (the case's input file says
// which); the program weighs groups of coins on a balance and names the
// heavy one within the allowed number of weighings.
//
//   validator INPUT ANSWER FEEDBACK_DIR [--max-queries Q]
//
// Without --max-queries the limit is the fewest weighings that always
// suffice: the smallest Q with 3^Q >= N.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <csignal>
#include <vector>

#include "judge.h"

namespace {

long long least_queries(long long n) {
    long long q = 0;
    for (long long reach = 1; reach < n; reach *= 3) q++;
    return q;
}

// Reads k coin numbers into `pan`, each 1..n, none twice in one weighing.
void read_pan(long long k, long long n, std::vector<char> &used, std::vector<long long> &pan) {
    for (long long i = 0; i < k; i++) {
        long long coin;
        if (std::scanf("%lld", &coin) != 1) judge::reject("weighing: expected %lld coin numbers", 2 * k);
        if (coin < 1 || coin > n) judge::reject("weighing: coin %lld is not between 1 and %lld", coin, n);
        if (used[coin]) judge::reject("weighing: coin %lld is on the scale twice", coin);
        used[coin] = 1;
        pan.push_back(coin);
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 4) judge::judge_error("usage: validator INPUT ANSWER FEEDBACK_DIR [--max-queries Q]");
    judge::feedback_dir = argv[3];
    // The program may be gone when the validator writes; the write's
    // failure is not the validator's.
    std::signal(SIGPIPE, SIG_IGN);
    long long n, heavy;
    std::FILE *input = std::fopen(argv[1], "r");
    if (!input || std::fscanf(input, "%lld %lld", &n, &heavy) != 2 || n < 1 || heavy < 1 || heavy > n)
        judge::judge_error("the input file must hold N and the heavy coin, 1 <= H <= N");
    std::fclose(input);
    long long max_queries = least_queries(n);
    for (int i = 4; i < argc; i++) {
        if (std::strcmp(argv[i], "--max-queries") == 0 && i + 1 < argc) {
            max_queries = std::atoll(argv[++i]);
        } else {
            judge::judge_error("unknown flag (expected --max-queries Q)");
        }
    }
    std::printf("%lld\n", n);
    std::fflush(stdout);
    long long queries = 0;
    std::vector<char> used(n + 1);
    for (;;) {
        char kind[2];
        if (std::scanf("%1s", kind) != 1) judge::reject("the program ended without naming the heavy coin");
        if (kind[0] == '!') {
            long long guess;
            if (std::scanf("%lld", &guess) != 1) judge::reject("`!` must be followed by a coin number");
            if (guess != heavy) judge::reject("coin %lld is not the heavy one (coin %lld is)", guess, heavy);
            judge::accept();
        }
        if (kind[0] != '?') judge::reject("expected `? K ...` or `! X`, got `%c`", kind[0]);
        if (++queries > max_queries) judge::reject("more than %lld weighings", max_queries);
        long long k;
        if (std::scanf("%lld", &k) != 1 || k < 1 || 2 * k > n)
            judge::reject("weighing %lld: K must be between 1 and N/2", queries);
        std::fill(used.begin(), used.end(), 0);
        std::vector<long long> left, right;
        read_pan(k, n, used, left);
        read_pan(k, n, used, right);
        bool on_left = false, on_right = false;
        for (long long c : left) on_left |= c == heavy;
        for (long long c : right) on_right |= c == heavy;
        // The pan that goes down: `<` when the right pan is heavier.
        std::printf("%s\n", on_left ? ">" : on_right ? "<" : "=");
        std::fflush(stdout);
    }
}
