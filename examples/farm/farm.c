/* A dynamic task farm that survives killed workers.
 *
 * The master hands out tasks, one at a time to each worker or, with
 * --pipeline K, up to K in flight each (sent with ft_isend, as are the
 * results: the workers never wait for the master); when a worker fails
 * it puts the worker's tasks back, for the first workers that answer,
 * restores the worker (in spawn mode it is not waited for: it gets tasks
 * once the others have theirs) and carries on.
 * The results are taken with ft_recv(FT_ANY_SOURCE) or, with --posted,
 * by receives posted with ft_irecv, one per task in flight (a ring of K
 * buffers per worker), completed by ft_waitany.
 * With --ms the master keeps no books at all: tasks go out with ms_send,
 * results come with ms_recv(FT_ANY_SOURCE), and a failed worker is
 * ms_restore'd, whose replay gives the new worker its unanswered task
 * (docs/logging.md, "A farm").
 * The printed checksum depends only on the tasks, so it is the same
 * whether or not workers die. */
#include <ftmw.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
          "Usage: farm [--tasks N] [--work-us U] [--seed S] [--pipeline K]\n"
          "            [--posted | --ms] [--every-master]\n"
          "Run it with ftmwrun, e.g.: ftmwrun -w 4 farm --tasks 1000\n"
          "  --tasks N       number of tasks (default 200)\n"
          "  --work-us U     simulated work per task, microseconds (default 1000)\n"
          "  --seed S        seed of the task values (default 1)\n"
          "  --pipeline K    tasks in flight per worker, 1..1024 (default 1:\n"
          "                  blocking sends; more: non-blocking ones)\n"
          "  --posted        results taken by receives posted with ft_irecv (one\n"
          "                  per task in flight) and ft_waitany, not by\n"
          "                  ft_recv(FT_ANY_SOURCE)\n"
          "  --ms            one task in flight per worker, no bookkeeping: the\n"
          "                  ms_* log gives a restored worker its unanswered task\n"
          "  --every-master  with master replicas (ftmwrun -m), every master\n"
          "                  prints the result, not only the primary (tests)\n"
          "  --mark-task ID --mark-file F\n"
          "                  (benchmarks) the worker given task ID writes its pid\n"
          "                  to F, and the master prints mark_result_mono T, the\n"
          "                  monotonic time when ID's result came in\n");
}

static double now_mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The marked task's pid file, written whole or not at all (an external
 * killer polls it: bench/kill_when). Only the first worker to get the task
 * writes it, so the task re-run after a kill is not killed again. */
static void mark_pid(const char *file) {
  char tmp[4096];
  if (access(file, F_OK) == 0 || snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp))
    return;
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return;
  fprintf(f, "%ld\n", (long)getpid());
  if (fclose(f) == 0)
    rename(tmp, file);
}

static int64_t mark_task = -1;
static const char *mark_file;

static int worker(uint64_t seed, long work_us, int K) {
  int64_t task;
  FT_Status st;
  for (;;) {
    if (ft_recv(&task, 1, FT_LONG_LONG, 0, FT_ANY_TAG, &st) == 0 &&
        ft_error() != FT_SUCCESS)
      return 1; /* the master is gone */
    if (st.tag == TAG_STOP)
      return 0;
    if (task == mark_task && mark_file != NULL)
      mark_pid(mark_file);
    result_t r = {task, compute(task, seed, work_us)};
    if ((K > 1 ? ft_isend(&r, (int)sizeof(r), FT_BYTE, 0, TAG_RESULT, NULL)
               : ft_send(&r, (int)sizeof(r), FT_BYTE, 0, TAG_RESULT)) == 0)
      return 1;
  }
}

typedef struct {
  int W, K;
  int posted;      /* --posted: results go to receives posted per task */
  result_t *ring;  /* ring[r * K ...]: worker r's posted result buffers */
  int *ring_head;  /* the oldest posted, which its next result fills */
  int64_t *queue; /* tasks to hand out (re-issued ones pushed back) */
  int64_t nqueue;
  int64_t *held; /* held[r * K ...]: the tasks worker r has, oldest first */
  int *nheld;    /* how many */
  char *lost;    /* lost[r]: worker r failed and could not be restored */
  int failures, restores;
  int64_t inflight; /* tasks held by the workers */
} farm_t;

