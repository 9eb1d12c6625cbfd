/* Failure detection and restore times, against a bare MPI_Comm_spawn.
 *
 * Worker 1 reports its pid and waits in ft_recv. K times, the master kills
 * it with SIGKILL and times (a) kill to the failure being reported by
 * ft_recv and (b) ft_restore. Then H times it stops it with SIGSTOP, a
 * hung process, and times (c) stop to the failure being reported, which
 * FT_TIMEOUT_MS bounds, before killing and restoring it. In spawn mode it
 * then times K bare MPI_Comm_spawn calls of a minimal MPI program
 * (bare_child) up to its first message, the same point a restore waits
 * for. Prints one "name median min max" line per measure (milliseconds),
 * the hang bound FT_TIMEOUT_MS + FT_HEARTBEAT_MS, and the ratio
 * restore/bare.
 * Usage: ftmwrun -w 1 failover [K [H]]         (spawn mode)
 *        ftmwrun -w 1 -s K+H failover [K [H]]  (static mode: spares) */
#include <ftmw.h>
#include <libgen.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "config.h" /* the library's defaults, for the hang bound */

enum { TAG_PID = 1, TAG_STOP = 2 };

static int worker(void) {
  int pid = (int)getpid(), x;
  FT_Status st;
  if (ft_send(&pid, 1, FT_INT, 0, TAG_PID) != 1)
    return 1;
  ft_recv(&x, 1, FT_INT, 0, FT_ANY_TAG, &st); /* killed here, or told to stop */
  return 0;
}

static int bare_spawns(int k, double *ms) {
  char exe[512];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
  if (n <= 0)
    return -1;
  exe[n] = '\0';
  char child[600];
  snprintf(child, sizeof(child), "%s/bare_child", dirname(exe));
  for (int i = 0; i < k; i++) {
    MPI_Comm inter;
    int err, x;
    double t0 = bench_now();
    if (MPI_Comm_spawn(child, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, &err) != MPI_SUCCESS ||
        MPI_Recv(&x, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return -1;
    ms[i] = (bench_now() - t0) * 1e3;
    MPI_Comm_disconnect(&inter);
    /* As ft_restore does (ftmw/restore.c, wait_reaped): spawning while
     * mpirun handles a child's exit can hang Open MPI 4.1 for ever. */
    for (int t = 0; t < 500 && kill((pid_t)x, 0) == 0; t++)
      usleep(1000);
  }
  return 0;
}

int main(int argc, char **argv) {
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  if (rank != 0) {
    int rc = worker();
    ft_finalize();
    return rc;
  }
  int k = argc > 1 ? atoi(argv[1]) : 10, h = argc > 2 ? atoi(argv[2]) : 0;
  if (k < 1 || k > 1000)
    k = 10;
  if (h < 0 || h > 1000)
    h = 0;
  double *detect = malloc(k * sizeof(double)), *restore = malloc(k * sizeof(double)),
         *bare = malloc(k * sizeof(double)), *hang = malloc((h + 1) * sizeof(double));
  FT_Status st;
  int pid, rc = 0;
  for (int i = 0; i < k + h && rc == 0; i++) {
    if (ft_recv(&pid, 1, FT_INT, 1, TAG_PID, &st) != 1) {
      rc = 1;
      break;
    }
    usleep(20000); /* let the worker block in ft_recv, as a busy job would */
    double t0 = bench_now();
    kill(pid, i < k ? SIGKILL : SIGSTOP);
    int got = ft_recv(&pid, 1, FT_INT, 1, TAG_PID, &st);
    double ms = (bench_now() - t0) * 1e3;
    if (got != 0 || ft_error() != FT_ERR_PEER_FAILED) {
      fprintf(stderr, "failover: the %s was not reported: %s\n", i < k ? "kill" : "hang",
              ft_strerror(ft_error()));
      rc = 1;
      break;
    }
    if (i < k)
      detect[i] = ms;
    else {
      hang[i - k] = ms;
      kill(pid, SIGKILL); /* it would exit when resumed; a restore waits for that */
    }
    t0 = bench_now();
    if (ft_restore(1) != 1) {
      fprintf(stderr, "failover: restore %d failed: %s\n", i + 1, ft_strerror(ft_error()));
      rc = 1;
      break;
    }
    if (i < k)
      restore[i] = (bench_now() - t0) * 1e3;
  }
  if (rc == 0) {
    ft_recv(&pid, 1, FT_INT, 1, TAG_PID, &st);
    ft_send(&pid, 1, FT_INT, 1, TAG_STOP);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_report("kill_to_report_ms", detect, k);
    if (h > 0) {
      const char *t = getenv("FT_TIMEOUT_MS"), *hb = getenv("FT_HEARTBEAT_MS");
      bench_report("hang_to_report_ms", hang, h);
      printf("hang_bound_ms %d\n", (t ? atoi(t) : FTMW_DEFAULT_TIMEOUT_MS) +
                                         (hb ? atoi(hb) : FTMW_DEFAULT_HEARTBEAT_MS));
    }
    if (size == 1) {
      double med_restore = bench_median(restore, k);
      bench_report("restore_spawn_ms", restore, k);
      if (bare_spawns(k, bare) == 0) {
        double med_bare = bench_median(bare, k);
        bench_report("bare_spawn_ms", bare, k);
        printf("ratio restore/bare_spawn %.3f\n", med_restore / med_bare);
      } else
        rc = 1;
    } else
      bench_report("restore_spare_ms", restore, k);
  }
  ft_finalize();
  return rc;
}
