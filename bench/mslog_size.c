/* Memory of the master's ms_* log: bytes held for one worker after N
 * iterations of two work patterns, for several payload sizes, and the
 * master's resident memory. The log must stay the size of the newest
 * instance of each cycle, whatever N is; FT_ANY_TAG receives accumulate.
 *   fig4.6:    a (int, tag 1); then b (P bytes, tag 2) and c (8 bytes, tag 2)
 *   tasks:     problem (P bytes) once; then per task a start point (88
 *              bytes) and its result (104 bytes), alternating tags 10/11
 *              (examples/multistart's pattern)
 *   any-tag:   one FT_ANY_TAG receive (8 bytes) per iteration
 * Each pattern runs with a worker of its own, so each log holds only it.
 * Run: ftmwrun -w 5 mslog_size [--quick]
 * Prints: "pattern payload_bytes iterations log_bytes" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftmw.h"

enum { STOP = 99 };

static void worker(void) {
  size_t cap = 1 << 20;
  char *buf = malloc(cap);
  FT_Status st;
  double c = 1;
  for (;;) {
    if (ft_recv(buf, (int)cap, FT_BYTE, 0, FT_ANY_TAG, &st) == 0 && ft_error() != FT_SUCCESS)
      break;
    if (st.tag == STOP)
      break;
    if (st.tag == 2 || st.tag == 10 || st.tag == 11 || st.tag == 5)
      ft_send(&c, 1, FT_DOUBLE, 0, st.tag);
  }
  free(buf);
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof(line), f))
    if (sscanf(line, "VmRSS: %ld", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return kib;
}

/* Runs iterations of pattern, reporting the log at each checkpoint. */
static void run(int w, const char *pattern, size_t payload, const long *checkpoints,
                int ncp) {
  char *p = calloc(1, payload ? payload : 1);
  double start[11] = {0}, result[13];
  int a = 1;
  long it = 0;
  FT_Status st;
  if (strcmp(pattern, "tasks") == 0)
    ms_send(p, (int)payload, FT_BYTE, w, 1);
  for (int k = 0; k < ncp; k++) {
    for (; it < checkpoints[k]; it++) {
      if (strcmp(pattern, "fig4.6") == 0) {
        ms_send(&a, 1, FT_INT, w, 1);
        ms_send(p, (int)payload, FT_BYTE, w, 2);
        ms_recv(result, 1, FT_DOUBLE, w, 2, &st);
      } else if (strcmp(pattern, "tasks") == 0) {
        int tag = 10 + (int)(it & 1);
        ms_send(start, 11, FT_DOUBLE, w, tag);
        ms_irecv(result, 13, FT_DOUBLE, w, tag);
        ft_wait(w);
      } else {
        ms_send(&a, 1, FT_INT, w, 5);
        ms_recv(result, 1, FT_DOUBLE, w, FT_ANY_TAG, &st);
      }
    }
    printf("%-8s %9zu %7ld %10zu   (master RSS %ld KiB)\n", pattern, payload, it,
           ms_log_size(w), rss_kib());
  }
  free(p);
}

int main(int argc, char **argv) {
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (rank != 0) {
    worker();
  } else {
    long cps[] = {1, 10, 100, 1000, 10000};
    int ncp = quick ? 3 : 5;
    printf("%-8s %9s %7s %10s\n", "pattern", "payload", "iters", "log_bytes");
    if (W < 5) {
      fprintf(stderr, "mslog_size: needs 5 workers (ftmwrun -w 5)\n");
      ft_finalize();
      return 2;
    }
    size_t payloads[] = {8, 1024, 65536};
    for (int i = 0; i < 3; i++)
      run(1 + i, "fig4.6", payloads[i], cps, ncp);
    run(4, "tasks", 1024, cps, ncp);
    run(5, "any-tag", 8, cps, ncp);
    char stop = 0;
    for (int w = 1; w <= W; w++)
      ft_send(&stop, 1, FT_BYTE, w, STOP);
  }
  ft_finalize();
  return 0;
}
