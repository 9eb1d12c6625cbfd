/* ftmw-sim: runs the real library's protocol for many seeded schedules
 * and checks what every run must hold (sim.h says how it runs the
 * library; docs/replicas.md, "The simulator", what is drawn and checked).
 *
 *   ftmw-sim [--seeds N] [--seed S] [--jobs J] [--verbose] [--no-partitions]
 *            [--no-heal] [--no-worker-cuts] [--no-fourth-master]
 *            [--any-source-only] [--ft-only] [--lib libftmw.so]
 *
 * Seed S (default 1) and the N-1 after it each draw a job, its network's
 * delays and its faults (draw_job, draw_split), run the programs of
 * farm.c in it (run_one) and check the run (check). One seed runs in this
 * process (a debugger sees it); many run in J child processes at a time,
 * each reporting to this one (report). It prints what the schedules
 * exercised, then "N schedules, P passed, F failed", and for each failure
 * its seed and why. */
#define _GNU_SOURCE
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "farm.h"

/* How long a primary cut off may not know it: half of FT_TIMEOUT_MS. */
#define CUT_SEEN_NS (1500 * SIM_NS_PER_MS)

/* The job a seed draws. */
static struct {
  int W, M, S, tasks;
  int output_twice;          /* the documented case: see check() */
  int kills;                 /* how many faults */
  int kill_node[4];
  int kill_silent[4];
  uint64_t kill_at[4];       /* virtual ns */
  int next_kill;
  int split; /* a partition: in_minority cut from the rest (1: drawn,
                2: cut, 3: healed) */
  uint64_t split_at;
  uint64_t heal_after; /* how long it holds (0: for good) */
  int heal_short;      /* over before anyone may suspect anyone: nothing
                          may notice it (no node counts as cut off) */
  int in_minority[SIM_MAX_NODES];
  uint64_t launch_at; /* when the last of them was: faults count from it */
} job;

static const char *lib_path;
static char lib_dir[256];

/* --- faults ----------------------------------------------------------------- */

static void faults(void) {
  if (sim_farm.launched < 1 + job.W + job.M) {
    sim_hook_due = 0; /* faults come once the job has started */
    return;
  }
  if (job.launch_at == 0) {
    job.launch_at = sim_now_ns;
    for (int k = 0; k < job.kills; k++)
      job.kill_at[k] += sim_now_ns;
    job.split_at += sim_now_ns;
  }
  if (job.split == 1 && sim_now_ns >= job.split_at) {
    int group[SIM_MAX_NODES], n = 0;
    for (int i = 0; i < sim_nnodes; i++)
      if (job.in_minority[i]) {
        group[n++] = i;
        if (!job.heal_short)
          sim_nodes[i].cut_at = sim_now_ns;
      }
    sim_net_partition(group, n);
    sim_log("partition: %d node(s) cut from the rest", n);
    job.split = 2;
  }
  uint64_t heal_at = job.split_at + job.heal_after;
  if (job.split == 2 && job.heal_after && sim_now_ns >= heal_at) {
    sim_net_heal();
    sim_log("partition healed");
    job.split = 3;
    /* Cut off for less than any process may wait before it acts on a
     * silence (a master steps down after 1,500 ms, a peer is down after
     * 3,000; less a heartbeat and the delays): it counts as never cut,
     * and the checks are strict about it. */
    for (int i = 0; i < sim_nnodes; i++) {
      int master = i == 0 || (i > job.W && i <= job.W + job.M);
      uint64_t bound = (master ? 1200 : 2600) * SIM_NS_PER_MS;
      if (sim_nodes[i].cut_at && sim_now_ns - sim_nodes[i].cut_at < bound)
        sim_nodes[i].cut_at = 0;
    }
  }
  while (job.next_kill < job.kills &&
         sim_now_ns >= job.kill_at[job.next_kill]) {
    int k = job.next_kill++;
    sim_node *n = &sim_nodes[job.kill_node[k]];
    if (n->alive)
      sim_kill_node(n, job.kill_silent[k]);
  }
  sim_hook_due = job.next_kill < job.kills ? job.kill_at[job.next_kill] : 0;
  if (job.split == 1 && (sim_hook_due == 0 || job.split_at < sim_hook_due))
    sim_hook_due = job.split_at;
  if (job.split == 2 && job.heal_after &&
      (sim_hook_due == 0 || heal_at < sim_hook_due))
    sim_hook_due = heal_at;
}

