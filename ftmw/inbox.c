/* Inbound data (see inbox.h). The loop's owner only. */
#include "ftmw_impl.h"
#include "match.h"
#include "inbox.h"
#include "loop.h"

#include <stdlib.h>
#include <string.h>

/* Frees the messages queued at q (by_peer). */
static void free_all(ftmw_qnode *q) {
  while (!ftmw_q_empty(q)) {
    ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(q), ftmw_msg, by_peer);
    ftmw_q_remove(&m->by_peer);
    ftmw_msg_free(m);
  }
}

/* Worker w's record of what came from its current incarnation (st.lock
 * held): a new incarnation counts from 1, and has confirmed nothing. */
static ftmw_seqset *rx_of_locked(ftmw_peer *w) {
  if (w->rx_epoch != w->epoch) {
    w->rx_epoch = w->epoch;
    ftmw_seqset_clear(&w->rx);
    free_all(&w->unconfirmed);
  }
  return &w->rx;
}

/* Queues m from p unless it is a duplicate (st.lock held). Returns 1 if
 * queued. Failover makes duplicates: a new primary sends again what the
 * worker may have had, a worker what a dead primary never acknowledged.
 * A worker's messages from every master share masters[0]'s inbox: the
 * primary may change between two receives. A worker's COPY of m, held
 * unconfirmed, is confirmed by it. */
static int push_locked(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m) {
  int from_master = p->kind == FTMW_ROLE_MASTER;
  if (!ftmw_seqset_add(from_master ? &cx->st.rx : rx_of_locked(p), m->seq))
    return 0;
  m->epoch = p->epoch;
  ftmw_qnode *n, *next;
  for (n = p->unconfirmed.next; !from_master && n != &p->unconfirmed;
       n = next) {
    next = n->next;
    ftmw_msg *u = FTMW_CONTAINER_OF(n, ftmw_msg, by_peer);
    if (u->seq == m->seq) {
      ftmw_q_remove(n);
      ftmw_msg_free(u);
    }
  }
  ftmw_match_push(&cx->st.arrivals, from_master ? &cx->st.masters[0] : p, m);
  ftmw_loop_wake_locked(&cx->loop);
  return 1;
}

/* Queues m from p (the loop's owner), unless it is a duplicate. */
static void push(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m) {
  uv_mutex_lock(&cx->st.lock);
  int fresh = push_locked(cx, p, m);
  uv_mutex_unlock(&cx->st.lock);
  if (!fresh) {
    ftmw_trace("duplicate_dropped", "\"peer\":%d,\"seq\":%llu", m->source,
               (unsigned long long)m->seq);
    ftmw_msg_free(m);
  }
}

/* Holds worker p's COPY m unconfirmed (st.lock held), unless p's message
 * m->seq is queued or held already. Returns 1 if held. */
static int hold_locked(ftmw_peer *p, ftmw_msg *m) {
  int dup = ftmw_seqset_has(rx_of_locked(p), m->seq);
  ftmw_qnode *n;
  ftmw_q_foreach(n, &p->unconfirmed) dup |=
      FTMW_CONTAINER_OF(n, ftmw_msg, by_peer)->seq == m->seq;
  if (!dup) {
    m->epoch = p->epoch;
    ftmw_q_insert_tail(&p->unconfirmed, &m->by_peer);
  }
  return !dup;
}

/* A COPY from worker p (the loop's owner). */
static void hold_unconfirmed(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m) {
  uv_mutex_lock(&cx->st.lock);
  int held = hold_locked(p, m);
  uv_mutex_unlock(&cx->st.lock);
  if (!held)
    ftmw_msg_free(m);
}

void ftmw_inbox_kept(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m, int unconfirmed) {
  uv_mutex_lock(&cx->st.lock);
  int current = m->epoch == p->epoch;
  int taken =
      current && (unconfirmed ? hold_locked(p, m) : push_locked(cx, p, m));
  uv_mutex_unlock(&cx->st.lock);
  if (!taken) {
    ftmw_trace(current ? "duplicate_dropped" : "stale_dropped",
               "\"peer\":%d,\"seq\":%llu,\"peer_epoch\":%u", p->id,
               (unsigned long long)m->seq, m->epoch);
    ftmw_msg_free(m);
  }
}

