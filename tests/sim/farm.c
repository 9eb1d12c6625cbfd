/* The programs the simulator runs (see farm.h). A master records each
 * call's outcome (note) for main.c's checks, and fails its program
 * (fail_prog) where a farm sees a wrong, missing or doubled result. */
#define _GNU_SOURCE
#include "farm.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sim_call_names[] = {"?",       "send",  "recv",  "restore",
                                      "stop",    "post",  "probe", "test",
                                      "testany", "bcast", "next"};
const char *const sim_prog_names[] = {"farm", "logged farm", "logged rounds",
                                      "farm layer"};
const char *const sim_take_names[] = {"ft_recv", "ft_waitany", "ft_probe"};
sim_farm_job sim_farm;
program sim_progs[SIM_MAX_NODES];

static int64_t work_of(int64_t task) { return task * 7919 + 13; }

/* Whether the program is one of ms_* calls. */
static int logged(void) {
  return sim_farm.prog == PROG_MS_FARM || sim_farm.prog == PROG_MS_ROUNDS;
}

/* A task's right result: an ms_* program's depends on its problem. */
static int64_t result_of(int64_t task) {
  return work_of(task) + (logged() ? sim_farm.problem : 0);
}

/* --- the programs ------------------------------------------------------------ */

static void fail_prog(program *p, const char *fmt, int a, int b) {
  if (p->failure[0] == '\0')
    snprintf(p->failure, sizeof(p->failure), fmt, a, b);
}

static void note(program *p, int call, int rc, int source, int64_t task,
                 int64_t value) {
  if (p->nseen == MAX_OUTCOMES)
    return;
  outcome *o = &p->seen[p->nseen++];
  *o = (outcome){call, rc, rc > 0 ? 0 : p->f.error(), source, task, value,
                 sim_now_ns};
  sim_log("node %d: %s #%d rc %d err %d source %d task %" PRId64,
          sim_node_self()->id, sim_call_names[call], p->nseen - 1, rc, o->err,
          source, task);
}

static int compute_ready(void *arg) {
  (void)arg;
  return 0;
}

/* A task's work: it takes virtual time. */
static void compute(void) {
  sim_block(compute_ready, NULL, sim_now_ns + 100000 + sim_below(2000000));
}

static int layer_task(ft_farm_task *t, void *ctx);

/* A worker of the farm layer runs ft_farm_work. One of an ms_* program
 * first takes the problem (its master's replay sends it again to a
 * restored one), and answers each task with its tag where the master
 * receives by tag (the logged rounds; the logged farm by ft_waitany,
 * multistart's way). */
static void worker(program *p) {
  if (sim_farm.prog == PROG_LAYER) {
    p->f.farm_work(layer_task, p);
    p->f.finalize();
    return;
  }
  int64_t problem = 0;
  FT_Status st;
  int rc = 1;
  if (logged() && sim_farm.by_bcast)
    rc = p->f.bcast(&problem, 1, FT_LONG_LONG, 0);
  else if (logged())
    rc = p->f.recv(&problem, 1, FT_LONG_LONG, 0, TAG_PROBLEM, &st);
  /* The task's tag for both parts of the logged rounds' answer (one
   * cycle), and for the logged farm's taken by ft_waitany. */
  int by_tag = sim_farm.prog == PROG_MS_ROUNDS ||
               (logged() && sim_farm.take == TAKE_WAITANY);
  for (; rc == 1;) {
    int64_t task;
    rc = p->f.recv(&task, 1, FT_LONG_LONG, 0, FT_ANY_TAG, &st);
    if (rc != 1 || st.tag == TAG_STOP)
      break;
    compute();
    int64_t out[2] = {task, work_of(task) + problem};
    int tag = by_tag ? st.tag : TAG_RESULT;
    /* The two-part program: a first part the master receives after the
     * result, naming this worker (receives by tag in another order than
     * sent). */
    int64_t first[2] = {task, -work_of(task)};
    if (sim_farm.two_parts &&
        p->f.send(first, 2, FT_LONG_LONG, 0, by_tag ? st.tag : TAG_FIRST) != 2)
      break;
    if (p->f.send(out, 2, FT_LONG_LONG, 0, tag) != 2)
      break;
  }
  p->f.finalize();
}