/* The majority side keeps a worker that no fault takes: else no one is
 * left to do the work, and the farm rightly ends without it. */
static void keep_a_worker(void) {
  int keep = 0;
  for (int r = 1; r <= job.W && keep == 0; r++)
    if (!job.in_minority[r])
      keep = r;
  int n = 0;
  for (int k = 0; k < job.kills; k++)
    if (job.kill_node[k] != keep) {
      job.kill_node[n] = job.kill_node[k];
      job.kill_silent[n] = job.kill_silent[k];
      job.kill_at[n++] = job.kill_at[k];
    }
  job.kills = n;
}

static uint64_t farm_span_ns(void) {
  return (uint64_t)(job.tasks * 1200 / job.W + 10000) * 1000;
}

/* Cuts, besides what in_minority holds already, some workers (never
 * every one) and spares, drawn from stream z. Returns 0 if nobody is
 * cut; else the partition's time is drawn, and the majority side keeps
 * a worker that no fault takes. */
static int cut_some(uint64_t *z) {
  int majority_workers = 0, n = 0;
  for (int r = 1; r <= job.W; r++) {
    job.in_minority[r] = sim_splitmix(z) % 2;
    majority_workers += !job.in_minority[r];
  }
  if (majority_workers == 0)
    job.in_minority[1 + sim_splitmix(z) % (uint64_t)job.W] = 0;
  for (int i = 1 + job.W + job.M; i < 1 + job.W + job.M + job.S; i++)
    job.in_minority[i] = sim_splitmix(z) % 2;
  for (int i = 0; i < SIM_MAX_NODES; i++)
    n += job.in_minority[i];
  if (n == 0)
    return 0;
  job.split = 1;
  job.split_at = sim_splitmix(z) % farm_span_ns();
  keep_a_worker();
  return 1;
}

/* A partition, with three masters or more (the majority rule): one
 * master, and some workers and spares (never every worker), cut for good
 * from the rest. Drawn from a stream of its own, so that a schedule
 * without one is the one the seed drew before partitions were simulated;
 * none with a master fault (the rest would have no majority). */
static int partitions = 1;

static void draw_split(uint64_t seed) {
  uint64_t z = seed ^ 0x5eed5a117ull;
  if (!partitions || job.M < 2 || sim_splitmix(&z) % 3 != 0)
    return;
  for (int k = 0; k < job.kills; k++)
    if (job.kill_node[k] == 0 || job.kill_node[k] > job.W)
      return;
  int masters[SIM_MAX_NODES], nm = 0;
  masters[nm++] = 0;
  for (int k = 1; k <= job.M; k++)
    masters[nm++] = job.W + k;
  job.in_minority[masters[sim_splitmix(&z) % (uint64_t)nm]] = 1;
  cut_some(&z);
}

/* Partitions that heal, from a stream of their own (none with
 * --no-heal, --ft-only or --any-source-only: how the seeds found before
 * them were drawn). With fewer than three masters, a quarter of the
 * schedules cut some workers and spares (never every worker) from the
 * masters, which stay together (two masters apart is a split brain the
 * design leaves to three masters or more). Three partitions in four
 * heal: half of these within FTMW_SIM_HEAL_SHORT_MS, before any silence
 * counts (a heartbeat each 250 ms; a master asks for the majority after
 * 1500 ms, a peer is down after 3000), so that nothing may notice them;
 * half after 1.2 to 8 s, when the job may have acted on them and the
 * bytes held since arrive. */
#define FTMW_SIM_HEAL_SHORT_MS 1000
static int heals = 1;

