/* Who a connection is (join.h): HELLO and WELCOME, a replica's adoption
 * of a restored worker, a spare's activation. */
#include "join.h"

#include "down.h"
#include "ftmw_impl.h"
#include "localproc.h"
#include "loop.h"
#include "match.h"
#include "op.h"

#include <stdio.h>
#include <string.h>

const ftmw_place *ftmw_self_place(ftmw_ctx *cx) { return &cx->job.place; }

/* Tells the link who this process is, now (at start, and when a spare
 * becomes a worker). */
static void link_self(ftmw_ctx *cx) {
  ftmw_hello self = {.role = (uint32_t)cx->job.role,
                     .id = (uint32_t)cx->job.id,
                     .epoch = cx->job.epoch,
                     .at = cx->job.place};
  ftmw_link_set_self(&cx->link, &self, ftmw_job_pid(&cx->job));
}

void ftmw_join_start(ftmw_ctx *cx) {
  ftmw_proc_self(&cx->job.place, cx->job.host);
  link_self(cx);
}

/* Accepts the HELLO on c, telling the peer where this process runs. */
static void send_welcome(ftmw_ctx *cx, ftmw_conn *c) {
  uint8_t payload[FTMW_WELCOME_SIZE];
  ftmw_wire_encode_welcome(payload, &cx->job.place);
  ftmw_link_send(c, FTMW_FRAME_WELCOME, 0, 0, 0, payload, sizeof(payload));
}

/* A replica (or a master that took over) adopts connection c as worker
 * w's incarnation e, which the process announced itself: a spare's
 * ACTIVATED, or a spawned worker's HELLO. The primary's ft_restore made
 * it, after every replica had finished its exchanges with the old
 * incarnation; what that one left queued is dropped, as the primary
 * dropped it. An incarnation e this master has begun already is its own
 * ft_restore's, answered here (own_restore below): it joins. welcome:
 * answer a HELLO (before w is seen alive). */
static void adopt(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *w, uint32_t e,
                  int from_spare, const ftmw_place *at, int welcome) {
  if (w->conn != NULL)
    ftmw_peer_down(cx, w, 0, "replaced by the primary's ft_restore");
  ftmw_link_bind(c, w, w->pid_wire, &w->at);
  w->conn = c;
  if (welcome)
    send_welcome(cx, c);
  uv_mutex_lock(&cx->st.lock);
  int begun = e == w->epoch; /* ft_restore dropped what was queued */
  int dropped = begun ? 0 : ftmw_match_drop(w);
  if (begun)
    ftmw_peer_set_locked(cx, w, FTMW_PEER_ALIVE, "activated");
  else
    ftmw_peer_begin_locked(cx, w, e, FTMW_PEER_ALIVE, "adopted");
  w->fin = 0;
  w->from_spare = from_spare;
  ftmw_peer_place_locked(w, at);
  ftmw_loop_wake_locked(&cx->loop);
  uv_mutex_unlock(&cx->st.lock);
  ftmw_trace("adopted", "\"peer\":%d,\"peer_epoch\":%u,\"spare\":%d,"
             "\"dropped\":%d", w->id, e, from_spare - 1, dropped);
}

/* Worker p, restored without waiting for it, has joined on c: the frames
 * that waited for it go first, in order, then its restore is done. */
static void joined_late(ftmw_ctx *cx, ftmw_peer *p, ftmw_conn *c) {
  ftmw_qnode q;
  uv_mutex_lock(&cx->st.lock);
  ftmw_q_move(&p->pending, &q);
  p->join_by = 0;
  p->unjoined = 0;
  ftmw_loop_wake_locked(&cx->loop); /* ft_finalize waits for it */
  uv_mutex_unlock(&cx->st.lock);
  while (!ftmw_q_empty(&q)) {
    ftmw_out *outs[FTMW_LINK_BATCH_MAX];
    unsigned n = 0;
    while (n < FTMW_LINK_BATCH_MAX && !ftmw_q_empty(&q)) {
      ftmw_op *op = FTMW_CONTAINER_OF(ftmw_q_head(&q), ftmw_op, node);
      ftmw_q_remove(&op->node);
      outs[n++] = &op->out;
    }
    ftmw_link_write(c, outs, n);
  }
  double ms = (uv_hrtime() - p->restore_t0) / 1e6;
  ftmw_trace("restore_finished", "\"peer\":%d,\"peer_epoch\":%u,\"ms\":%.3f",
             p->id, p->epoch, ms);
  ftmw_log("worker %d restored (incarnation %u, pid %d on %s) in %.1f ms",
           p->id, p->epoch, (int)p->at.pid, p->at.host, ms);
}