/* Worker r failed: its tasks go back to the queue. */
static void take_back(farm_t *f, int r) {
  for (int i = 0; i < f->nheld[r]; i++)
    f->queue[f->nqueue++] = f->held[(int64_t)r * f->K + i];
  f->inflight -= f->nheld[r];
  f->nheld[r] = 0;
  if (f->posted)
    f->ring_head[r] = 0; /* its receives went with it (ft_restore) */
}

/* Worker r returned task id: 1 if it held it (now no more), else 0. */
static int returned(farm_t *f, int r, int64_t id) {
  int64_t *h = &f->held[(int64_t)r * f->K];
  for (int i = 0; i < f->nheld[r]; i++)
    if (h[i] == id) {
      memmove(h + i, h + i + 1, (size_t)(f->nheld[r] - i - 1) * sizeof(*h));
      f->nheld[r]--;
      f->inflight--;
      return 1;
    }
  return 0;
}

/* Worker r failed: restores it, or counts it lost. Returns 1 if restored. */
static int restore(farm_t *f, int r) {
  if (ft_restore(r)) {
    f->restores++;
    return 1;
  }
  f->lost[r] = 1;
  return 0;
}

/* With --posted, a receive for the result of the task just sent to r, in
 * the ring slot after the ones posted before it. */
static int post_result(farm_t *f, int r) {
  if (!f->posted)
    return 1;
  int slot = (f->ring_head[r] + f->nheld[r]) % f->K;
  return ft_irecv(&f->ring[(int64_t)r * f->K + slot], (int)sizeof(result_t), FT_BYTE, r,
                  TAG_RESULT);
}

/* Fills worker r up to K tasks, restoring it as often as needed. */
static void dispatch(farm_t *f, int r) {
  while (f->nqueue > 0 && f->nheld[r] < f->K && !f->lost[r]) {
    int64_t t = f->queue[f->nqueue - 1];
    if ((f->K > 1 ? ft_isend(&t, 1, FT_LONG_LONG, r, TAG_TASK, NULL)
                  : ft_send(&t, 1, FT_LONG_LONG, r, TAG_TASK)) == 1 &&
        post_result(f, r) == 1) {
      f->nqueue--;
      f->held[(int64_t)r * f->K + f->nheld[r]++] = t;
      f->inflight++;
      continue;
    }
    f->failures++;
    take_back(f, r);
    restore(f, r);
  }
}

/* Gives the queued tasks to the workers with room: a task put back when
 * its worker was lost may find every other worker idle. */
static void dispatch_all(farm_t *f) {
  for (int r = 1; r <= f->W && f->nqueue > 0; r++)
    dispatch(f, r);
}

/* The next result: from FT_ANY_SOURCE, or from the oldest posted receive
 * of a worker (--posted). Returns 1 with *res and st->source, or 0 with
 * the error (FT_ERR_PEER_FAILED: st->source failed). */
static int next_result(farm_t *f, result_t *res, FT_Status *st) {
  if (!f->posted)
    return ft_recv(res, (int)sizeof(*res), FT_BYTE, FT_ANY_SOURCE, TAG_RESULT, st) != 0;
  int r, got = ft_waitany(&r);
  st->source = r;
  if (got < 0)
    return 0;
  *res = f->ring[(int64_t)r * f->K + f->ring_head[r]];
  f->ring_head[r] = (f->ring_head[r] + 1) % f->K;
  return 1;
}

/* The end of a run: the workers told to stop, the counts and the checksum
 * printed (by the primary, or --every-master). */