/* With three masters or more, a quarter of the schedules that drew no
 * partition cut some workers and spares (never every worker) from the
 * masters, which stay together, as with fewer masters, and master faults
 * may come with it (the masters keep their majority). From a stream of
 * its own: --no-worker-cuts, and --no-heal with it, give back the
 * schedules drawn before. */
static int worker_cuts = 1;

static void draw_worker_cut(uint64_t seed) {
  uint64_t z = seed ^ 0xc0757ull;
  if (worker_cuts && partitions && job.split == 0 && job.M >= 2 &&
      sim_splitmix(&z) % 4 == 0)
    cut_some(&z);
}

static void draw_heal(uint64_t seed) {
  uint64_t z = seed ^ 0x4ea15ull;
  if (!heals || !partitions)
    return;
  draw_worker_cut(seed);
  if (job.split == 0 && job.M < 2 && sim_splitmix(&z) % 4 == 0 && !cut_some(&z))
    return;
  if (job.split == 0 || sim_splitmix(&z) % 4 == 0)
    return;
  job.heal_short = sim_splitmix(&z) % 2;
  job.heal_after =
      (job.heal_short ? 20 + sim_splitmix(&z) % (FTMW_SIM_HEAL_SHORT_MS - 20)
                      : 1200 + sim_splitmix(&z) % 6800) *
      SIM_NS_PER_MS;
}

/* --- one schedule ------------------------------------------------------------- */

static void *load(int k) {
  char path[300];
  snprintf(path, sizeof(path), "%s/node%d.so", lib_dir, k);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "ftmw-sim: %s\n", dlerror());
    exit(2);
  }
  return h;
}

static void draw_split(uint64_t seed);

/* How the master takes its results (farm.h): ft_recv(FT_ANY_SOURCE) in
 * half the schedules, ft_waitany or ft_probe in a quarter each. Drawn
 * from a stream of its own, so that with --any-source-only a seed draws
 * the schedule it drew before the other ways were simulated. */
static int any_source_only;

static int draw_take(uint64_t seed) {
  uint64_t z = seed ^ 0x7a4e5ull, d = sim_splitmix(&z) % 4;
  return any_source_only || d < 2 ? TAKE_RECV
         : d == 2                 ? TAKE_WAITANY
                                  : TAKE_PROBE;
}

/* Whether the master also asks ft_test and ft_testany (farm.h), in half
 * the schedules: a stream of its own too. */
static int draw_tests(uint64_t seed) {
  uint64_t z = seed ^ 0x7e575ull;
  return !any_source_only && sim_splitmix(&z) % 2 == 0;
}

/* Which program (farm.h): the logged farm in a third of the schedules,
 * its problem by ms_send or by ms_bcast alike, the logged rounds in a
 * sixth, the problem by either, the farm layer in a sixth; a stream of
 * its own, and never with --ft-only (how the seeds found before them were
 * drawn). The farm layer's options come from another stream. */
static int ft_only;

static int draw_prog(uint64_t seed) {
  uint64_t z = seed ^ 0x3510ull, d = sim_splitmix(&z) % 6;
  sim_farm.by_bcast = d == 2 ? (int)(sim_splitmix(&z) % 2) : d == 1;
  return any_source_only || ft_only || d >= 4 ? PROG_FT
         : d == 3                             ? PROG_LAYER
         : d == 2                             ? PROG_MS_ROUNDS
                                              : PROG_MS_FARM;
}

/* Four masters (three replicas) in a quarter of the schedules that drew
 * three: only then can a replica lack a decision that another gave the
 * master taking over (fill_gaps). A stream of its own;
 * --no-fourth-master, and every older drawing's flag, give back the
 * schedules drawn before. */
static int fourth_master = 1;

static int draw_fourth_master(uint64_t seed) {
  uint64_t z = seed ^ 0x4a57e5ull;
  return fourth_master && partitions && heals && worker_cuts &&
         sim_splitmix(&z) % 4 == 0;
}

