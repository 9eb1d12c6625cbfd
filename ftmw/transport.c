/* The transport (see transport.h): the job's peers over the link layer.
 * It decides what each frame means for the peer it came from (who a
 * connection is, HELLO and a spare's activation, is join.c's), declares
 * peers failed and fences them, chooses the next primary, and carries out
 * the work the application submits. The link (link.c) owns the sockets;
 * the loop (loop.c) decides which thread runs. Everything here runs on
 * the thread that owns the loop, except ftmw_transport_start/submit/stop
 * and the waits. */
#include "ftmw_impl.h"
#include "down.h"
#include "transport.h"
#include "abort.h"
#include "partition.h"
#include "term.h"
#include "inbox.h"
#include "join.h"
#include "loop.h"
#include "leave.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- waiting ------------------------------------------------------------ */

/* Whether op is settled, for ftmw_op_wait_locked. */
static int settled(const void *arg) {
  const ftmw_out *o = &((const ftmw_op *)arg)->out;
  return o->done && (!o->want_ack || o->acked || o->failed);
}

int ftmw_transport_wait_locked(ftmw_ctx *cx, int64_t ms) {
  return ftmw_loop_wait_change_locked(&cx->loop, ms);
}

int ftmw_op_wait_locked(ftmw_ctx *cx, ftmw_op *op) {
  ftmw_loop_wait_locked(&cx->loop, settled, op, -1);
  return op->out.failed ? FT_ERR_PEER_FAILED : FT_SUCCESS;
}

/* --- peers: frames ----------------------------------------------------- */

/* FENCE from master m: it declared this process failed (ftmw_peer_down),
 * and the job has gone on without it, a worker restored elsewhere, a
 * master replaced by the next in line. The process leaves at once, as if
 * it had crashed (no exit handler: a master does not write the job's
 * exit status), whatever its application thread is doing. */
static void fenced(const ftmw_peer *m) {
  ftmw_trace("fenced", "\"by\":%d", m->id);
  ftmw_leave(FTMW_LEAVE_FENCED, 0, "declared failed by master %d (pid %d)",
             m->id, (int)getpid());
}

/* A frame that only a primary sends, from a master that is not primary
 * here: it took over, having seen the primary die first. What the dead
 * primary sent before it died may still wait unread here, on its own
 * connection, and comes first: a DECIDE it numbered earlier, a VERDICT.
 * (Seen: a new primary's resent DECIDE read before the last two of the
 * old one, refused as out of order.) Returns non-zero when c was closed
 * meanwhile. */
static int primary_first(ftmw_ctx *cx, ftmw_conn *c, const ftmw_peer *p,
                         int type) {
  if ((type != FTMW_FRAME_DECIDE && type != FTMW_FRAME_VERDICT &&
       type != FTMW_FRAME_KEPT && type != FTMW_FRAME_DOWN) ||
      p->kind != FTMW_ROLE_MASTER || cx->job.role != FTMW_ROLE_MASTER)
    return 0;
  int k = __atomic_load_n(&cx->st.primary, __ATOMIC_RELAXED);
  if (k == p->id || k == cx->job.id || cx->st.masters[k].conn == NULL)
    return 0;
  ftmw_link_drain(cx->st.masters[k].conn);
  return !ftmw_link_open(c);
}

void ftmw_transport_route(ftmw_ctx *cx, int type, ftmw_frame_fn fn) {
  cx->routes[type] = fn;
}

