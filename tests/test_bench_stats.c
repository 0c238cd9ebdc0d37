/*
** test_bench_stats.c — the box-plot figures of the benchmark against values
** worked out by hand (quantile p at position p*(n-1) of the sorted list,
** interpolated linearly). Needs no OpenCL device.
*/
#include <math.h>
#include <string.h>
#include "planner/bench.h"
#include "testutil.h"

/* Checks the box of `v` against hand-computed min, q1, median, q3, max. */
static void expect(const char *what, const double *v, int n, double min, double q1, double median, double q3,
                   double max)
{
    double copy[16];
    memcpy(copy, v, (size_t)n * sizeof *v);
    db_box b;
    db_status st = db_box_stats(v, n, &b);
    CHECK(st == DB_OK, "%s: %s", what, db_error_message());
    if (st != DB_OK)
        return;
    CHECK(b.n == n, "%s: n %d, expected %d", what, b.n, n);
    CHECK(fabs(b.min - min) < 1e-12 && fabs(b.max - max) < 1e-12, "%s: min %g max %g, expected %g %g", what, b.min,
          b.max, min, max);
    CHECK(fabs(b.q1 - q1) < 1e-12, "%s: q1 %g, expected %g", what, b.q1, q1);
    CHECK(fabs(b.median - median) < 1e-12, "%s: median %g, expected %g", what, b.median, median);
    CHECK(fabs(b.q3 - q3) < 1e-12, "%s: q3 %g, expected %g", what, b.q3, q3);
    CHECK(!memcmp(copy, v, (size_t)n * sizeof *v), "%s: the input was modified", what);
}

int main(void)
{
    /* One value: every figure is that value. */
    expect("n=1", (const double[]){5}, 1, 5, 5, 5, 5, 5);
    /* n=2, {1,3}: q1 at 0.25 -> 1.5, median at 0.5 -> 2, q3 at 0.75 -> 2.5. */
    expect("n=2", (const double[]){3, 1}, 2, 1, 1.5, 2, 2.5, 3);
    /* Odd n=5, sorted {1,3,5,7,9}: positions 1, 2, 3 fall on values. */
    expect("n=5", (const double[]){7, 1, 3, 9, 5}, 5, 1, 3, 5, 7, 9);
    /* Even n=4, sorted {1,2,3,4}: q1 at 0.75 -> 1.75, median at 1.5 -> 2.5, q3 at 2.25 -> 3.25. */
    expect("n=4", (const double[]){4, 1, 3, 2}, 4, 1, 1.75, 2.5, 3.25, 4);
    /* Even n=6, sorted {2,4,6,8,10,12}: q1 at 1.25 -> 4.5, median at 2.5 -> 7, q3 at 3.75 -> 8 + 0.75 * 2 = 9.5. */
    expect("n=6", (const double[]){10, 2, 8, 4, 6, 12}, 6, 2, 4.5, 7, 9.5, 12);
    /* Odd n=7 with ties, sorted {0,1,1,1,2,8,9}: q1 at 1.5 -> 1, median at 3 -> 1, q3 at 4.5 -> 5. */
    expect("n=7 ties", (const double[]){1, 9, 0, 1, 8, 2, 1}, 7, 0, 1, 1, 5, 9);
    /* Negative values, sorted {-1,-1,0}: q3 at 1.5 -> -0.5. */
    expect("negative", (const double[]){0, -1, -1}, 3, -1, -1, -1, -0.5, 0);

    db_box b;
    CHECK(db_box_stats((const double[]){1}, 0, &b) == DB_ERR_USAGE, "n=0 accepted");
    CHECK(db_box_stats((const double[]){1, NAN, 2}, 3, &b) == DB_ERR_USAGE, "NaN accepted");
    if (test_failures)
        return 1;
    printf("bench_stats: ok\n");
    return 0;
}