static void draw_job(uint64_t seed) {
  job.W = 1 + (int)sim_below(FTMW_SIM_MAX_W);
  job.M = (int)sim_below(3);
  if (job.M == 2 && draw_fourth_master(seed))
    job.M = 3;
  job.S = (int)sim_below(3);
  job.tasks = 4 + (int)sim_below(21);
  sim_farm.two_parts = (int)sim_below(2);
  sim_farm.take = draw_take(seed);
  sim_farm.tests = draw_tests(seed);
  sim_farm.prog = draw_prog(seed);
  sim_farm.problem = 1000 + (int64_t)(seed % 1000);
  if (sim_farm.prog == PROG_MS_FARM) { /* one part, no probe */
    sim_farm.two_parts = 0;
    if (sim_farm.take == TAKE_PROBE)
      sim_farm.take = TAKE_RECV;
  } else if (sim_farm.prog == PROG_MS_ROUNDS) { /* receives by name */
    sim_farm.take = TAKE_RECV;
    sim_farm.tests = 0;
  } else if (sim_farm.prog == PROG_LAYER) { /* its own calls, drawn */
    uint64_t z = seed ^ 0x1a7e2ull, d = sim_splitmix(&z);
    sim_farm.two_parts = sim_farm.tests = 0;
    sim_farm.take = TAKE_RECV;
    sim_farm.depth = 1 + (int)(d % 3);
    sim_farm.duplicate = (d >> 8) % 4 == 0;
    sim_farm.checkpoints = (d >> 16) % 2;
  }
  sim_net_min_ns = 10000 + sim_below(50000);
  sim_net_max_ns = sim_net_min_ns + sim_below(1000000);
  /* Faults: workers (never all of them for good), and with replicas
   * masters, at most one fewer than there are. */
  int n = 1 + job.W + job.M + job.S;
  int worker_kills = 0, master_kills = 0;
  job.kills = (int)sim_below(4);
  for (int k = 0; k < job.kills; k++) {
    int victim;
    /* With three masters or more, a majority of them must live on (the
     * majority rule: else the rest step down, as they must). */
    int master_max = job.M >= 2 ? job.M / 2 : job.M;
    if (master_max > master_kills && sim_below(3) == 0) {
      victim = master_kills == 0 ? 0 : job.W + (int)sim_below((uint64_t)job.M) + 1;
      master_kills++;
    } else if (worker_kills < job.W - 1 + job.S) {
      victim = 1 + (int)sim_below((uint64_t)job.W);
      worker_kills++;
    } else {
      job.kills = k;
      break;
    }
    job.kill_node[k] = victim < n ? victim : 1;
    job.kill_silent[k] = sim_below(4) == 0;
    /* After the launch, within about the farm's length (a task takes
     * 1.1 ms on average). */
    uint64_t span = (uint64_t)(job.tasks * 1200 / job.W + 10000) * 1000;
    job.kill_at[k] = sim_below(span);
  }
  draw_split(seed);
  draw_heal(seed);
  /* In time order. */
  for (int i = 0; i < job.kills; i++)
    for (int j = i + 1; j < job.kills; j++)
      if (job.kill_at[j] < job.kill_at[i]) {
        uint64_t t = job.kill_at[i];
        job.kill_at[i] = job.kill_at[j], job.kill_at[j] = t;
        int v = job.kill_node[i];
        job.kill_node[i] = job.kill_node[j], job.kill_node[j] = v;
        v = job.kill_silent[i];
        job.kill_silent[i] = job.kill_silent[j], job.kill_silent[j] = v;
      }
}

static void set_env(const char *name, int v) {
  char s[32];
  snprintf(s, sizeof(s), "%d", v);
  setenv(name, s, 1);
}

/* Whether n was alive, and not cut off by the partition, at t. */
static int alive_at(const sim_node *n, uint64_t t) {
  return (n->ended_ns == 0 || n->ended_ns > t) && (n->cut_at == 0 || n->cut_at > t);
}