/* Returns non-zero when the connection was closed. */
static int on_frame(void *ctx, ftmw_conn *c, void *peer, const ftmw_hdr *h,
                    void *payload) {
  ftmw_ctx *cx = ctx;
  ftmw_peer *p = peer;
  if (h->type == FTMW_FRAME_ACTIVATED && p->kind == FTMW_ROLE_SPARE)
    return ftmw_join_adopt(cx, c, p,
                           h); /* checked there: it bears the new identity */
  if (h->type == FTMW_FRAME_ACTIVATE && cx->st.activated &&
      h->src == p->pid_wire && h->epoch == p->epoch && h->tag == cx->job.id &&
      h->seq == cx->job.epoch)
    return 0; /* a master that took over makes it again the worker it is
                 (addressed to the spare it was): its ACTIVATED is on the way */
  /* Fencing: every frame must come from the bound incarnation, to us. */
  if (h->src != p->pid_wire || h->epoch != p->epoch || h->dst != ftmw_job_pid(&cx->job)) {
    ftmw_msg_free_data(payload);
    ftmw_peer_down(cx, p, 0,
                   "protocol error: frame from a wrong identity or epoch");
    return 1;
  }
  if (primary_first(cx, c, p, h->type)) {
    ftmw_msg_free_data(payload);
    return 1;
  }
  if (cx->routes[h->type] != NULL) /* the wire checked the type */
    return cx->routes[h->type](cx, p, h, payload) || !ftmw_link_open(c);
  switch (h->type) {
  case FTMW_FRAME_CONFIRM:
  case FTMW_FRAME_COPY: /* only a worker to a replica */
    if (cx->job.role != FTMW_ROLE_MASTER || cx->job.M == 0 ||
        p->kind != FTMW_ROLE_WORKER ||
        (h->type == FTMW_FRAME_CONFIRM && h->seq == 0)) {
      ftmw_msg_free_data(payload);
      ftmw_peer_down(cx, p, 0, "protocol error: unexpected COPY or CONFIRM");
      return 1;
    }
    if (h->type == FTMW_FRAME_CONFIRM) {
      uv_mutex_lock(&cx->st.lock);
      ftmw_inbox_confirm_locked(cx, p, h->seq);
      uv_mutex_unlock(&cx->st.lock);
      return 0;
    }
    /* fall through */
  case FTMW_FRAME_DATA:
    if (ftmw_inbox_data(cx, c, p, h, payload) != 0) {
      ftmw_peer_down(cx, p, 0, "out of memory for an inbound message");
      return 1;
    }
    return !ftmw_link_open(c);
  case FTMW_FRAME_ACK:
    if (ftmw_link_acked(c, h->seq) != 0) {
      ftmw_peer_down(cx, p, 0, "protocol error: unexpected ACK");
      return 1;
    }
    return 0;
  case FTMW_FRAME_WELCOME:
  case FTMW_FRAME_ACTIVATED: {
    ftmw_place at;
    if (h->type == FTMW_FRAME_WELCOME) {
      /* Only a master answers a HELLO, once: it says where it runs. */
      int rc = p->kind == FTMW_ROLE_MASTER && !p->welcomed
                   ? ftmw_wire_decode_welcome(payload, h->len, &at)
                   : FTMW_WIRE_ETYPE;
      ftmw_msg_free_data(payload);
      if (rc != FTMW_WIRE_OK) {
        ftmw_peer_down(cx, p, 0,
                       "protocol error: unexpected or malformed WELCOME");
        return 1;
      }
    }
    uv_mutex_lock(&cx->st.lock);
    if (h->type == FTMW_FRAME_WELCOME)
      ftmw_peer_place_locked(p, &at);
    p->welcomed = 1;
    if (p->state == FTMW_PEER_JOINING)
      ftmw_peer_set_locked(cx, p, FTMW_PEER_ALIVE,
                           h->type == FTMW_FRAME_WELCOME ? "welcomed"
                                                         : "activated");
    ftmw_loop_wake_locked(&cx->loop);
    uv_mutex_unlock(&cx->st.lock);
    return 0;
  }
  case FTMW_FRAME_FIN:
  case FTMW_FRAME_BYE: {
    uv_mutex_lock(&cx->st.lock);
    if (h->type == FTMW_FRAME_FIN) {
      p->fin = 1;
      if (p->kind == FTMW_ROLE_WORKER && (h->flags & FTMW_FLAG_LEAVING))
        cx->st.failure_seen = 1; /* it skips MPI_Finalize (term.h) */
    } else {
      p->bye = 1;
      p->bye_clean = (h->flags & FTMW_FLAG_CLEAN) != 0;
    }
    int from_primary = p->kind == FTMW_ROLE_MASTER && p->id == cx->st.primary;
    ftmw_loop_wake_locked(&cx->loop);
    uv_mutex_unlock(&cx->st.lock);
    if (from_primary) /* after SIGTERM a computing worker need not finish */
      ftmw_term_on_primary_end(cx, h->type == FTMW_FRAME_BYE,
                               (h->flags & FTMW_FLAG_STOPPING) != 0);
    return 0;
  }
  case FTMW_FRAME_DOWN: {
    if (p->kind != FTMW_ROLE_MASTER || cx->job.role != FTMW_ROLE_MASTER ||
        h->tag > cx->job.W) {
      ftmw_peer_down(cx, p, 0, "protocol error: unexpected DOWN");
      return 1;
    }
    ftmw_peer *w = &cx->st.workers[h->tag];
    uv_mutex_lock(&cx->st.lock);
    int live = w->epoch == (uint32_t)h->seq && ftmw_peer_is_live(w);
    uv_mutex_unlock(&cx->st.lock);
    if (live)
      ftmw_peer_down(cx, w, 0, "declared failed by the primary");
    return 0;
  }
  case FTMW_FRAME_ABORT:
    p->abort_heard = 1;
    ftmw_abort_start(cx, h->tag, p);
    return 0;
  case FTMW_FRAME_FENCE:
    if (p->kind != FTMW_ROLE_MASTER) {
      ftmw_peer_down(cx, p, 0, "protocol error: FENCE from a non-master");
      return 1;
    }
    fenced(p);
    return 1; /* not reached */
  case FTMW_FRAME_ACTIVATE:
    if (cx->job.role != FTMW_ROLE_SPARE || h->tag < 1 || h->tag > cx->job.W) {
      ftmw_peer_down(cx, p, 0, "protocol error: unexpected ACTIVATE");
      return 1;
    }
    ftmw_join_activate(cx, c, p, h);
    return 0;
  default:
    ftmw_peer_down(cx, p, 0, "protocol error: unexpected frame");
    return 1;
  }
}