/* The thesis' farm, with a master's bookkeeping of who holds what. */
typedef struct {
  program *p;
  int W, live, nqueue;
  int64_t holds[FTMW_SIM_MAX_W + 1], queue[MAX_TASKS];
  int gone[FTMW_SIM_MAX_W + 1];
  int ntasks[FTMW_SIM_MAX_W + 1];        /* the logged farm's tags alternate */
  /* Each worker's receive buffers, which the ms_* log records: the
   * result's (TAKE_WAITANY, the logged rounds), the first part's. */
  int64_t posted[FTMW_SIM_MAX_W + 1][2], first[FTMW_SIM_MAX_W + 1][2];
} farm;

static int recover(farm *f, int w);

/* The logged farm's send of the task worker w holds: a failure is
 * recovered from by the restore, whose replay sends the task again, and
 * with ft_waitany the result's receive follows, with the task's tag (a
 * worker's tags alternate, so that each task closes the cycle before). */
static void give_logged(farm *f, int w) {
  program *p = f->p;
  int tag = TAG_TASK;
  if (sim_farm.take == TAKE_WAITANY && (f->ntasks[w]++ & 1))
    tag = TAG_TASK_B;
  int s = p->f.ms_send(&f->holds[w], 1, FT_LONG_LONG, w, tag);
  note(p, CALL_SEND, s, w, f->holds[w], 0);
  if (s != 1 && !recover(f, w))
    return;
  if (sim_farm.take == TAKE_WAITANY) {
    s = p->f.ms_irecv(f->posted[w], 2, FT_LONG_LONG, w, tag);
    note(p, CALL_POST, s, w, f->holds[w], 0);
    if (s != 1)
      recover(f, w); /* the replay posts it again */
  }
}

/* Gives worker w what it holds, or the next task if it holds none; a
 * failure reported at the send is recovered from at once. */
static void give(farm *f, int w) {
  if (f->gone[w])
    return;
  if (f->holds[w] < 0 && f->nqueue > 0)
    f->holds[w] = f->queue[--f->nqueue];
  if (f->holds[w] < 0)
    return;
  if (sim_farm.tests) { /* a failure found here is one the send would tell */
    int t = f->p->f.test(w);
    note(f->p, CALL_TEST, t, w, f->holds[w], 0);
    /* The logged farm's restore replays only the problem (the last
     * task was answered): the task is still to send. */
    if (t == 1 && (!recover(f, w) || !logged()))
      return;
  }
  if (logged()) {
    give_logged(f, w);
    return;
  }
  int s = f->p->f.send(&f->holds[w], 1, FT_LONG_LONG, w, TAG_TASK);
  note(f->p, CALL_SEND, s, w, f->holds[w], 0);
  if (s == 1 && sim_farm.take == TAKE_WAITANY) { /* its result's receive */
    s = f->p->f.irecv(f->posted[w], 2, FT_LONG_LONG, w, TAG_RESULT);
    note(f->p, CALL_POST, s, w, f->holds[w], 0);
  }
  if (s != 1)
    recover(f, w);
}

/* The next result, in r from the worker in st->source, as the drawn way
 * takes it: 2, or 0 with the error set and st->source the worker whose
 * failure it reports (or the program failed: fail_prog). */
static int next_result(farm *f, int64_t r[2], FT_Status *st) {
  program *p = f->p;
  int rc, w = 0;
  switch (sim_farm.take) {
  case TAKE_WAITANY:
    rc = p->f.waitany(&w);
    st->source = w;
    if (rc > 0) {
      memcpy(r, f->posted[w], sizeof(f->posted[w]));
      return 2;
    }
    if (w < 1)
      fail_prog(p, "ft_waitany: %d, error %d", rc, p->f.error());
    return 0;
  case TAKE_PROBE:
    rc = p->f.probe(FT_ANY_SOURCE, TAG_RESULT, st);
    note(p, CALL_PROBE, rc, st->source, -1, 0);
    if (rc != 1)
      return 0;
    w = st->source;
    return p->f.recv(r, 2, FT_LONG_LONG, w, TAG_RESULT, st);
  default:
    return (logged() ? p->f.ms_recv : p->f.recv)(r, 2, FT_LONG_LONG,
                                                 FT_ANY_SOURCE, TAG_RESULT, st);
  }
}