/* Checks the invariants once the run is over. */
static int check(char *why, size_t len) {
  int primaries = 0, lost_in_last_call = 0, died_after_output = 0;
  program *last = NULL;
  for (int i = 0; i < sim_nnodes; i++) {
    sim_node *n = &sim_nodes[i];
    program *p = &sim_progs[i];
    if (p->failure[0]) {
      snprintf(why, len, "node %d: %s", i, p->failure);
      return -1;
    }
    /* Cut off, a process leaves as fenced or orphaned (3), or as a
     * master without a majority (4), or before it joined, as its ft_init
     * failed (the program's exit: 1). */
    if (n->cut_at && n->exited &&
        (n->status == 3 || n->status == 4 || p->init_failed_cut))
      continue;
    if (n->exited && n->status != 0 && !n->crashed) {
      snprintf(why, len, "node %d exited with status %d", i, n->status);
      return -1;
    }
    if (p->role_master && p->ended_primary) {
      /* Gone, for the others, between its output and its next call: it
       * crashed, or a partition cut it off before it could know (the
       * majority rule needs half of FT_TIMEOUT_MS to see it). */
      int gone = (n->crashed && !p->finalized) ||
                 (n->cut_at && p->primary_at < n->cut_at + CUT_SEEN_NS);
      primaries++;
      died_after_output += gone;
      if (last == NULL || !gone)
        last = p;
    }
    if (p->role_master && n->crashed && p->in_last_call)
      lost_in_last_call = 1;
  }
  /* The same outcomes at every master: two masters that both lived when
   * the later of them saw call k saw the same outcome. One that died
   * first may have seen another (its worker's data, or its failure,
   * went with it, and the master that took over decided afresh): what it
   * did after went nowhere, or the farm's own checks (the task a worker
   * answers, duplicates, the final results) and a replica's exit (70,
   * "not deterministic") see it. */
  for (int i = 0; i < sim_nnodes; i++)
    for (int j = i + 1; j < sim_nnodes; j++) {
      program *p = &sim_progs[i], *q = &sim_progs[j];
      if (!p->role_master || !q->role_master)
        continue;
      for (int k = 0; k < p->nseen && k < q->nseen; k++) {
        const outcome *a = &p->seen[k], *b = &q->seen[k];
        if (a->call == b->call && a->rc == b->rc && a->err == b->err &&
            a->source == b->source && a->task == b->task && a->value == b->value)
          continue;
        uint64_t later = a->at > b->at ? a->at : b->at;
        if (!alive_at(&sim_nodes[i], later) || !alive_at(&sim_nodes[j], later))
          break; /* one had died: its view ends here */
        snprintf(why, len,
                 "masters diverge at call %d: node %d saw %s rc %d err %d "
                 "source %d task %" PRId64 ", node %d saw %s rc %d err %d "
                 "source %d task %" PRId64,
                 k, i, sim_call_names[a->call], a->rc, a->err, a->source, a->task,
                 j, sim_call_names[b->call], b->rc, b->err, b->source, b->task);
        return -1;
      }
    }
  if (primaries == 0 && lost_in_last_call)
    return 0; /* the primary crashed as it was told it is: no answer */
  /* A primary that dies after the output its ft_is_primary guards and
   * before its next call (which tells the replicas) has it written again
   * by the master that takes over: documented (docs/replicas.md), at
   * least once rather than lost. */
  if (primaries == 2 && died_after_output == 1)
    job.output_twice = 1;
  else if (primaries != 1) {
    snprintf(why, len, "%d masters ended as primary", primaries);
    return -1;
  }
  for (int t = 0; t < job.tasks; t++)
    if (last->got[t] != 1) {
      snprintf(why, len, "task %d: %d results at the primary", t, last->got[t]);
      return -1;
    }
  return 0;
}