/* --- the link's upcalls ------------------------------------------------- */

static const char *name_of(void *ctx, const void *peer, char *buf, size_t len) {
  (void)ctx;
  return ftmw_peer_name(peer, buf, len);
}

/* A peer that said goodbye may close; any other close is a crash, even
 * after a worker's FIN: until BYE it must stay connected, and a death
 * then still makes MPI_Finalize unsafe for the rest. That is the
 * primary's to judge: a replica does not see the BYE the primary sends a
 * worker or a spare (only once every replica has sent its FIN), only the
 * process leaving after it. */
static int finished_locked(ftmw_ctx *cx, const ftmw_peer *p) {
  int replica = ftmw_is_replica(cx);
  return (p->kind == FTMW_ROLE_WORKER && p->fin &&
          (cx->st.bye_sent || replica)) ||
         (p->kind == FTMW_ROLE_SPARE &&
          (cx->st.bye_sent || (replica && cx->st.finalizing))) ||
         /* a master after its BYE; a replica after its FIN, unless
          * we are the primary and have not said BYE yet */
         (p->kind == FTMW_ROLE_MASTER &&
          (p->bye || (p->fin && p->id != cx->st.primary &&
                      (cx->st.bye_sent || cx->job.role != FTMW_ROLE_MASTER ||
                       cx->job.id != cx->st.primary))));
}

static void on_down(void *ctx, ftmw_conn *c, void *peer, int why,
                    const char *text) {
  ftmw_ctx *cx = ctx;
  (void)c;
  ftmw_peer *p = peer;
  int done = 0;
  if (why == FTMW_DOWN_SILENT)
    ftmw_partition_check(cx, p, 1); /* a master cut off steps down here */
  if (why == FTMW_DOWN_CLOSED) {
    uv_mutex_lock(&cx->st.lock);
    done = finished_locked(cx, p);
    uv_mutex_unlock(&cx->st.lock);
  }
  ftmw_peer_down(cx, p, done, text);
  ftmw_abort_poll(cx); /* ending the job: was it the last one to close? */
}

