/* A task farm on the farm layer (ftmw_farm.h): the master submits tasks
 * and prints what comes back; the restores, the re-dispatch and the
 * policies are the farm's. The options inject the faults the policies are
 * for, inside the worker's function, so that the tests and the benchmarks
 * can show each at work:
 *
 *   --poison ID           task ID kills every worker that runs it
 *   --die-at ID:STEP      a worker started at launch dies at step STEP
 *                         of task ID, unless the task came with a
 *                         checkpoint (--steps)
 *   --stall ID@RANK:MS    worker RANK, started at launch, stops (SIGSTOP)
 *                         for MS ms in the first task it runs from task
 *                         ID on (--slow: sleeps instead; its library
 *                         still answers)
 *   --corrupt RANK        worker RANK flips a byte of every output
 *   --out-bytes N         each output carries N more bytes (checked)
 *   --ckpt-bytes N        each checkpoint carries N more bytes
 *   --steps S             each task is S steps of --work-us each, with a
 *                         checkpoint after each step (--no-resume: a
 *                         restarted task ignores it and starts over)
 *
 * The checksum covers the outputs of the tasks that succeeded, whatever
 * order they came in: a run with faults prints the fault-free checksum
 * when every task is done once and right.
 *
 * Run: ftmwrun -w 4 taskfarm --tasks 1000 --work-us 1000 */
#define _GNU_SOURCE
#include <ftmw_farm.h>

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int64_t tasks, out_bytes, ckpt_bytes;
  long work_us, steps;
  int resume;
  int64_t poison, die_id, die_step, stall_id, stall_rank, stall_ms;
  int corrupt, every_master, quiet, slow;
  ft_farm_options o;
} options;

static int my_rank, from_launch, stalled;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x) {
  for (int i = 0; i < 8; i++) {
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
  }
  return x;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* Stops this process for ms milliseconds: a child wakes it up. */
static void stall(long ms) {
  pid_t parent = getpid(), child = fork();
  if (child == 0) {
    sleep_us(ms * 1000);
    kill(parent, SIGCONT);
    _exit(0);
  }
  if (child > 0) {
    raise(SIGSTOP);
    waitpid(child, NULL, 0);
  }
}

/* The N bytes an output carries after its value v. */
static void padding(uint64_t v, uint8_t *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    b[i] = (uint8_t)((v >> (i % 8 * 8)) ^ (uint64_t)i);
}

/* This process's peak resident memory (VmHWM), in kB, or -1. */
static long peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof(line), f))
    if (sscanf(line, "VmHWM: %ld", &kb) == 1)
      break;
  if (f)
    fclose(f);
  return kb;
}

/* --- worker ---------------------------------------------------------------- */

/* A task: the input is 8 bytes, x; the state after step k is
 * (k, mix^k(x)); the output is the last state's value. */
static int work(ft_farm_task *t, void *ctx) {
  const options *o = ctx;
  int64_t id = ft_farm_task_id(t);
  size_t n;
  const void *in = ft_farm_input(t, &n);
  uint64_t st[2] = {0, 0}; /* next step, value */
  if (n != sizeof(uint64_t))
    return 22; /* EINVAL: not one of our tasks */
  memcpy(&st[1], in, sizeof(uint64_t));
  const void *saved = ft_farm_resumed(t, &n);
  int die = id == o->die_id && saved == NULL && from_launch;
  if (saved && o->resume && n == sizeof(st) + (size_t)o->ckpt_bytes)
    memcpy(st, saved, sizeof(st));
  if (id == o->poison)
    _exit(9);
  long steps = o->steps > 0 ? o->steps : 1;
  for (; st[0] < (uint64_t)steps; st[0]++) {
    if (die && (int64_t)st[0] == o->die_step)
      _exit(9);
    if (o->stall_id >= 0 && id >= o->stall_id && my_rank == o->stall_rank &&
        from_launch && !stalled) {
      stalled = 1;
      if (o->slow)
        sleep_us(o->stall_ms * 1000);
      else
        stall(o->stall_ms);
    }
    if (o->work_us > 0)
      sleep_us(o->work_us);
    st[1] = mix(st[1] + st[0]);
    if (o->steps > 0 && st[0] + 1 < (uint64_t)steps) {
      uint64_t next[2] = {st[0] + 1, st[1]};
      size_t len = sizeof(next) + (size_t)o->ckpt_bytes;
      uint8_t *k = calloc(1, len);
      if (k == NULL)
        return 12; /* ENOMEM */
      memcpy(k, next, sizeof(next));
      int ok = ft_farm_checkpoint(t, k, len);
      free(k);
      if (!ok)
        return 5;
    }
  }
  if (my_rank == o->corrupt)
    st[1] ^= 0x100; /* a silent error: one flipped bit */
  size_t len = sizeof(uint64_t) + (size_t)o->out_bytes;
  uint8_t *out = malloc(len);
  if (out == NULL)
    return 12; /* ENOMEM */
  memcpy(out, &st[1], sizeof(uint64_t));
  padding(st[1], out + sizeof(uint64_t), o->out_bytes);
  int ok = ft_farm_reply(t, out, len);
  free(out);
  return ok ? 0 : 5;
}

