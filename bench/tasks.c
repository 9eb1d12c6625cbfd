/* A farm of simulated tasks, built twice from this one source: over FTMW
 * (tasks_ft) and over plain MPI (tasks_mpi, -DBENCH_PLAIN_MPI), so that the
 * two differ only in the calls that move the messages.
 *
 * The master hands one task to each worker, then the next task to
 * whichever worker answers first (an any-source receive), until the tasks
 * are done, and stops the workers. A task is its duration in microseconds
 * (a long): the worker sleeps that long, as the thesis's tasks did, and
 * answers with it. Two uses:
 *   fixed work (thesis figure 5.1): -n N -u US, N tasks of US microseconds;
 *   dispatch rate: -T S -u 0, empty tasks handed out for S seconds (each
 *   master reads its own clock: not with replicas, ftmwrun -m; use -n).
 * With -k K the master keeps K tasks in flight per worker, and both sides
 * send without waiting (ft_isend; a small MPI_Send does not wait anyway).
 * The master prints "time X s" (first task sent to last result in),
 * "tasks N", "tasks_per_s R" and "master_rss_kb K" (its peak resident
 * memory, VmHWM).
 * Run: ftmwrun -w W tasks_ft [-n N | -T S] [-u US] [-k K]
 *      mpiexec -n W+1 tasks_mpi [-n N | -T S] [-u US] [-k K] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "twin.h"

enum { TAG_TASK = 1, TAG_RESULT, TAG_STOP };

static int worker(int K) {
  long us;
  int from, tag = 0;
  while (twin_recv(&us, sizeof(us), 0, TWIN_ANY, &from, &tag) && tag == TAG_TASK) {
    if (us > 0) {
      struct timespec ts = {us / 1000000, us % 1000000 * 1000};
      nanosleep(&ts, NULL);
    }
    if (!(K > 1 ? twin_post : twin_send)(&us, sizeof(us), 0, TAG_RESULT))
      return 1;
  }
  return tag == TAG_STOP ? 0 : 1;
}

static long peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof(line), f))
    if (strncmp(line, "VmHWM:", 6) == 0)
      kb = atol(line + 6);
  if (f)
    fclose(f);
  return kb;
}

/* Hands out tasks of us microseconds: n of them, or (n < 0) as many as
 * it can for secs seconds. */
static int master(int W, long n, double secs, long us, int K) {
  int (*send)(const void *, int, int, int) = K > 1 ? twin_post : twin_send;
  long sent = 0, done = 0;
  int from, tag;
  long x;
  double t0 = bench_now(), t = t0;
  for (int k = 0; k < K; k++)
    for (int w = 1; w <= W && (n < 0 || sent < n); w++, sent++)
      if (!send(&us, sizeof(us), w, TAG_TASK))
        return 1;
  while (done < sent) {
    if (!twin_recv(&x, sizeof(x), TWIN_ANY, TWIN_ANY, &from, &tag) || tag != TAG_RESULT)
      return 1;
    done++;
    t = bench_now();
    if (n >= 0 ? sent < n : t - t0 < secs) {
      if (!send(&us, sizeof(us), from, TAG_TASK))
        return 1;
      sent++;
    }
  }
  for (int w = 1; w <= W; w++)
    if (!twin_send(&us, sizeof(us), w, TAG_STOP))
      return 1;
  printf("time %.4f s\ntasks %ld\ntasks_per_s %.1f\nmaster_rss_kb %ld\n", t - t0, done,
         done / (t - t0), peak_rss_kb());
  return 0;
}

int main(int argc, char **argv) {
  int rank, W, rc;
  if (twin_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  long n = -1, us = 0, K = 1;
  double secs = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-n") == 0)
      n = atol(argv[i + 1]);
    else if (strcmp(argv[i], "-T") == 0)
      secs = atof(argv[i + 1]);
    else if (strcmp(argv[i], "-u") == 0)
      us = atol(argv[i + 1]);
    else if (strcmp(argv[i], "-k") == 0)
      K = atol(argv[i + 1]);
  }
  if ((n < 0) == (secs < 0) || n == 0 || secs == 0 || us < 0 || W < 1 || K < 1 ||
      K > 1024) {
    if (rank == 0)
      fprintf(stderr, "usage: tasks (-n N | -T SECONDS) [-u MICROSECONDS] [-k 1..1024],"
                      " with workers\n");
    twin_finalize();
    return 2;
  }
  rc = rank == 0 ? master(W, n, secs, us, (int)K) : worker((int)K);
  if (rc)
    fprintf(stderr, "tasks: rank %d: %s\n", rank, twin_failure());
  twin_finalize();
  return rc;
}