/* Suspected: silent for over half the timeout; alive again when heard. */
static void on_quiet(void *ctx, ftmw_conn *c, void *peer, int quiet,
                     uint64_t silent_ms) {
  ftmw_ctx *cx = ctx;
  (void)c;
  ftmw_peer *p = peer;
  uv_mutex_lock(&cx->st.lock);
  if (quiet && p->state == FTMW_PEER_ALIVE) {
    char why[48];
    snprintf(why, sizeof(why), "silent for %llu ms",
             (unsigned long long)silent_ms);
    ftmw_peer_set_locked(cx, p, FTMW_PEER_SUSPECTED, why);
  } else if (!quiet && p->state == FTMW_PEER_SUSPECTED) {
    ftmw_peer_set_locked(cx, p, FTMW_PEER_ALIVE, "heard again");
  }
  uv_mutex_unlock(&cx->st.lock);
  /* A primary left with no majority of the masters steps down now, half a
   * timeout before those that have one declare it failed (partition.h). */
  if (quiet && p->kind == FTMW_ROLE_MASTER)
    ftmw_partition_check(cx, p, 0);
}

static void on_stalled(void *ctx, uint64_t gap, uint64_t now, int long_stall) {
  ftmw_ctx *cx = ctx;
  /* Long enough to have been declared failed: what the masters said comes
   * first, before anything else read in this pass (a worker's close may
   * come before the FENCE that explains it), so that a fenced process
   * acts on nothing after its stall but the FENCE. */
  if (long_stall)
    for (int k = 0; k <= cx->job.M; k++)
      if (cx->st.masters[k].conn != NULL)
        ftmw_link_drain(cx->st.masters[k].conn);
  if (cx->st.orphan_since)
    cx->st.orphan_since = ftmw_link_later(cx->st.orphan_since, gap, now);
}

/* The tick.sleep and tick.spin faults: the loop's thread asleep, or on a
 * CPU (spin), without running the loop, until a master has cut this
 * process off (declared it failed, and closed its connection), for at
 * most max_ms. */
static void hang_until_cut(ftmw_ctx *cx, uint64_t max_ms, int spin) {
  uint64_t end = ftmw_now_ms() + max_ms;
  while (ftmw_now_ms() < end) {
    struct pollfd fds[FTMW_MAX_MASTERS];
    int n = 0;
    for (int k = 0; k <= cx->job.M; k++) {
      int fd =
          cx->st.masters[k].conn ? ftmw_link_fd(cx->st.masters[k].conn) : -1;
      if (fd >= 0)
        fds[n++] = (struct pollfd){.fd = fd, .events = POLLRDHUP};
    }
    if (poll(fds, (nfds_t)n, spin ? 0 : 100) > 0)
      for (int i = 0; i < n; i++)
        if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
          return;
  }
}

static void on_tick_start(void *ctx) {
  ftmw_ctx *cx = ctx;
  uint64_t to = (uint64_t)cx->job.cfg.timeout_ms;
  if (ftmw_fault_fires(FTMW_FAULT_TICK_STARVE)) /* waits for a CPU */
    ftmw_fault_starve(4 * to);
  if (ftmw_fault_fires(FTMW_FAULT_TICK_SLEEP)) /* asleep, loop not run */
    hang_until_cut(cx, (FTMW_LINK_SPARED_MAX + 2) * to, 0);
  if (ftmw_fault_fires(FTMW_FAULT_TICK_SPIN)) /* on a CPU, loop not run */
    hang_until_cut(cx, (FTMW_LINK_SPARED_MAX + 2) * to, 1);
}

/* A worker restored without waiting for it that has not joined by its
 * deadline failed (restore.c): the next call that names it reports it. */
static void check_joins(ftmw_ctx *cx, uint64_t now) {
  if (cx->job.role != FTMW_ROLE_MASTER)
    return;
  uv_mutex_lock(&cx->st.lock);
  for (int r = 1; r <= cx->job.W; r++) {
    ftmw_peer *p = &cx->st.workers[r];
    if (ftmw_peer_restoring(p) && now >= p->join_by &&
        p->state == FTMW_PEER_JOINING) {
      char why[64];
      snprintf(why, sizeof(why), "did not connect within %llu ms",
               (unsigned long long)(now - p->restore_t0 / 1000000u));
      ftmw_peer_failed_locked(cx, p, 1, why);
      ftmw_log("worker %d %s", r, why); /* rare: under the lock */
    }
  }
  uv_mutex_unlock(&cx->st.lock);
}