static int run_one(uint64_t seed, char *why, size_t len) {
  sim_seed(seed);
  sim_now_ns = 1000 * SIM_NS_PER_MS;
  draw_job(seed);
  sim_farm.tasks = job.tasks;
  sim_nnodes = 1 + job.W + job.M + job.S;
  set_env("FT_NUM_SLAVES", job.W);
  set_env("FT_NUM_MASTERS", job.M);
  set_env("FT_SPARES", job.S);
  unsetenv("PMI_FD");
  sim_log("seed %" PRIu64 ": %s%s%s (results by %s%s), %d workers, "
          "%d replicas, %d spares, %d tasks, delays %" PRIu64 "-%" PRIu64 " us",
          seed, sim_farm.two_parts ? "two-part " : "",
          sim_prog_names[sim_farm.prog],
          sim_farm.prog == PROG_FT || sim_farm.prog == PROG_LAYER ? ""
          : sim_farm.by_bcast ? ", problem by ms_bcast"
                              : ", problem by ms_send",
          sim_take_names[sim_farm.take],
          sim_farm.tests ? ", failures looked for by ft_test" : "", job.W,
          job.M, job.S, job.tasks, sim_net_min_ns / 1000,
          sim_net_max_ns / 1000);
  if (sim_farm.prog == PROG_LAYER)
    sim_log("farm layer: depth %d%s%s", sim_farm.depth,
            sim_farm.duplicate ? ", a quarter of the tasks run twice" : "",
            sim_farm.checkpoints ? ", a checkpoint halfway" : "");
  if (job.split)
    sim_log("fault: a partition %.3f ms after the launch, %s",
            job.split_at / 1e6,
            job.heal_after == 0 ? "for good"
            : job.heal_short    ? "healed before it may be noticed"
                                : "healed later");
  if (job.heal_after)
    sim_log("fault: the partition heals %.3f ms after it came",
            job.heal_after / 1e6);
  for (int k = 0; k < job.kills; k++)
    sim_log("fault: node %d %s %.3f ms after the launch", job.kill_node[k],
            job.kill_silent[k] ? "goes silent" : "crashes",
            job.kill_at[k] / 1e6);
  for (int i = 0; i < sim_nnodes; i++) {
    sim_node *n = &sim_nodes[i];
    memset(n, 0, sizeof(*n));
    n->id = i;
    n->alive = 1;
    snprintf(n->host, sizeof(n->host), "sim%d", i);
    n->ip = (10u << 24) | (77u << 16) | (uint32_t)(i + 1);
    n->pid = 1000 + (uint32_t)i;
    n->lib = load(i);
    program *p = &sim_progs[i];
    memset(p, 0, sizeof(*p));
    p->seen = calloc(MAX_OUTCOMES, sizeof(outcome));
    sim_farm_bind(&p->f, n->lib);
    n->user = p;
    n->app = sim_spawn(n, sim_farm_app, n);
  }
  if (sim_run(faults, sim_now_ns + 60000 * SIM_NS_PER_MS, why, len) != 0) {
    /* What the run shows so far may say why it did not end. */
    size_t n = strlen(why);
    if (check(why + n, len - n) != 0 && n + 2 < len)
      memmove(why + n + 2, why + n, strlen(why + n) + 1), memcpy(why + n, ": ", 2);
    return -1;
  }
  return check(why, len);
}

/* --- the driver ------------------------------------------------------------- */

/* What a run tells the driver. */
typedef struct {
  int failed;
  uint64_t hash, steps;
  uint64_t faults, master_faults, silent, replicated, two_parts, outcomes,
      restores, output_twice, partitions, healed, tests, take[TAKE_KINDS],
      prog[PROG_KINDS], by_bcast;
  char why[512];
} report;

static void fill_report(report *r, int rc) {
  r->failed = rc != 0;
  r->hash = sim_log_hash;
  r->steps = sim_steps;
  r->replicated = job.M > 0;
  r->two_parts = sim_farm.two_parts;
  r->take[sim_farm.take] = 1;
  r->tests = sim_farm.tests;
  r->prog[sim_farm.prog] = 1;
  r->by_bcast =
      (sim_farm.prog == PROG_MS_FARM || sim_farm.prog == PROG_MS_ROUNDS) &&
      sim_farm.by_bcast;
  r->output_twice = job.output_twice;
  r->partitions = job.split >= 2;
  r->healed = job.split == 3;
  for (int k = 0; k < job.next_kill; k++) {
    r->faults++;
    r->silent += job.kill_silent[k];
    r->master_faults += sim_progs[job.kill_node[k]].role_master;
  }
  for (int i = 0; i < sim_nnodes; i++)
    for (int k = 0; k < sim_progs[i].nseen; k++) {
      r->outcomes++;
      r->restores += sim_progs[i].seen[k].call == CALL_RESTORE &&
                     sim_progs[i].seen[k].rc == 1 && i == 0;
    }
}

