/* A dynamic task farm that survives killed workers.
 *
 * The master hands out tasks one at a time; when a worker fails it puts
 * the worker's task back, restores the worker and carries on. The printed
 * checksum depends only on the tasks, so it is the same whether or not
 * workers die. */
#include <ftmw.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3 };

typedef struct {
  int64_t id;
  uint64_t value;
} result_t;

/* The "work": a few rounds of a 64-bit mix of the task id and the seed. */
static uint64_t compute(int64_t id, uint64_t seed, long work_us) {
  uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull ^ seed;
  for (int i = 0; i < 64; i++) {
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
  }
  if (work_us > 0) {
    struct timespec ts = {work_us / 1000000, (work_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
  }
  return x;
}

static void usage(FILE *f) {
  fprintf(f,
          "Usage: farm [--tasks N] [--work-us U] [--seed S] [--every-master]\n"
          "Run it with ftmwrun, e.g.: ftmwrun -w 4 farm --tasks 1000\n"
          "  --tasks N       number of tasks (default 200)\n"
          "  --work-us U     simulated work per task, microseconds (default 1000)\n"
          "  --seed S        seed of the task values (default 1)\n"
          "  --every-master  with master replicas (ftmwrun -m), every master\n"
          "                  prints the result, not only the primary (tests)\n");
}

static int worker(uint64_t seed, long work_us) {
  int64_t task;
  FT_Status st;
  for (;;) {
    if (ft_recv(&task, 1, FT_LONG_LONG, 0, FT_ANY_TAG, &st) == 0 &&
        ft_error() != FT_SUCCESS)
      return 1; /* the master is gone */
    if (st.tag == TAG_STOP)
      return 0;
    result_t r = {task, compute(task, seed, work_us)};
    if (ft_send(&r, (int)sizeof(r), FT_BYTE, 0, TAG_RESULT) == 0)
      return 1;
  }
}

typedef struct {
  int W;
  int64_t *queue; /* tasks to hand out (re-issued ones pushed back) */
  int64_t nqueue;
  int64_t *held; /* held[r]: task worker r is computing, or -1 */
  char *lost;    /* lost[r]: worker r failed and could not be restored */
  int failures, restores;
} farm_t;

/* Worker r failed: restores it, or counts it lost. Returns 1 if restored. */
static int restore(farm_t *f, int r) {
  if (ft_restore(r)) {
    f->restores++;
    return 1;
  }
  f->lost[r] = 1;
  return 0;
}

/* Gives worker r its next task, restoring it as often as needed. Returns 1
 * if r is busy, 0 if it is idle (no task left) or lost for good. */
static int dispatch(farm_t *f, int r) {
  while (f->nqueue > 0 && !f->lost[r]) {
    int64_t t = f->queue[f->nqueue - 1];
    if (ft_send(&t, 1, FT_LONG_LONG, r, TAG_TASK) == 1) {
      f->nqueue--;
      f->held[r] = t;
      return 1;
    }
    f->failures++;
    restore(f, r);
  }
  return 0;
}

/* Gives the queued tasks to the idle workers: a task put back when its
 * worker was lost may find every other worker idle. Returns how many
 * became busy. */
static int dispatch_idle(farm_t *f) {
  int busy = 0;
  for (int r = 1; r <= f->W && f->nqueue > 0; r++)
    if (f->held[r] < 0)
      busy += dispatch(f, r);
  return busy;
}

static int master(int W, int64_t ntasks, int every_master) {
  farm_t f = {.W = W};
  f.queue = malloc((size_t)ntasks * sizeof(int64_t));
  f.held = malloc(((size_t)W + 1) * sizeof(int64_t));
  f.lost = calloc((size_t)W + 1, 1);
  char *done = calloc((size_t)ntasks, 1);
  if (!f.queue || !f.held || !f.lost || !done)
    return 1;
  for (int64_t i = 0; i < ntasks; i++)
    f.queue[i] = ntasks - 1 - i; /* handed out from the end: 0, 1, ... */
  f.nqueue = ntasks;
  for (int r = 1; r <= W; r++)
    f.held[r] = -1;
  int busy = dispatch_idle(&f);
  uint64_t checksum = 0;
  int64_t ndone = 0, duplicates = 0;
  while (busy > 0) {
    result_t res;
    FT_Status st;
    if (ft_recv(&res, (int)sizeof(res), FT_BYTE, FT_ANY_SOURCE, TAG_RESULT, &st) == 0) {
      if (ft_error() != FT_ERR_PEER_FAILED)
        return fprintf(stderr, "farm: receive failed: %s\n", ft_strerror(ft_error())), 1;
      int r = st.source;
      f.failures++;
      if (f.held[r] >= 0) { /* its task goes back to the queue */
        f.queue[f.nqueue++] = f.held[r];
        f.held[r] = -1;
        busy--;
      }
      restore(&f, r);
      busy += dispatch_idle(&f);
      continue;
    }
    int r = st.source;
    if (res.id < 0 || res.id >= ntasks || res.id != f.held[r] || done[res.id]) {
      duplicates++;
      continue;
    }
    done[res.id] = 1;
    ndone++;
    checksum += res.value;
    f.held[r] = -1;
    busy--;
    busy += dispatch(&f, r);
  }
  for (int r = 1; r <= W; r++)
    if (!ft_test(r))
      ft_send(NULL, 0, FT_LONG_LONG, r, TAG_STOP);
  if (every_master || ft_is_primary()) {
    printf("tasks %" PRId64 "/%" PRId64 " failures %d restores %d duplicates %" PRId64 "\n",
           ndone, ntasks, f.failures, f.restores, duplicates);
    printf("checksum %016" PRIx64 "\n", checksum);
  }
  free(f.queue);
  free(f.held);
  free(f.lost);
  free(done);
  return ndone == ntasks && duplicates == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  int rank, W;
  int created = ft_init(&argc, &argv, &rank, &W);
  if (created < 0)
    return 1;
  long long ntasks = 200, work_us = 1000, seed = 1;
  static const struct option opts[] = {{"tasks", required_argument, 0, 't'},
                                       {"work-us", required_argument, 0, 'u'},
                                       {"seed", required_argument, 0, 's'},
                                       {"every-master", no_argument, 0, 'e'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int c, bad = 0, every_master = 0;
  char *end;
  while ((c = getopt_long(argc, argv, "t:u:s:eh", opts, NULL)) != -1) {
    if (c == 'e') {
      every_master = 1;
      continue;
    }
    long long *dst = c == 't' ? &ntasks : c == 'u' ? &work_us : c == 's' ? &seed : NULL;
    if (c == 'h') {
      if (rank == 0 && ft_is_primary())
        usage(stdout);
      ft_finalize();
      return 0;
    }
    if (dst == NULL || (*dst = strtoll(optarg, &end, 10), *end != '\0') || *dst < 0)
      bad = 1;
  }
  if (bad || ntasks < 1) {
    if (rank == 0)
      usage(stderr);
    ft_finalize();
    return 2;
  }
  int rc = rank == 0 ? master(W, ntasks, every_master) : worker((uint64_t)seed, work_us);
  ft_finalize();
  return rc;
}
