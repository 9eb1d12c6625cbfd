/* A port that renamed its MPI calls to ft_* and looks at none of their
 * results, as ports were found to do: under a failure it would print a
 * stale buffer as a result, or miss one and exit 0. FT_ERRORS=checked
 * (the default) stops it instead (ftmw/calls.h, docs/api.md#errors).
 *
 * Usage: ignore_failure farm|static|static-heeded|static-logged
 *   farm           tasks to whoever answered (FT_ANY_SOURCE), workers
 *                  loop until a stop message;
 *   static         task w to worker w, results taken in rank order, one
 *                  task per worker (no call names a worker afterwards);
 *   static-heeded  the same, but a result that does not come is checked
 *                  (ft_test) and left out: a program that goes on without
 *                  a worker, knowingly;
 *   static-logged  the same, the failure printed by the primary only
 *                  (ft_error under ft_is_primary, as output is with
 *                  master replicas).
 * The master prints "results N sum S". */
#include <ftmw.h>
#include <stdio.h>
#include <string.h>

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3, TASKS = 40 };

static void worker(int loop) {
  int task, res;
  FT_Status st;
  do {
    ft_recv(&task, 1, FT_INT, 0, FT_ANY_TAG, &st);
    if (st.tag == TAG_STOP)
      break;
    res = task * task;
    ft_send(&res, 1, FT_INT, 0, TAG_RESULT);
  } while (loop);
}

int main(int argc, char **argv) {
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  const char *shape = argc > 1 ? argv[1] : "farm";
  int farm = strcmp(shape, "farm") == 0;
  int heeded = strcmp(shape, "static-heeded") == 0;
  int logged = strcmp(shape, "static-logged") == 0;
  if (rank != 0) {
    worker(farm);
    ft_finalize();
    return 0;
  }
  long sum = 0;
  int got = 0, res = 0;
  FT_Status st;
  if (farm) {
    int next = 1;
    for (int w = 1; w <= W; w++, next++)
      ft_send(&next, 1, FT_INT, w, TAG_TASK);
    while (got < TASKS) {
      ft_recv(&res, 1, FT_INT, FT_ANY_SOURCE, TAG_RESULT, &st);
      sum += res;
      got++;
      if (next <= TASKS) {
        ft_send(&next, 1, FT_INT, st.source, TAG_TASK);
        next++;
      }
    }
    int stop = 0;
    for (int w = 1; w <= W; w++)
      ft_send(&stop, 1, FT_INT, w, TAG_STOP);
  } else {
    for (int w = 1; w <= W; w++)
      ft_send(&w, 1, FT_INT, w, TAG_TASK);
    for (int w = 1; w <= W; w++) {
      if (!ft_recv(&res, 1, FT_INT, w, TAG_RESULT, &st)) {
        if (heeded && ft_test(w))
          continue;
        if (logged) {
          if (ft_is_primary())
            fprintf(stderr, "worker %d: %s\n", w, ft_strerror(ft_error()));
          continue;
        }
      }
      sum += res;
      got++;
    }
  }
  if (ft_is_primary())
    printf("results %d sum %ld\n", got, sum);
  ft_finalize();
  return 0;
}
