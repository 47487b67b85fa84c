/* Reads N, then spins forever without ever weighing: burns CPU until the
 * time limit kills it. */
#include <stdio.h>

int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 1;
    volatile unsigned long spins = 0;
    for (;;) spins++;
}