static void add_report(report *sum, const report *r) {
  sum->faults += r->faults;
  sum->master_faults += r->master_faults;
  sum->silent += r->silent;
  sum->replicated += r->replicated;
  sum->two_parts += r->two_parts;
  for (int t = 0; t < TAKE_KINDS; t++)
    sum->take[t] += r->take[t];
  for (int t = 0; t < PROG_KINDS; t++)
    sum->prog[t] += r->prog[t];
  sum->by_bcast += r->by_bcast;
  sum->outcomes += r->outcomes;
  sum->restores += r->restores;
  sum->output_twice += r->output_twice;
  sum->partitions += r->partitions;
  sum->healed += r->healed;
  sum->tests += r->tests;
  sum->steps += r->steps;
}

static void copy_lib(int n) {
  for (int k = 0; k < n; k++) {
    char path[300];
    snprintf(path, sizeof(path), "%s/node%d.so", lib_dir, k);
    int in = open(lib_path, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0) {
      fprintf(stderr, "ftmw-sim: cannot copy %s to %s: %s\n", lib_path, path,
              strerror(errno));
      exit(2);
    }
    char buf[65536];
    ssize_t r;
    while ((r = read(in, buf, sizeof(buf))) > 0)
      if (write(out, buf, (size_t)r) != r)
        exit(2);
    close(in);
    close(out);
  }
}

static void remove_lib_dir(void) {
  for (int k = 0; k < SIM_MAX_NODES; k++) {
    char path[300];
    snprintf(path, sizeof(path), "%s/node%d.so", lib_dir, k);
    unlink(path);
  }
  rmdir(lib_dir);
}