/* Worker w was reported failed: it starts again and gets back what it
 * held (the logged farm's replay sends it), or, with no spare left, that
 * goes back in the queue for the idle workers. Returns whether w is
 * back. */
static int recover(farm *f, int w) {
  api *a = &f->p->f;
  int ok = !logged()                       ? a->restore(w)
           : sim_farm.take == TAKE_WAITANY ? a->ms_irestore(w)
                                           : a->ms_restore(w);
  note(f->p, CALL_RESTORE, ok, w, f->holds[w], 0);
  if (ok) {
    if (!logged())
      give(f, w);
    return 1;
  }
  if (!f->gone[w]) /* a failure may be told again: a posted receive's */
    f->live--;
  f->gone[w] = 1;
  if (f->holds[w] >= 0)
    f->queue[f->nqueue++] = f->holds[w];
  f->holds[w] = -1;
  for (int v = 1; v <= f->W && sim_farm.prog != PROG_MS_ROUNDS; v++)
    if (f->holds[v] < 0)
      give(f, v);
  return 0;
}

/* The logged farm's problem, to every worker: by ms_bcast, after which
 * ft_test says who failed, or by ms_send to each. */
static void send_problem(farm *f) {
  program *p = f->p;
  int64_t pb = sim_farm.problem;
  if (sim_farm.by_bcast) {
    int rc = p->f.ms_bcast(&pb, 1, FT_LONG_LONG, 0);
    note(p, CALL_BCAST, rc, 0, -1, pb);
    for (int w = 1; rc != 1 && w <= f->W; w++) {
      int t = p->f.test(w);
      note(p, CALL_TEST, t, w, -1, 0);
      if (t == 1)
        recover(f, w);
    }
    return;
  }
  for (int w = 1; w <= f->W; w++) {
    int rc = p->f.ms_send(&pb, 1, FT_LONG_LONG, w, TAG_PROBLEM);
    note(p, CALL_SEND, rc, w, -1, pb);
    if (rc != 1)
      recover(f, w);
  }
}

/* Worker w's result r: counts it, or fails the program (returning 0 when
 * it names no task). */
static int check_result(farm *f, int w, const int64_t r[2]) {
  program *p = f->p;
  if (w < 1 || w > f->W || r[0] < 0 || r[0] >= sim_farm.tasks) {
    fail_prog(p, "a result from %d for task %d", w, (int)r[0]);
    return 0;
  }
  if (p->got[r[0]]++)
    fail_prog(p, "task %d's result came twice (from %d)", (int)r[0], w);
  if (r[1] != result_of(r[0]))
    fail_prog(p, "task %d's result is wrong (from %d)", (int)r[0], w);
  if (f->holds[w] != r[0])
    fail_prog(p, "worker %d answered task %d, not the one it holds", w,
              (int)r[0]);
  return 1;
}

/* Receives worker w's answer, with the task's tag, in its buffers: 1, or
 * 0 when w could not be restored (its task queued again). A failure is
 * recovered from by ms_restore, whose replay receives what the failed
 * call should have, and the answer's other part after it. */
static int answer_of(farm *f, int w, int tag) {
  program *p = f->p;
  int64_t *part[2] = {f->first[w], f->posted[w]};
  for (int k = sim_farm.two_parts ? 0 : 1; k < 2; k++) {
    FT_Status st;
    part[k][0] = part[k][1] = -1;
    int rc = p->f.ms_recv(part[k], 2, FT_LONG_LONG, w, tag, &st);
    note(p, CALL_RECV, rc, w, part[k][0], part[k][1]);
    if (rc == 2)
      continue;
    if (p->f.error() != FT_ERR_PEER_FAILED) {
      fail_prog(p, "ms_recv(%d): error %d", w, p->f.error());
      return 0;
    }
    if (!recover(f, w))
      return 0;
  }
  return 1;
}

