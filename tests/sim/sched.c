/* The simulator's scheduler: coroutines, the virtual clock, the one
 * generator (see sim.h). */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* its longjmp refuses to change stacks */
#include "sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define STACK_BYTES (1u << 20)
#define MAX_COROS 64

static int always(void *arg) {
  (void)arg;
  return 1;
}

struct sim_coro {
  ucontext_t ctx; /* its start only */
  jmp_buf jb;     /* where it goes on */
  int started;
  void *stack;
  sim_node *node;
  void (*fn)(void *);
  void *arg;
  int done;
  int (*ready)(void *);
  void *ready_arg;
  uint64_t deadline;
  int timed_out;
};

sim_node sim_nodes[SIM_MAX_NODES];
int sim_nnodes;
uint64_t sim_now_ns;
uint64_t sim_steps;
uint64_t sim_hook_due;
uint64_t sim_log_hash = 1469598103934665603ull;
int sim_verbose;

static sim_coro coros[MAX_COROS];
static int ncoros;
static sim_coro *running;
static ucontext_t start_ctx;
static jmp_buf sched_jb;

/* Back to the scheduler, to go on from here later. _setjmp and _longjmp
 * switch without the signal mask (swapcontext's system call each time). */
static void to_scheduler(sim_coro *c) {
  if (_setjmp(c->jb) == 0)
    _longjmp(sched_jb, 1);
}
static uint64_t rng[4];

/* --- the generator ------------------------------------------------------- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sim_rand(void) {
  uint64_t r = rotl(rng[1] * 5, 7) * 9, t = rng[1] << 17;
  rng[2] ^= rng[0];
  rng[3] ^= rng[1];
  rng[1] ^= rng[2];
  rng[0] ^= rng[3];
  rng[2] ^= t;
  rng[3] = rotl(rng[3], 45);
  return r;
}

uint64_t sim_below(uint64_t n) { return n ? sim_rand() % n : 0; }

uint64_t sim_splitmix(uint64_t *z) {
  uint64_t x = (*z += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void sim_seed(uint64_t seed) {
  uint64_t z = seed;
  for (int i = 0; i < 4; i++)
    rng[i] = sim_splitmix(&z);
}

/* --- the log --------------------------------------------------------------- */

void sim_log(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (n >= (int)sizeof(line))
    n = sizeof(line) - 1;
  for (int i = 0; i < n; i++)
    sim_log_hash = (sim_log_hash ^ (uint8_t)line[i]) * 1099511628211ull;
  if (sim_verbose)
    fprintf(stderr, "[%10.3f ms] %s\n", sim_now_ns / 1e6, line);
}

/* --- coroutines ------------------------------------------------------------ */

sim_coro *sim_self(void) { return running; }
sim_node *sim_node_self(void) { return running ? running->node : NULL; }
int sim_coro_done(const sim_coro *c) { return c->done; }

static void trampoline(unsigned lo, unsigned hi) {
  sim_coro *c = (sim_coro *)(((uintptr_t)hi << 32) | lo);
  c->fn(c->arg);
  c->done = 1;
  _longjmp(sched_jb, 1); /* never resumed */
}

sim_coro *sim_spawn(sim_node *n, void (*fn)(void *), void *arg) {
  if (ncoros == MAX_COROS) {
    fprintf(stderr, "ftmw-sim: more than %d coroutines\n", MAX_COROS);
    abort();
  }
  sim_coro *c = &coros[ncoros++];
  memset(c, 0, sizeof(*c));
  c->stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c->stack == MAP_FAILED) {
    perror("ftmw-sim: mmap");
    abort();
  }
  c->node = n;
  c->ready = always; /* a new coroutine can run */
  c->fn = fn;
  c->arg = arg;
  getcontext(&c->ctx);
  c->ctx.uc_stack.ss_sp = c->stack;
  c->ctx.uc_stack.ss_size = STACK_BYTES;
  c->ctx.uc_link = NULL;
  uintptr_t p = (uintptr_t)c;
  makecontext(&c->ctx, (void (*)(void))trampoline, 2, (unsigned)p,
              (unsigned)(p >> 32));
  return c;
}

int sim_block(int (*ready)(void *), void *arg, uint64_t deadline) {
  sim_coro *c = running;
  if (c == NULL) {
    fprintf(stderr, "ftmw-sim: a blocking call outside a coroutine\n");
    abort();
  }
  c->ready = ready;
  c->ready_arg = arg;
  c->deadline = deadline;
  c->timed_out = 0;
  to_scheduler(c);
  return c->timed_out ? -1 : 0;
}

void sim_yield(void) { sim_block(always, NULL, 0); }

static int node_dead(const sim_node *n) { return !n->alive; }

void sim_kill_node(sim_node *n, int silent) {
  if (!n->alive)
    return;
  n->alive = 0;
  n->ended_ns = sim_now_ns;
  n->silent = silent;
  n->crashed = !n->exited;
  sim_log("node %d %s", n->id, n->exited ? "exited" : silent ? "lost" : "crashed");
  sim_net_node_gone(n, silent);
  if (running && running->node == n) {
    running->done = 1;
    _longjmp(sched_jb, 1); /* never resumed */
  }
}

void sim_exit_self(int status) {
  sim_node *n = sim_node_self();
  n->exited = 1;
  n->status = status;
  sim_log("node %d exit(%d)", n->id, status);
  sim_kill_node(n, 0);
  abort();
}

/* --- the run --------------------------------------------------------------- */

static int runnable(sim_coro *c) {
  if (c->done || node_dead(c->node))
    return 0;
  if (c->deadline && sim_now_ns >= c->deadline) {
    c->timed_out = !c->ready(c->ready_arg);
    return 1;
  }
  return c->ready(c->ready_arg);
}

int sim_run(void (*step_hook)(void), uint64_t max_ns, char *why, size_t n) {
  sim_coro *cand[MAX_COROS];
  for (;;) {
    if (step_hook) /* first: it may end the last node */
      step_hook();
    int live = 0;
    for (int i = 0; i < sim_nnodes; i++)
      live += sim_nodes[i].alive;
    if (live == 0)
      return 0;
    if (sim_now_ns > max_ns) {
      snprintf(why, n, "not ended after %.0f ms of virtual time",
               max_ns / 1e6);
      return -1;
    }
    sim_net_step();
    int nc = 0;
    for (int i = 0; i < ncoros; i++)
      if (runnable(&coros[i]))
        cand[nc++] = &coros[i];
    if (nc == 0) {
      /* Nothing can run: the clock jumps to what comes next. */
      uint64_t next = sim_net_next();
      if (sim_hook_due > sim_now_ns && (next == 0 || sim_hook_due < next))
        next = sim_hook_due;
      for (int i = 0; i < ncoros; i++) {
        sim_coro *c = &coros[i];
        if (!c->done && !node_dead(c->node) && c->deadline &&
            (next == 0 || c->deadline < next))
          next = c->deadline;
      }
      if (next == 0) {
        snprintf(why, n, "deadlock: no process can run and nothing is due");
        return -1;
      }
      if (next > sim_now_ns)
        sim_now_ns = next;
      continue;
    }
    sim_coro *c = cand[sim_below((uint64_t)nc)];
    sim_steps++;
    /* Every step costs a little CPU time: spinning loops end, and the
     * interleaving depends on the clock as it does on a machine. */
    sim_now_ns += 1000 + sim_below(20000);
    running = c;
    if (_setjmp(sched_jb) == 0) {
      if (c->started)
        _longjmp(c->jb, 1);
      c->started = 1;
      swapcontext(&start_ctx, &c->ctx); /* its first run */
    }
    running = NULL;
  }
}