/* A worker or spare whose masters are all gone leaves, a timeout later. */
static void on_tick(void *ctx, uint64_t now) {
  ftmw_ctx *cx = ctx;
  check_joins(cx, now);
  ftmw_abort_poll(cx);
  ftmw_term_poll(cx, now);
  if (cx->st.orphan_since && now > cx->st.orphan_since &&
      now - cx->st.orphan_since > (uint64_t)cx->job.cfg.timeout_ms) {
    ftmw_trace("orphan_exit", NULL);
    ftmw_leave(FTMW_LEAVE_ORPHANED, 0, "every master is gone");
  }
}

static const ftmw_link_ops link_ops = {
    .on_hello = ftmw_join_hello,
    .on_frame = on_frame,
    .on_down = on_down,
    .on_quiet = on_quiet,
    .on_stalled = on_stalled,
    .on_tick_start = on_tick_start,
    .on_tick = on_tick,
    .name = name_of,
};

/* --- work from the application ------------------------------------------ */

static void op_finish(ftmw_ctx *cx, ftmw_op *op, int failed) {
  ftmw_link_finish(&cx->loop, &op->out, failed);
}

/* Writes op's frame and the frames right after it in work that go to
 * the same incarnation of its peer: one batch, one system call. */
static void do_frames(ftmw_ctx *cx, ftmw_op *op, ftmw_qnode *work) {
  ftmw_peer *p = op->peer;
  ftmw_conn *c = p->conn;
  ftmw_out *outs[FTMW_LINK_BATCH_MAX];
  ftmw_op *ops[FTMW_LINK_BATCH_MAX];
  unsigned n = 0;
  ops[n] = op;
  outs[n++] = &op->out;
  while (n < FTMW_LINK_BATCH_MAX && !ftmw_q_empty(work)) {
    ftmw_op *next = FTMW_CONTAINER_OF(ftmw_q_head(work), ftmw_op, node);
    if (next->kind != FTMW_OP_FRAME || next->peer != p ||
        next->epoch != op->epoch)
      break;
    ftmw_q_remove(&next->node);
    ops[n] = next;
    outs[n++] = &next->out;
  }
  uv_mutex_lock(&cx->st.lock);
  int ok = c != NULL && ftmw_link_open(c) && p->epoch == op->epoch &&
           ftmw_peer_is_live(p);
  /* A worker restored without waiting for it has not joined yet: its
   * frames wait for it (on_hello writes them, or its failure fails them). */
  int wait = !ok && c == NULL && p->epoch == op->epoch &&
             p->state == FTMW_PEER_JOINING && ftmw_peer_restoring(p);
  for (unsigned k = 0; wait && k < n; k++)
    ftmw_q_insert_tail(&p->pending, &ops[k]->node);
  uv_mutex_unlock(&cx->st.lock);
  if (ok) {
    ftmw_link_write(c, outs, n);
  } else if (!wait) {
    for (unsigned k = 0; k < n; k++)
      op_finish(cx, ops[k], 1);
  }
}

static void do_connect(ftmw_ctx *cx, ftmw_op *op) {
  ftmw_peer *p = op->peer;
  ftmw_conn *c = NULL;
  int rc = ftmw_link_connect(&cx->link, (const struct sockaddr *)&op->addr, p,
                             p->pid_wire, &p->at, &c);
  if (rc == 0) {
    p->conn = c;
  } else {
    char why[96];
    snprintf(why, sizeof(why), "cannot connect: %s", uv_strerror(rc));
    ftmw_peer_down(cx, p, 0, why);
  }
  op_finish(cx, op, rc != 0);
}

/* Sends ACTIVATE to a spare and rebinds its connection to the worker slot
 * it becomes; the slot turns ALIVE when ACTIVATED comes back. */
