// The interactive validator contract (Kattis/DOMjudge): exit 42 accepts,
// exit 43 rejects with a reason in FEEDBACK_DIR/judgemessage.txt.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace judge {

inline std::string feedback_dir;

inline const int ACCEPT = 42;
inline const int REJECT = 43;

[[noreturn]] inline void accept() {
    std::exit(ACCEPT);
}

// Rejects, saying why in judgemessage.txt (and on stderr, for a person
// running the validator by hand).
[[noreturn]] inline void reject(const char *format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    std::string path = feedback_dir + "/judgemessage.txt";
    if (std::FILE *file = std::fopen(path.c_str(), "w")) {
        std::fprintf(file, "%s\n", message);
        std::fclose(file);
    }
    std::fprintf(stderr, "rejected: %s\n", message);
    std::exit(REJECT);
}

// Any other exit status is a judge error: the package itself is wrong.
[[noreturn]] inline void judge_error(const char *what) {
    std::fprintf(stderr, "judge error: %s\n", what);
    std::exit(1);
}

}  // namespace judge