int main(int argc, char **argv) {
  uint64_t seed = 1, seeds = 1;
  int jobs = 1;
  lib_path = FTMW_SIM_LIB;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
      seeds = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
      jobs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
      lib_path = argv[++i];
    else if (strcmp(argv[i], "--verbose") == 0)
      sim_verbose = 1;
    else if (strcmp(argv[i], "--no-partitions") == 0)
      partitions = 0;
    else if (strcmp(argv[i], "--no-heal") == 0)
      heals = 0;
    else if (strcmp(argv[i], "--no-worker-cuts") == 0)
      worker_cuts = 0;
    else if (strcmp(argv[i], "--no-fourth-master") == 0)
      fourth_master = 0;
    else if (strcmp(argv[i], "--any-source-only") == 0)
      any_source_only = 1, heals = 0;
    else if (strcmp(argv[i], "--ft-only") == 0)
      ft_only = 1, heals = 0;
    else {
      fprintf(stderr,
              "usage: ftmw-sim [--seeds N] [--seed S] [--jobs J] [--verbose] "
              "[--no-partitions] [--no-heal] [--no-worker-cuts] "
              "[--no-fourth-master] [--any-source-only] [--ft-only] "
              "[--lib libftmw.so]\n");
      return 2;
    }
  }
  if (seeds == 0 || jobs < 1) {
    fprintf(stderr, "ftmw-sim: --seeds and --jobs must be at least 1\n");
    return 2;
  }
  snprintf(lib_dir, sizeof(lib_dir), "/tmp/ftmw-sim.%d", (int)getpid());
  if (mkdir(lib_dir, 0700) != 0) {
    fprintf(stderr, "ftmw-sim: mkdir %s: %s\n", lib_dir, strerror(errno));
    return 2;
  }
  copy_lib(SIM_MAX_NODES);
  if (seeds == 1) { /* in this process: a debugger sees the run */
    char why[512] = "";
    int rc = run_one(seed, why, sizeof(why));
    remove_lib_dir();
    printf("seed %" PRIu64 ": %s%s (run hash %016" PRIx64 ", %" PRIu64 " steps)\n",
           seed, rc == 0 ? "passed" : "FAILED: ", why, sim_log_hash, sim_steps);
    printf("1 schedules, %d passed, %d failed\n", rc == 0, rc != 0);
    return rc == 0 ? 0 : 1;
  }
  uint64_t passed = 0, failed = 0, started = 0, running = 0;
  report sum;
  memset(&sum, 0, sizeof(sum));
  static int fds[4096];
  static pid_t pids[4096];
  static uint64_t seed_of[4096];
  if (jobs > 4096)
    jobs = 4096;
  while (passed + failed < seeds) {
    while (running < (uint64_t)jobs && started < seeds) {
      int p[2];
      if (pipe(p) != 0) {
        perror("ftmw-sim: pipe");
        return 2;
      }
      uint64_t s = seed + started++;
      fflush(stdout); /* or a child's exit prints it again */
      pid_t pid = fork();
      if (pid == 0) {
        close(p[0]);
        if (!sim_verbose) { /* the library's own lines: only when replaying */
          int null = open("/dev/null", O_WRONLY);
          dup2(null, 2);
        }
        report r;
        memset(&r, 0, sizeof(r));
        int rc = run_one(s, r.why, sizeof(r.why));
        fill_report(&r, rc);
        if (write(p[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
          _exit(3);
        _exit(0);
      }
      close(p[1]);
      int slot = 0;
      while (slot < jobs && pids[slot] > 0)
        slot++;
      pids[slot] = pid;
      fds[slot] = p[0];
      seed_of[slot] = s;
      running++;
    }
    int status;
    pid_t pid = wait(&status);
    if (pid < 0)
      break;
    int slot = 0;
    while (slot < jobs && pids[slot] != pid)
      slot++;
    if (slot == jobs)
      continue;
    report r;
    ssize_t n = read(fds[slot], &r, sizeof(r));
    close(fds[slot]);
    pids[slot] = 0;
    running--;
    int ok = n == (ssize_t)sizeof(r) && !r.failed && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
    if (n == (ssize_t)sizeof(r))
      add_report(&sum, &r);
    if (ok) {
      passed++;
      continue;
    }
    failed++;
    if (n != (ssize_t)sizeof(r))
      printf("seed %" PRIu64 ": FAILED: the run died (%s %d)\n", seed_of[slot],
             WIFSIGNALED(status) ? "signal" : "status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    else
      printf("seed %" PRIu64 ": FAILED: %s (replay: --seed %" PRIu64
             " --verbose)\n", seed_of[slot], r.why, seed_of[slot]);
  }
  remove_lib_dir();
  printf("partitions %" PRIu64 " (healed %" PRIu64 "), faults %" PRIu64
         " (masters %" PRIu64 ", silent hosts %" PRIu64
         "), schedules with replicas %" PRIu64 ", two-part %" PRIu64
         ", logged farm %" PRIu64 " and rounds %" PRIu64
         " (problem by ms_bcast %" PRIu64 "), farm layer %" PRIu64
         ", results by ft_waitany %" PRIu64 " and by ft_probe %" PRIu64
         ", with ft_test %" PRIu64 ", restores %" PRIu64
         ", call outcomes compared %" PRIu64 ", steps %" PRIu64
         "; answer written twice (a primary died between "
         "it and its next call, docs/replicas.md) %" PRIu64 "\n",
         sum.partitions, sum.healed, sum.faults, sum.master_faults, sum.silent,
         sum.replicated, sum.two_parts, sum.prog[PROG_MS_FARM],
         sum.prog[PROG_MS_ROUNDS], sum.by_bcast, sum.prog[PROG_LAYER],
         sum.take[TAKE_WAITANY], sum.take[TAKE_PROBE], sum.tests, sum.restores,
         sum.outcomes, sum.steps, sum.output_twice);
  printf("%" PRIu64 " schedules, %" PRIu64 " passed, %" PRIu64 " failed\n",
         passed + failed, passed, failed);
  return failed ? 1 : 0;
}