static void do_activate(ftmw_ctx *cx, ftmw_op *op) {
  ftmw_peer *sp = op->peer, *w = op->target;
  ftmw_conn *c = sp->conn;
  if (c == NULL && w->conn != NULL && w->from_spare == sp->id + 1) {
    /* Its ACTIVATED came first, answering the same ACTIVATE from the
     * primary this master took over from (join.c, own_restore). */
    op_finish(cx, op, 0);
    return;
  }
  if (c != NULL && ftmw_link_open(c))
    ftmw_link_send(c, FTMW_FRAME_ACTIVATE, w->id, w->epoch, 0, NULL, 0);
  /* c is freed only by a later pass of the loop: still readable here. */
  if (c == NULL || !ftmw_link_open(c)) { /* gone, or ACTIVATE not queued */
    uv_mutex_lock(&cx->st.lock);
    ftmw_peer_failed_locked(cx, w, 0, "its spare is gone");
    uv_mutex_unlock(&cx->st.lock);
    op_finish(cx, op, 1);
    return;
  }
  uv_mutex_lock(&cx->st.lock);
  ftmw_peer_set_locked(cx, sp, FTMW_PEER_FINISHED, "activated");
  ftmw_peer_place_locked(w, &sp->at);
  uv_mutex_unlock(&cx->st.lock);
  sp->conn = NULL;
  ftmw_link_bind(c, w, w->pid_wire, &w->at);
  w->conn = c;
  op_finish(cx, op, 0);
}

/* The application stops a live worker (timed.h): declared failed here,
 * fenced, and in a primary told to the replicas, as a silent one is. An
 * incarnation that is already gone or replaced is left alone. */
static void do_fence(ftmw_ctx *cx, ftmw_op *op) {
  ftmw_peer *p = op->peer;
  uv_mutex_lock(&cx->st.lock);
  int live = p->epoch == op->epoch && ftmw_peer_is_live(p);
  uv_mutex_unlock(&cx->st.lock);
  if (live && p->conn != NULL)
    ftmw_peer_down(cx, p, 0, op->why);
  op_finish(cx, op, !live);
}

static void unbind_all(ftmw_peer *v, int from, int to) {
  for (int i = from; v != NULL && i <= to; i++)
    v[i].conn = NULL;
}

static void stop_all(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W && cx->job.role == FTMW_ROLE_MASTER; r++)
    ftmw_inbox_drop_held(&cx->st.workers[r]);
  unbind_all(cx->st.workers, 1, cx->job.W);
  unbind_all(cx->st.masters, 0, cx->job.M);
  unbind_all(cx->st.spares, 0, cx->job.S - 1);
  ftmw_link_stop(&cx->link);
  ftmw_term_close();
  ftmw_loop_close_handles(&cx->loop);
}

/* The ops submitted so far (st.lock held), for run_ops. */
static void take_ops_locked(void *ctx, ftmw_qnode *into) {
  ftmw_ctx *cx = ctx;
  ftmw_q_move(&cx->st.submit, into);
}

/* Carries out the ops taken, in order: run by a waiting call when it
 * takes the loop, and by the I/O thread at each pass (loop.h). A STOP
 * ends the loop's work: what follows it is not carried out. */
static void run_ops(void *ctx, ftmw_qnode *work) {
  ftmw_ctx *cx = ctx;
  while (!ftmw_q_empty(work)) {
    ftmw_op *op = FTMW_CONTAINER_OF(ftmw_q_head(work), ftmw_op, node);
    ftmw_q_remove(&op->node);
    switch (op->kind) {
    case FTMW_OP_FRAME: do_frames(cx, op, work); break;
    case FTMW_OP_CONNECT: do_connect(cx, op); break;
    case FTMW_OP_ACTIVATE: do_activate(cx, op); break;
    case FTMW_OP_FENCE: do_fence(cx, op); break;
    case FTMW_OP_ABORT: {
      int code = op->code; /* op is the caller's once finished */
      op_finish(cx, op, 0);
      ftmw_abort_start(cx, code, NULL);
      break;
    }
    case FTMW_OP_STOP:
      op_finish(cx, op, 0);
      stop_all(cx);
      return;
    }
  }
}