int ftmw_inbox_confirm_locked(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  int n = 0;
  rx_of_locked(p);
  ftmw_qnode *q, *next;
  for (q = p->unconfirmed.next; q != &p->unconfirmed; q = next) {
    next = q->next;
    ftmw_msg *m = FTMW_CONTAINER_OF(q, ftmw_msg, by_peer);
    if (seq != 0 && m->seq != seq)
      continue;
    ftmw_q_remove(q);
    if (push_locked(cx, p, m))
      n++;
    else
      ftmw_msg_free(m);
  }
  if (n > 0)
    ftmw_trace("confirmed", "\"peer\":%d,\"seq\":%llu,\"n\":%d", p->id,
               (unsigned long long)seq, n);
  return n;
}

/* DATA from worker p reaches a master with replicas that is not the
 * primary: the worker considers it primary, having lost the primary. If
 * the primary has died, this master takes over soon (it sees the death
 * too) and then takes the data (ftmw_inbox_release_held); if the
 * primary is alive and cut the worker off, the worker's incarnation is
 * declared failed here too and its data dies with it. Taken now, it would complete a
 * replica's call that the primary's same call does not complete. So it
 * is held, unacknowledged. Returns 1 when m is held. */
static int hold_data(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m) {
  if (cx->job.role != FTMW_ROLE_MASTER || cx->job.M == 0 ||
      p->kind != FTMW_ROLE_WORKER)
    return 0;
  uv_mutex_lock(&cx->st.lock);
  int hold = cx->st.primary != cx->job.id;
  uv_mutex_unlock(&cx->st.lock);
  if (!hold)
    return 0;
  ftmw_q_insert_tail(&p->held, &m->by_peer);
  ftmw_trace("held", "\"peer\":%d,\"seq\":%llu", p->id,
             (unsigned long long)m->seq);
  return 1;
}

/* Frees the DATA held from worker p (see hold_data): p is gone. */
void ftmw_inbox_drop_held(ftmw_peer *p) { free_all(&p->held); }

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
void ftmw_inbox_release_held(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W; r++) {
    ftmw_peer *p = &cx->st.workers[r];
    while (!ftmw_q_empty(&p->held)) {
      ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->held), ftmw_msg, by_peer);
      ftmw_q_remove(&m->by_peer);
      uint64_t seq = m->seq;
      size_t len = m->len;
      push(cx, p, m);
      if (p->conn != NULL)
        ftmw_link_ack(p->conn, seq, len, FTMW_ACK_NOW);
    }
  }
}

int ftmw_inbox_data(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *p, const ftmw_hdr *h,
                    void *payload) {
  ftmw_msg *m = payload ? FTMW_CONTAINER_OF(payload, ftmw_msg, data)
                        : ftmw_msg_new(0);
  if (m == NULL)
    return -1;
  m->source = p->kind == FTMW_ROLE_WORKER ? p->id : 0;
  m->tag = h->tag;
  m->seq = h->seq;
  m->len = (size_t)h->len;
  if (h->type == FTMW_FRAME_DATA && hold_data(cx, p, m))
    return 0;
  if (h->type == FTMW_FRAME_COPY) { /* until the primary has it too */
    hold_unconfirmed(cx, p, m);
    return 0;
  }
  /* The application is woken before the ACK is written: on loopback the
   * write runs the receiver's stack inline, and putting it first cost about
   * 25 us of an 80 us round trip. So a receiver that dies in the window may
   * have consumed data whose ft_send then fails; under crash-stop that is
   * harmless (what the dead process did dies with it), and the sender
   * simply sends again. */
  push(cx, p, m);
  ftmw_fault_hit(FTMW_FAULT_RECV_ACK);
  ftmw_link_ack(c, h->seq, (size_t)h->len, ftmw_link_ack_when(h->flags));
  /* A worker tells every other live master, in priority order, that it has
   * the primary's data, so that their ft_send of the same call completes
   * (SPEC section 6). */
  if (cx->job.role == FTMW_ROLE_WORKER && p->kind == FTMW_ROLE_MASTER)
    for (int k = 0; k <= cx->job.M; k++) {
      ftmw_peer *r = &cx->st.masters[k];
      if (r == p || r->conn == NULL || !ftmw_peer_is_up(r))
        continue;
      ftmw_fault_hit(FTMW_FAULT_RECV_ACKED); /* once before each replica */
      ftmw_link_send(r->conn, FTMW_FRAME_ACKED, h->tag, h->seq, 0, NULL, 0);
    }
  return 0;
}