/* --- master ---------------------------------------------------------------- */

static int master(const options *o) {
  ft_farm *f = ft_farm_create(&o->o);
  if (f == NULL) {
    fprintf(stderr, "taskfarm: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  double t0 = now_s();
  for (int64_t i = 0; i < o->tasks; i++) {
    uint64_t x = mix((uint64_t)i + 1);
    if (ft_farm_submit(f, &x, sizeof(x)) != i) {
      fprintf(stderr, "taskfarm: submit: %s\n", ft_strerror(ft_error()));
      return 1;
    }
  }
  uint64_t checksum = 0;
  int64_t ok = 0, bad = 0;
  int out = o->every_master || ft_is_primary();
  ft_farm_result r;
  int rc;
  size_t len = sizeof(uint64_t) + (size_t)o->out_bytes;
  uint8_t *pad = malloc((size_t)o->out_bytes + 1);
  if (pad == NULL)
    return 1;
  while ((rc = ft_farm_next(f, &r)) == 1) {
    uint64_t v = 0;
    if (r.status == FT_FARM_OK && r.len == len)
      memcpy(&v, r.data, sizeof(v));
    if (r.status == FT_FARM_OK && r.len == len &&
        (padding(v, pad, o->out_bytes),
         memcmp(pad, (const uint8_t *)r.data + sizeof(v), (size_t)o->out_bytes) == 0)) {
      checksum += mix(v ^ (uint64_t)r.id);
      ok++;
    } else {
      bad++;
    }
    out = o->every_master || ft_is_primary();
    if (out && r.status != FT_FARM_OK)
      printf("task %" PRId64 " status %d code %d attempts %d\n", r.id,
             r.status, r.code, r.attempts);
    if (out && r.mismatch)
      printf("task %" PRId64 " mismatch workers %d,%d,%d outvoted %d\n", r.id,
             r.workers[0], r.workers[1], r.workers[2], r.outvoted);
    if (out && !o->quiet && r.resumed)
      printf("task %" PRId64 " resumed from a checkpoint, attempts %d\n",
             r.id, r.attempts);
  }
  double secs = now_s() - t0;
  free(pad);
  if (rc < 0) {
    fprintf(stderr, "taskfarm: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  ft_farm_stats s;
  ft_farm_stats_get(f, &s);
  if (o->every_master || ft_is_primary()) {
    printf("tasks %" PRId64 " ok %" PRId64 " not_ok %" PRId64 "\n", o->tasks,
           ok, bad);
    printf("checksum %016" PRIx64 "\n", checksum);
    printf("failures %" PRId64 " restores %" PRId64 " lost %" PRId64
           " timeouts %" PRId64 "\n", s.worker_failures, s.restores,
           s.lost_workers, s.timeouts);
    printf("backups %" PRId64 " backup_wins %" PRId64 "\n", s.backups,
           s.backup_wins);
    printf("duplicated %" PRId64 " mismatches %" PRId64 " votes %" PRId64
           "\n", s.duplicated, s.mismatches, s.votes);
    printf("checkpoints %" PRId64 " resumed %" PRId64 " checkpoint_peak %zu\n",
           s.checkpoints, s.resumed, s.checkpoint_peak);
    printf("master_peak_rss_kb %ld\n", peak_rss_kb());
    printf("dispatched %" PRId64 " redispatched %" PRId64 "\n", s.dispatched,
           s.redispatched);
    printf("time %.6f\ntasks_per_s %.1f\n", secs, (double)o->tasks / secs);
  }
  ft_farm_destroy(f);
  return 0;
}

/* --- options --------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
      "Usage: taskfarm [OPTIONS]   (run it with ftmwrun -w W taskfarm ...)\n"
      "  --tasks N          tasks (default 200)\n"
      "  --work-us U        work per task (or per step), microseconds (1000)\n"
      "  --out-bytes N      each output carries N more bytes (0)\n"
      "  --ckpt-bytes N     each checkpoint carries N more bytes (0)\n"
      "  --steps S          steps per task, a checkpoint after each (0: none)\n"
      "  --no-resume        a task restarted after a death starts over\n"
      "  --depth D          tasks in flight per worker (2)\n"
      "  --attempts A       worker deaths a task may cause (3)\n"
      "  --time-limit MS    per task (0: none)\n"
      "  --backup K         back up tasks running K x the median (3; 0: off)\n"
      "  --duplicate F      fraction of tasks run twice and compared (0)\n"
      "  --no-restore       do not restore dead workers\n"
      "  --poison ID | --die-at ID:STEP | --stall ID@RANK:MS [--slow] |\n"
      "  --corrupt RANK\n"
      "  --every-master     every master replica prints (tests)\n"
      "  --quiet            no line per resumed task\n");
}

static int parse_i64(const char *s, int64_t *v) {
  char *end;
  *v = strtoll(s, &end, 10);
  return end != s && *end == '\0' && *v >= 0;
}

static int parse(int argc, char **argv, options *o) {
  static const struct option opts[] = {
      {"tasks", 1, 0, 't'},     {"work-us", 1, 0, 'u'},
      {"out-bytes", 1, 0, 'o'},  {"ckpt-bytes", 1, 0, 'K'},
      {"steps", 1, 0, 'S'},     {"no-resume", 0, 0, 'R'},
      {"depth", 1, 0, 'd'},     {"attempts", 1, 0, 'a'},
      {"time-limit", 1, 0, 'T'}, {"backup", 1, 0, 'b'},
      {"duplicate", 1, 0, 'D'}, {"no-restore", 0, 0, 'n'},
      {"poison", 1, 0, 'p'},    {"die-at", 1, 0, 'x'},
      {"stall", 1, 0, 's'},     {"corrupt", 1, 0, 'c'},
      {"slow", 0, 0, 'L'},
      {"every-master", 0, 0, 'e'}, {"quiet", 0, 0, 'q'},
      {"help", 0, 0, 'h'},      {0, 0, 0, 0}};
  *o = (options){.tasks = 200, .work_us = 1000, .resume = 1, .poison = -1,
                 .die_id = -1, .stall_id = -1, .corrupt = -1};
  ft_farm_options_init(&o->o);
  int c;
  int64_t v;
  double d;
  char *end;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    int ok = 1;
    switch (c) {
    case 't': ok = parse_i64(optarg, &o->tasks); break;
    case 'u': ok = parse_i64(optarg, &v); o->work_us = (long)v; break;
    case 'o': ok = parse_i64(optarg, &o->out_bytes) && o->out_bytes < (1 << 30); break;
    case 'K': ok = parse_i64(optarg, &o->ckpt_bytes) && o->ckpt_bytes < (1 << 30); break;
    case 'S': ok = parse_i64(optarg, &v); o->steps = (long)v; break;
    case 'R': o->resume = 0; break;
    case 'd': ok = parse_i64(optarg, &v) && v >= 1; o->o.depth = (int)v; break;
    case 'a': ok = parse_i64(optarg, &v) && v >= 1; o->o.max_attempts = (int)v; break;
    case 'T': ok = parse_i64(optarg, &o->o.time_limit_ms); break;
    case 'b':
    case 'D':
      d = strtod(optarg, &end);
      ok = end != optarg && *end == '\0' && d >= 0;
      *(c == 'b' ? &o->o.backup_factor : &o->o.duplicate) = d;
      break;
    case 'n': o->o.restore = 0; break;
    case 'p': ok = parse_i64(optarg, &o->poison); break;
    case 'x':
      ok = sscanf(optarg, "%" SCNd64 ":%" SCNd64, &o->die_id, &o->die_step) == 2;
      break;
    case 's':
      ok = sscanf(optarg, "%" SCNd64 "@%" SCNd64 ":%" SCNd64, &o->stall_id,
                  &o->stall_rank, &o->stall_ms) == 3;
      break;
    case 'c': ok = parse_i64(optarg, &v); o->corrupt = (int)v; break;
    case 'L': o->slow = 1; break;
    case 'e': o->every_master = 1; break;
    case 'q': o->quiet = 1; break;
    case 'h': usage(stdout); return 1;
    default: ok = 0;
    }
    if (!ok) {
      fprintf(stderr, "taskfarm: bad value for option %s\n", argv[optind - 1]);
      usage(stderr);
      return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "taskfarm: unexpected argument %s\n", argv[optind]);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse(argc, argv, &o);
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  int W, started = ft_init(&argc, &argv, &my_rank, &W);
  if (started < 0)
    return 1;
  from_launch = started == 1;
  if (my_rank == 0)
    rc = master(&o);
  else
    ft_farm_work(work, &o);
  ft_finalize();
  return rc;
}
