/* The same kill for every task-farm system compared in bench/run (FTMW,
 * Work Queue, Dask): waits until the process running the marked task has
 * written its pid to FILE, sleeps DELAY_MS more (the task is then under
 * way), sends it SIGKILL, and prints "killed_mono T", T the CLOCK_MONOTONIC
 * time of the kill in seconds. The farm prints "mark_result_mono T" when
 * the marked task's result reaches its master; the difference is the
 * kill-to-result time, whatever the system does in between (detection,
 * restore, re-dispatch, the task run again).
 * Run: kill_when FILE DELAY_MS [TIMEOUT_S]   (default timeout 60 s) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int main(int argc, char **argv) {
  char *end;
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "Usage: kill_when FILE DELAY_MS [TIMEOUT_S]\n");
    return 2;
  }
  long delay = strtol(argv[2], &end, 10);
  if (*end || delay < 0) {
    fprintf(stderr, "kill_when: DELAY_MS must be a number of milliseconds >= 0, not '%s'\n",
            argv[2]);
    return 2;
  }
  double limit = argc == 4 ? strtod(argv[3], &end) : 60;
  if (argc == 4 && (*end || limit <= 0)) {
    fprintf(stderr, "kill_when: TIMEOUT_S must be a positive number, not '%s'\n", argv[3]);
    return 2;
  }
  double t0 = bench_now();
  long pid = 0;
  while (pid <= 0) {
    FILE *f = fopen(argv[1], "r");
    if (f) {
      if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
      fclose(f);
    }
    if (pid <= 0) {
      if (bench_now() - t0 > limit) {
        fprintf(stderr, "kill_when: no pid in %s after %.0f s\n", argv[1], limit);
        return 1;
      }
      sleep_ms(1);
    }
  }
  sleep_ms(delay);
  if (kill((pid_t)pid, SIGKILL) != 0) {
    fprintf(stderr, "kill_when: kill %ld: %s\n", pid, strerror(errno));
    return 1;
  }
  printf("killed_mono %.6f\nkilled_pid %ld\n", bench_now(), pid);
  return 0;
}