static void report(int W, int every_master, double t0, int64_t ntasks, int64_t ndone,
                   int failures, int restores, int64_t duplicates, uint64_t checksum,
                   double mark_mono) {
  double secs = now_mono() - t0;
  for (int r = 1; r <= W; r++)
    if (!ft_test(r))
      ft_send(NULL, 0, FT_LONG_LONG, r, TAG_STOP);
  if (every_master || ft_is_primary()) {
    printf("tasks %" PRId64 "/%" PRId64 " failures %d restores %d duplicates %" PRId64 "\n",
           ndone, ntasks, failures, restores, duplicates);
    printf("checksum %016" PRIx64 "\n", checksum);
    printf("time %.6f\ntasks_per_s %.1f\n", secs, (double)ndone / secs);
    if (mark_mono > 0)
      printf("mark_result_mono %.6f\n", mark_mono);
  }
}

/* --ms: worker r's next task, if any is left, with ms_send. A send that
 * reports r's failure is logged all the same, and ms_restore gives the
 * task to the new worker. Returns 0 when r is lost with its task. */
static int ms_give(int r, int64_t *next, int64_t ntasks, int *failures, int *restores) {
  if (*next >= ntasks)
    return 1;
  int64_t t = (*next)++;
  if (ms_send(&t, 1, FT_LONG_LONG, r, TAG_TASK))
    return 1;
  (*failures)++;
  if (!ms_restore(r))
    return 0;
  (*restores)++;
  return 1;
}

static int ms_master(int W, int64_t ntasks, int every_master) {
  char *done = calloc((size_t)ntasks, 1);
  if (done == NULL)
    return 1;
  int failures = 0, restores = 0, rc = 1, r = 0;
  int64_t next = 0, ndone = 0, duplicates = 0;
  uint64_t checksum = 0;
  double t0 = now_mono();
  for (r = 1; r <= W; r++)
    if (!ms_give(r, &next, ntasks, &failures, &restores))
      goto lost;
  while (ndone < ntasks) {
    result_t res;
    FT_Status st;
    if (!ms_recv(&res, (int)sizeof(res), FT_BYTE, FT_ANY_SOURCE, TAG_RESULT, &st)) {
      if (ft_error() != FT_ERR_PEER_FAILED) {
        fprintf(stderr, "farm: receive failed: %s\n", ft_strerror(ft_error()));
        goto out;
      }
      failures++; /* its unanswered task goes to the new worker */
      if (!ms_restore(r = st.source))
        goto lost;
      restores++;
      continue;
    }
    if (res.id < 0 || res.id >= ntasks || done[res.id]) {
      duplicates++;
      continue;
    }
    done[res.id] = 1;
    ndone++;
    checksum += res.value;
    if (!ms_give(r = st.source, &next, ntasks, &failures, &restores))
      goto lost;
  }
  report(W, every_master, t0, ntasks, ndone, failures, restores, duplicates, checksum, 0);
  rc = duplicates == 0 ? 0 : 1;
  goto out;
lost:
  fprintf(stderr, "farm: worker %d could not be restored (%s), and its task "
          "went with it\n", r, ft_strerror(ft_error()));
out:
  free(done);
  return rc;
}