int ftmw_transport_start(ftmw_ctx *cx, int listen) {
  /* Traced from its first event on: the loop may trace from now on, on
   * either thread. */
  ftmw_trace_open(cx->job.cfg.trace);
  const ftmw_loop_work work = {cx, take_ops_locked, run_ops};
  if (ftmw_loop_init(&cx->loop, &cx->st.lock, &work,
                     2 * (uint64_t)cx->job.cfg.heartbeat_ms) != 0)
    return FT_ERR_INTERNAL;
  ftmw_link_cfg cfg = {.heartbeat_ms = (uint64_t)cx->job.cfg.heartbeat_ms,
                       .timeout_ms = (uint64_t)cx->job.cfg.timeout_ms,
                       .max_message = cx->job.cfg.max_message};
  memcpy(cfg.secret, cx->job.secret, sizeof(cfg.secret));
  ftmw_link_init(&cx->link, &cx->loop, &cfg, &link_ops, cx);
  ftmw_join_start(cx);
  if (listen) {
    int rc = ftmw_link_listen(&cx->link, cx->st.listen_ip, &cx->st.listen_port);
    if (rc != 0) {
      ftmw_log("cannot listen on %s: %s", cx->st.listen_ip, uv_strerror(rc));
      ftmw_link_stop(&cx->link);
      ftmw_loop_discard(&cx->loop);
      return FT_ERR_NETWORK;
    }
  }
  ftmw_term_start(cx, ftmw_loop_uv(&cx->loop), cx->job.cfg.term_grace_ms);
  return ftmw_loop_start(&cx->loop) == 0 ? FT_SUCCESS : FT_ERR_INTERNAL;
}

void ftmw_transport_submit(ftmw_ctx *cx, ftmw_op *op, int lock_held) {
  if (!lock_held)
    uv_mutex_lock(&cx->st.lock);
  op->out.done = op->out.acked = op->out.failed = 0;
  ftmw_q_insert_tail(&cx->st.submit, &op->node);
  if (!lock_held)
    uv_mutex_unlock(&cx->st.lock);
}

void ftmw_transport_stop(ftmw_ctx *cx) {
  ftmw_op op = {.kind = FTMW_OP_STOP};
  ftmw_transport_submit(cx, &op, 0);
  ftmw_loop_stop(&cx->loop);
}

uint64_t ftmw_transport_stalled_ms(ftmw_ctx *cx) {
  return ftmw_link_stalled_ms(&cx->link);
}

void ftmw_op_frame(ftmw_ctx *cx, ftmw_op *op, ftmw_peer *p, int type, int tag,
                   unsigned flags, const void *data, size_t len) {
  uv_buf_t piece = {.base = (char *)data, .len = len};
  ftmw_op_frame_v(cx, op, p, type, tag, flags, &piece, len ? 1 : 0);
}

void ftmw_op_frame_v(ftmw_ctx *cx, ftmw_op *op, ftmw_peer *p, int type, int tag,
                     unsigned flags, const uv_buf_t *pieces, unsigned n) {
  ftmw_out *o = &op->out;
  size_t len = 0;
  o->nbufs = 1;
  for (unsigned i = 0; i < n; i++) {
    if (pieces[i].len == 0)
      continue;
    o->bufs[o->nbufs++] = pieces[i]; /* uv_buf_init would cut len to 32 bits */
    len += pieces[i].len;
  }
  ftmw_hdr h = {.type = (uint8_t)type,
                .flags = (uint16_t)flags,
                .src = ftmw_job_pid(&cx->job),
                .dst = p->pid_wire,
                .tag = tag,
                .epoch = cx->job.epoch,
                .seq = op->out.seq,
                .len = len};
  ftmw_wire_encode(o->hdr, &h);
  op->kind = FTMW_OP_FRAME;
  op->peer = p;
  op->epoch = p->epoch;
  o->bufs[0] = uv_buf_init((char *)o->hdr, FTMW_HDR_SIZE);
}