/* A HELLO with the job's secret (link.h): who the process says it is. */
int ftmw_join_hello(void *ctx, ftmw_conn *c, const ftmw_hello *hello,
                    const char **reject) {
  ftmw_ctx *cx = ctx;
  const ftmw_hello m = *hello;
  ftmw_peer *p = NULL;
  if (m.role == FTMW_ROLE_WORKER && m.id >= 1 && (int)m.id <= cx->job.W)
    p = &cx->st.workers[m.id];
  else if (m.role == FTMW_ROLE_SPARE && (int)m.id < cx->job.S)
    p = &cx->st.spares[m.id];
  else if (m.role == FTMW_ROLE_MASTER && (int)m.id > cx->job.id &&
           (int)m.id <= cx->job.M && cx->job.role == FTMW_ROLE_MASTER)
    p = &cx->st.masters[m.id]; /* a replica after this master in the order */
  if (p == NULL) {
    *reject = "unknown process identity";
    return -1;
  }
  uv_mutex_lock(&cx->st.lock);
  int ok =
      p->state == FTMW_PEER_JOINING && p->epoch == m.epoch && p->conn == NULL;
  /* A master with replicas meets a worker the primary spawned by
   * ft_restore: a later incarnation than it knows. */
  int later = cx->job.M > 0 && m.role == FTMW_ROLE_WORKER &&
              m.epoch > p->epoch && cx->job.mode == FTMW_MODE_SPAWN;
  uv_mutex_unlock(&cx->st.lock);
  if (!ok && later) {
    adopt(cx, c, p, m.epoch, 0, &m.at, 1);
    return 0;
  }
  if (!ok) {
    *reject = "stale or duplicate incarnation";
    return -1;
  }
  ftmw_link_bind(c, p, p->pid_wire, &p->at);
  p->conn = c;
  /* WELCOME is written before the application can see p alive: a master
   * killed just after ft_init has still welcomed everyone. */
  send_welcome(cx, c);
  uv_mutex_lock(&cx->st.lock);
  ok = p->state == FTMW_PEER_JOINING; /* not given up on meanwhile */
  int late = ok && ftmw_peer_restoring(p);
  if (ok) {
    ftmw_peer_set_locked(cx, p, FTMW_PEER_ALIVE, "joined");
    ftmw_peer_place_locked(p, &m.at);
    ftmw_loop_wake_locked(&cx->loop);
  }
  uv_mutex_unlock(&cx->st.lock);
  if (!ok) {
    ftmw_peer_down(cx, p, 0, "joined too late");
    return 1;
  }
  if (late)
    joined_late(cx, p, c);
  char name[32];
  ftmw_trace("connect", "\"peer\":\"%s\",\"peer_epoch\":%u,\"peer_pid\":%d",
             ftmw_peer_name(p, name, sizeof(name)), p->epoch, (int)p->at.pid);
  return 0;
}

void ftmw_join_activate(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *p,
                        const ftmw_hdr *h) {
  /* Armed for the worker it becomes before the application can run on. */
  ftmw_fault_arm(cx->job.cfg.fault, 0, h->tag, (uint32_t)h->seq);
  uv_mutex_lock(&cx->st.lock);
  cx->job.role = FTMW_ROLE_WORKER;
  cx->job.id = h->tag;
  cx->job.epoch = (uint32_t)h->seq;
  cx->st.activated = 1;
  ftmw_loop_wake_locked(&cx->loop);
  uv_mutex_unlock(&cx->st.lock);
  link_self(cx); /* its frames now bear the worker's identity */
  /* Every other master learns it too, before anything this worker sends
   * it: replicas adopt the connection as the new incarnation. */
  for (int k = 0; k <= cx->job.M; k++) {
    ftmw_peer *m = &cx->st.masters[k];
    if (m == p || (m->conn != NULL && ftmw_peer_is_up(m)))
      ftmw_link_send(m == p ? c : m->conn, FTMW_FRAME_ACTIVATED, h->tag,
                     h->seq, 0, NULL, 0);
  }
  ftmw_mark_primary(cx);
  ftmw_trace("activated", NULL);
}

/* Whether worker w's incarnation e is the one this master's own
 * ft_restore is making from spare sp, whose ACTIVATE has not gone yet: a
 * master that took over from a primary that had begun the same restore
 * (the first idle spare, in both) before it could tell it. The spare
 * answers the old primary's ACTIVATE, which was this one. */
static int own_restore(const ftmw_peer *w, uint32_t e, const ftmw_peer *sp) {
  return e == w->epoch && w->state == FTMW_PEER_JOINING &&
         w->from_spare == sp->id + 1 && w->conn == NULL;
}

/* ACTIVATED from spare sp to a replica: the primary's ft_restore made
 * it worker tag, incarnation seq, and its frames now say so. */
int ftmw_join_adopt(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *sp,
                    const ftmw_hdr *h) {
  int r = h->tag;
  uint32_t e = (uint32_t)h->seq;
  ftmw_peer *w = r >= 1 && r <= cx->job.W ? &cx->st.workers[r] : NULL;
  uv_mutex_lock(&cx->st.lock);
  int own = w != NULL && own_restore(w, e, sp);
  uv_mutex_unlock(&cx->st.lock);
  if (cx->job.role != FTMW_ROLE_MASTER || w == NULL || h->src != (uint32_t)r ||
      h->epoch != e || h->dst != ftmw_job_pid(&cx->job) || (e <= w->epoch && !own)) {
    ftmw_peer_down(cx, sp, 0, "protocol error: unexpected ACTIVATED");
    return 1;
  }
  uv_mutex_lock(&cx->st.lock);
  ftmw_peer_set_locked(cx, sp, FTMW_PEER_FINISHED, "activated");
  uv_mutex_unlock(&cx->st.lock);
  sp->conn = NULL;
  adopt(cx, c, w, e, sp->id + 1, &sp->at, 0);
  return 0;
}
