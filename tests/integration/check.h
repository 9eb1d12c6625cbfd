/* The checks of the job test programs (job_api.c, job_calls.c): a failed
 * check prints "CHECK FAILED" with where and why, and counts in
 * failures (the program's exit status). */
#ifndef FTMW_TEST_CHECK_H
#define FTMW_TEST_CHECK_H

#include <stdio.h>

#include "ftmw.h"

static int failures;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "CHECK FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* A call that must return want_ret with ft_error() == code. */
static inline void expect_err(int ret, int want_ret, int code,
                              const char *what) {
  CHECK(ret == want_ret && ft_error() == code,
        "%s: returned %d error %s, want %d %s", what, ret,
        ft_errname(ft_error()), want_ret, ft_errname(code));
}

/* The end of a job test's main(): finalizes, the master prints the
 * mode's verdict; returns the exit status. */
static inline int finish(int rank, const char *mode) {
  CHECK(ft_finalize() == 1, "finalize");
  if (rank == 0)
    printf("%s: %s\n", mode, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}

#endif
