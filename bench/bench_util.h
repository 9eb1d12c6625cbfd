/* Small helpers shared by the benchmark programs: a monotonic clock, the
 * median of samples, and the message sizes measured. */
#ifndef FTMW_BENCH_UTIL_H
#define FTMW_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v and returns its median. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), bench_cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints "LABEL median min max" of the n samples in v (sorts v). */
static inline void bench_report(const char *label, double *v, int n) {
  double med = bench_median(v, n);
  printf("%s %.3f %.3f %.3f\n", label, med, v[0], v[n - 1]);
}

static const size_t bench_sizes[] = {8, 1024, 64 * 1024, 1024 * 1024, 64 * 1024 * 1024};
#define BENCH_NSIZES (sizeof(bench_sizes) / sizeof(bench_sizes[0]))

/* Round trips per size: many for small messages, few for 64 MiB. */
static inline int bench_iters(size_t size, int quick) {
  int n = size <= 1024 ? 20000 : size <= 65536 ? 5000 : size <= (1 << 20) ? 500 : 10;
  return quick ? (n / 10 > 3 ? n / 10 : 3) : n;
}

#endif