/* The logged rounds: each gives every live worker a task (its tags
 * alternate, so that each task closes the cycle before), then takes every
 * answer; a worker not restored leaves its task to the next round. */
static void rounds(farm *f, int *done) {
  program *p = f->p;
  int tag[FTMW_SIM_MAX_W + 1];
  while (*done < sim_farm.tasks && f->live > 0 && p->failure[0] == '\0') {
    for (int w = 1; w <= f->W; w++) {
      tag[w] = 0;
      if (f->gone[w] || (f->holds[w] < 0 && f->nqueue == 0))
        continue;
      if (f->holds[w] < 0)
        f->holds[w] = f->queue[--f->nqueue];
      tag[w] = f->ntasks[w]++ & 1 ? TAG_TASK_B : TAG_TASK;
      int s = p->f.ms_send(&f->holds[w], 1, FT_LONG_LONG, w, tag[w]);
      note(p, CALL_SEND, s, w, f->holds[w], 0);
      if (s != 1 && !recover(f, w))
        tag[w] = 0;
    }
    for (int w = 1; w <= f->W && p->failure[0] == '\0'; w++) {
      if (tag[w] == 0 || f->gone[w] || !answer_of(f, w, tag[w]))
        continue;
      const int64_t *a = f->first[w], *r = f->posted[w];
      if (!check_result(f, w, r))
        return;
      if (sim_farm.two_parts && (a[0] != r[0] || a[1] != -work_of(r[0])))
        fail_prog(p, "worker %d's first part is for task %d", w, (int)a[0]);
      p->results[r[0]] = r[1];
      ++*done;
      f->holds[w] = -1;
    }
  }
}

/* --- the farm layer ------------------------------------------------------- */

/* A worker's task: its output names the task. With checkpoints it saves
 * one halfway; a copy that resumes checks that it is this task's. */
static int layer_task(ft_farm_task *t, void *ctx) {
  program *p = ctx;
  size_t n;
  const int64_t *in = p->f.farm_input(t, &n);
  if (n != sizeof(int64_t) || in[0] != p->f.farm_task_id(t))
    return 1; /* the master sees FT_FARM_TASK_ERROR */
  int64_t task = in[0];
  if (sim_farm.checkpoints) {
    const int64_t *saved = p->f.farm_resumed(t, &n);
    if (saved != NULL && (n != sizeof(task) || *saved != task))
      return 3;
    if (saved == NULL) {
      compute();
      if (!p->f.farm_checkpoint(t, &task, sizeof(task)))
        return 2; /* every master is gone */
    }
  }
  compute();
  int64_t out[2] = {task, work_of(task)};
  return p->f.farm_reply(t, out, sizeof(out)) ? 0 : 2;
}

/* The master's farm: every task submitted, every result taken; each must
 * come once, right. Returns the tasks done. */
static int layer_master(program *p) {
  ft_farm_options o;
  p->f.farm_options_init(&o);
  o.depth = sim_farm.depth;
  o.max_attempts = 100; /* the faults never poison a task */
  o.duplicate = sim_farm.duplicate ? 0.25 : 0;
  ft_farm *fm = p->f.farm_create(&o);
  if (fm == NULL) {
    fail_prog(p, "ft_farm_create: error %d", p->f.error(), 0);
    return 0;
  }
  for (int64_t t = 0; t < sim_farm.tasks; t++)
    if (p->f.farm_submit(fm, &t, sizeof(t)) != t)
      fail_prog(p, "ft_farm_submit of task %d: error %d", (int)t, p->f.error());
  int done = 0, rc;
  ft_farm_result r;
  while ((rc = p->f.farm_next(fm, &r)) == 1 && p->failure[0] == '\0') {
    const int64_t *out = r.data;
    int ok = r.status == FT_FARM_OK && r.len == 2 * sizeof(int64_t) &&
             out[0] == r.id;
    note(p, CALL_NEXT, r.status, r.worker, r.id, ok ? out[1] : -1);
    if (!ok || r.id < 0 || r.id >= sim_farm.tasks) {
      fail_prog(p, "the farm layer's result for task %d: status %d", (int)r.id,
                r.status);
      break;
    }
    if (p->got[r.id]++)
      fail_prog(p, "task %d's result came twice (from %d)", (int)r.id,
                r.worker);
    if (out[1] != work_of(r.id))
      fail_prog(p, "task %d's result is wrong (from %d)", (int)r.id, r.worker);
    p->results[r.id] = out[1];
    done++;
  }
  note(p, CALL_NEXT, rc, 0, -1, 0);
  if (rc != 0 && p->failure[0] == '\0')
    fail_prog(p, "ft_farm_next: %d, error %d", rc, p->f.error());
  p->f.farm_destroy(fm);
  return done;
}

