/* Splits the candidates in three: two equal pans and the rest aside; the
 * balance says which third holds the heavy coin. ceil(log3 N) weighings. */
#include <stdio.h>

int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 1;
    long lo = 1, hi = n;
    while (lo < hi) {
        long k = (hi - lo + 3) / 3;
        printf("? %ld", k);
        for (long i = 0; i < 2 * k; i++) printf(" %ld", lo + i);
        printf("\n");
        fflush(stdout);
        char r[2];
        if (scanf("%1s", r) != 1) return 1;
        if (r[0] == '>') {
            hi = lo + k - 1;
        } else if (r[0] == '<') {
            lo += k;
            hi = lo + k - 1;
        } else {
            lo += 2 * k;
        }
    }
    printf("! %ld\n", lo);
    fflush(stdout);
    return 0;
}