static int master(int W, int K, int64_t ntasks, int every_master, int posted) {
  farm_t f = {.W = W, .K = K, .posted = posted};
  f.ring = malloc(((size_t)W + 1) * (size_t)K * sizeof(result_t));
  f.ring_head = calloc((size_t)W + 1, sizeof(int));
  f.queue = malloc((size_t)ntasks * sizeof(int64_t));
  f.held = malloc(((size_t)W + 1) * (size_t)K * sizeof(int64_t));
  f.nheld = calloc((size_t)W + 1, sizeof(int));
  f.lost = calloc((size_t)W + 1, 1);
  char *done = calloc((size_t)ntasks, 1);
  if (!f.queue || !f.held || !f.nheld || !f.lost || !done || !f.ring || !f.ring_head)
    return 1;
  for (int64_t i = 0; i < ntasks; i++)
    f.queue[i] = ntasks - 1 - i; /* handed out from the end: 0, 1, ... */
  f.nqueue = ntasks;
  double t0 = now_mono(), mark_mono = 0;
  dispatch_all(&f);
  uint64_t checksum = 0;
  int64_t ndone = 0, duplicates = 0;
  while (f.inflight > 0) {
    result_t res;
    FT_Status st;
    if (!next_result(&f, &res, &st)) {
      if (ft_error() != FT_ERR_PEER_FAILED)
        return fprintf(stderr, "farm: receive failed: %s\n", ft_strerror(ft_error())), 1;
      int r = st.source;
      if (f.lost[r])
        continue; /* reported again, its receives now cancelled */
      f.failures++;
      take_back(&f, r);
      restore(&f, r);
      /* Its tasks go to the first workers that answer (the restored one,
       * still starting, is filled after them), unless none is busy. */
      if (f.inflight == 0)
        dispatch_all(&f);
      continue;
    }
    int r = st.source;
    if (res.id < 0 || res.id >= ntasks || done[res.id] || !returned(&f, r, res.id)) {
      duplicates++;
      continue;
    }
    done[res.id] = 1;
    if (res.id == mark_task)
      mark_mono = now_mono();
    ndone++;
    checksum += res.value;
    dispatch(&f, r);
    dispatch_all(&f); /* a restored worker, once the others have theirs */
  }
  report(W, every_master, t0, ntasks, ndone, f.failures, f.restores, duplicates, checksum,
         mark_mono);
  free(f.queue);
  free(f.held);
  free(f.nheld);
  free(f.lost);
  free(f.ring);
  free(f.ring_head);
  free(done);
  return ndone == ntasks && duplicates == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  int rank, W;
  int created = ft_init(&argc, &argv, &rank, &W);
  if (created < 0)
    return 1;
  long long ntasks = 200, work_us = 1000, seed = 1, K = 1;
  static const struct option opts[] = {{"tasks", required_argument, 0, 't'},
                                       {"work-us", required_argument, 0, 'u'},
                                       {"seed", required_argument, 0, 's'},
                                       {"pipeline", required_argument, 0, 'k'},
                                       {"every-master", no_argument, 0, 'e'},
                                       {"posted", no_argument, 0, 'p'},
                                       {"ms", no_argument, 0, 'm'},
                                       {"mark-task", required_argument, 0, 'M'},
                                       {"mark-file", required_argument, 0, 'F'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int c, bad = 0, every_master = 0, posted = 0, ms = 0;
  char *end;
  while ((c = getopt_long(argc, argv, "t:u:s:k:epmh", opts, NULL)) != -1) {
    if (c == 'e' || c == 'p' || c == 'm') {
      *(c == 'e' ? &every_master : c == 'p' ? &posted : &ms) = 1;
      continue;
    }
    if (c == 'F') {
      mark_file = optarg;
      continue;
    }
    long long mark = -1;
    long long *dst = c == 't' ? &ntasks : c == 'u' ? &work_us : c == 's' ? &seed
                   : c == 'k' ? &K : c == 'M' ? &mark : NULL;
    if (c == 'h') {
      if (rank == 0 && ft_is_primary())
        usage(stdout);
      ft_finalize();
      return 0;
    }
    if (dst == NULL || (*dst = strtoll(optarg, &end, 10), *end != '\0') || *dst < 0)
      bad = 1;
    if (c == 'M')
      mark_task = mark;
  }
  if (bad || ntasks < 1 || K < 1 || K > 1024 || (mark_task >= 0) != (mark_file != NULL) ||
      (ms && (K > 1 || posted || mark_file != NULL))) {
    if (rank == 0)
      usage(stderr);
    ft_finalize();
    return 2;
  }
  /* A file left from an earlier run would have the killer kill whatever
   * process has its pid now, and keep the task from writing its own. */
  if (rank == 0 && mark_file != NULL && access(mark_file, F_OK) == 0) {
    fprintf(stderr, "farm: --mark-file %s exists already; remove it first\n", mark_file);
    ft_finalize();
    return 2;
  }
  int rc = rank != 0 ? worker((uint64_t)seed, work_us, (int)K)
           : ms      ? ms_master(W, ntasks, every_master)
                     : master(W, (int)K, ntasks, every_master, posted);
  ft_finalize();
  return rc;
}