static void master(program *p, int W) {
  farm fm = {.p = p, .W = W, .live = W}, *f = &fm;
  int done = 0;
  if (sim_farm.prog == PROG_LAYER) {
    done = layer_master(p);
    f->live = 0; /* and no worker to stop: ft_farm_destroy did */
    for (int w = 1; w <= W; w++)
      f->gone[w] = 1;
  }
  for (int64_t t = sim_farm.tasks - 1; t >= 0 && f->live > 0; t--)
    f->queue[f->nqueue++] = t;
  for (int w = 1; w <= W; w++)
    f->holds[w] = -1;
  if (logged())
    send_problem(f);
  if (sim_farm.prog == PROG_MS_ROUNDS)
    rounds(f, &done);
  for (int w = 1; w <= W && sim_farm.prog != PROG_MS_ROUNDS; w++)
    if (f->holds[w] < 0) /* a recovery may have given it one already */
      give(f, w);
  while (done < sim_farm.tasks && f->live > 0 && p->failure[0] == '\0') {
    if (sim_farm.tests) {
      int t = p->f.testany();
      note(p, CALL_TESTANY, t, t, -1, 0);
      if (t >= 1 && t <= W && !f->gone[t]) {
        recover(f, t);
        continue;
      }
    }
    int64_t r[2] = {-1, -1};
    FT_Status st = {.source = -1};
    int rc = next_result(f, r, &st);
    note(p, CALL_RECV, rc, st.source, r[0], r[1]);
    if (p->failure[0] != '\0')
      break;
    int w = st.source;
    if (rc == 2) {
      if (!check_result(f, w, r))
        break;
      if (sim_farm.two_parts) {
        int64_t a[2] = {-1, -1};
        int rc1 = p->f.recv(a, 2, FT_LONG_LONG, w, TAG_FIRST, &st);
        note(p, CALL_RECV, rc1, w, a[0], a[1]);
        if (rc1 != 2) {
          p->got[r[0]]--; /* done again by the worker that replaces it */
          if (p->f.error() != FT_ERR_PEER_FAILED) {
            fail_prog(p, "ft_recv(%d, first part): error %d", w, p->f.error());
            break;
          }
          recover(f, w);
          continue;
        }
        if (a[0] != r[0] || a[1] != -work_of(r[0]))
          fail_prog(p, "worker %d's first part is for task %d", w, (int)a[0]);
      }
      p->results[r[0]] = r[1];
      done++;
      f->holds[w] = -1;
      give(f, w);
    } else if (p->f.error() == FT_ERR_PEER_FAILED && w >= 1 && w <= W) {
      recover(f, w);
    } else {
      fail_prog(p, "taking a result: %d, error %d", rc, p->f.error());
      break;
    }
  }
  int *gone = f->gone;
  for (int w = 1; w <= W; w++)
    if (!gone[w]) {
      int64_t stop = -1;
      int s = p->f.send(&stop, 1, FT_LONG_LONG, w, TAG_STOP);
      note(p, CALL_STOP, s, w, 0, 0);
    }
  /* The answer is written where this returns 1: a master that crashes
   * inside the call may take it along (in_last_call). */
  p->in_last_call = 1;
  p->ended_primary = p->f.is_primary();
  p->primary_at = sim_now_ns;
  p->in_last_call = 0;
  if (done < sim_farm.tasks && p->failure[0] == '\0')
    fail_prog(p, "the farm ended with %d of %d tasks done", done, sim_farm.tasks);
  p->f.finalize(); /* which tells the replicas the ft_is_primary of 1 */
  p->finalized = 1;
}

void sim_farm_app(void *arg) {
  sim_node *n = arg;
  program *p = n->user;
  int argc = 1, rank = -1, W = 0;
  char *args[] = {"ftmw-sim", NULL}, **argv = args;
  int rc = p->f.init(&argc, &argv, &rank, &W);
  if (rc < 0) {
    /* Cut off before it could join: it reaches no master, and says so
     * (the job goes on without it). Else a failure. */
    if (n->cut_at != 0)
      p->init_failed_cut = 1;
    else
      fail_prog(p, "ft_init failed (%d, rank %d)", rc, rank);
    sim_log("node %d: ft_init failed (%d, rank %d)", n->id, rc, rank);
    sim_exit_self(1);
  }
  sim_log("node %d: ft_init %d, rank %d", n->id, rc, rank);
  if (rc == 1)
    sim_farm.launched++;
  if (rank == 0) {
    p->role_master = 1;
    master(p, W);
  } else {
    worker(p);
  }
  sim_exit_self(0);
}

#define SYM(h, name) dlsym(h, name)

void sim_farm_bind(api *f, void *h) {
  f->init = SYM(h, "ft_init");
  f->finalize = SYM(h, "ft_finalize");
  f->send = SYM(h, "ft_send");
  f->recv = SYM(h, "ft_recv");
  f->irecv = SYM(h, "ft_irecv");
  f->waitany = SYM(h, "ft_waitany");
  f->probe = SYM(h, "ft_probe");
  f->restore = SYM(h, "ft_restore");
  f->test = SYM(h, "ft_test");
  f->testany = SYM(h, "ft_testany");
  f->is_primary = SYM(h, "ft_is_primary");
  f->error = SYM(h, "ft_error");
  f->errname = SYM(h, "ft_errname");
  f->bcast = SYM(h, "ft_bcast");
  f->ms_send = SYM(h, "ms_send");
  f->ms_recv = SYM(h, "ms_recv");
  f->ms_irecv = SYM(h, "ms_irecv");
  f->ms_restore = SYM(h, "ms_restore");
  f->ms_irestore = SYM(h, "ms_irestore");
  f->ms_bcast = SYM(h, "ms_bcast");
  f->farm_options_init = SYM(h, "ft_farm_options_init");
  f->farm_create = SYM(h, "ft_farm_create");
  f->farm_submit = SYM(h, "ft_farm_submit");
  f->farm_next = SYM(h, "ft_farm_next");
  f->farm_destroy = SYM(h, "ft_farm_destroy");
  f->farm_work = SYM(h, "ft_farm_work");
  f->farm_task_id = SYM(h, "ft_farm_task_id");
  f->farm_input = SYM(h, "ft_farm_input");
  f->farm_resumed = SYM(h, "ft_farm_resumed");
  f->farm_reply = SYM(h, "ft_farm_reply");
  f->farm_checkpoint = SYM(h, "ft_farm_checkpoint");
  if (!f->init || !f->finalize || !f->send || !f->recv || !f->irecv ||
      !f->waitany || !f->probe || !f->restore || !f->test || !f->testany ||
      !f->is_primary || !f->error || !f->errname || !f->bcast || !f->ms_send ||
      !f->ms_recv || !f->ms_irecv || !f->ms_restore || !f->ms_irestore ||
      !f->ms_bcast || !f->farm_options_init || !f->farm_create ||
      !f->farm_submit || !f->farm_next || !f->farm_destroy || !f->farm_work ||
      !f->farm_task_id || !f->farm_input || !f->farm_resumed ||
      !f->farm_reply || !f->farm_checkpoint) {
    fprintf(stderr, "ftmw-sim: the library lacks a call\n");
    exit(2);
  }
}

