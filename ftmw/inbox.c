/* Inbound data (see inbox.h). The loop's owner only. */
#include "ftmw_impl.h"
#include "match.h"
#include "inbox.h"
#include "loop.h"

#include <stdlib.h>
#include <string.h>

#define st ftmw_st
#define job ftmw_job

/* Frees the DATA held from worker p (see hold_data): p is gone. */
void ftmw_inbox_drop_held(ftmw_peer *p) {
  while (!ftmw_q_empty(&p->held)) {
    ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->held), ftmw_msg, by_peer);
    ftmw_q_remove(&m->by_peer);
    ftmw_msg_free(m);
  }
}

/* Whether data number seq is new, recording it (st.lock held): from
 * worker w in a master, or from the masters in a worker (w NULL). Failover
 * makes duplicates: a new primary sends again what the worker may have
 * had, a worker what a dead primary never acknowledged. */
static int fresh_locked(ftmw_peer *w, uint64_t seq) {
  ftmw_seqset *seen = &st.rx;
  if (w != NULL) {
    if (w->rx_epoch != w->epoch) { /* a new incarnation counts from 1 */
      w->rx_epoch = w->epoch;
      ftmw_seqset_clear(&w->rx);
    }
    seen = &w->rx;
  }
  return ftmw_seqset_add(seen, seq);
}

/* Queues m from p, unless it is a duplicate (then frees it). A worker's
 * messages from every master share masters[0]'s inbox: the primary may
 * change between two receives. */
void ftmw_inbox_push(ftmw_peer *p, ftmw_msg *m) {
  int from_master = p->kind == FTMW_ROLE_MASTER;
  uv_mutex_lock(&st.lock);
  int fresh = fresh_locked(from_master ? NULL : p, m->seq);
  if (fresh) {
    ftmw_match_push(&st.arrivals, from_master ? &st.masters[0] : p, m);
    ftmw_loop_wake_locked();
  }
  uv_mutex_unlock(&st.lock);
  if (!fresh) {
    ftmw_trace("duplicate_dropped", "\"peer\":%d,\"seq\":%llu", m->source,
               (unsigned long long)m->seq);
    ftmw_msg_free(m);
  }
}

/* DATA from worker p reaches a master with replicas that is not the
 * primary: the worker considers it primary, having lost the primary. If
 * the primary has died, this master takes over soon (it sees the death
 * too) and then takes the data (ftmw_inbox_release_held); if the
 * primary is alive and cut the worker off, the worker's incarnation is
 * declared failed here too and its data dies with it. Taken now, it would complete a
 * replica's call that the primary's same call does not complete. So it
 * is held, unacknowledged. Returns 1 when m is held. */
static int hold_data(ftmw_peer *p, ftmw_msg *m) {
  if (job.role != FTMW_ROLE_MASTER || job.M == 0 || p->kind != FTMW_ROLE_WORKER)
    return 0;
  uv_mutex_lock(&st.lock);
  int hold = st.primary != job.id;
  uv_mutex_unlock(&st.lock);
  if (!hold)
    return 0;
  ftmw_q_insert_tail(&p->held, &m->by_peer);
  ftmw_trace("held", "\"peer\":%d,\"seq\":%llu", p->id,
             (unsigned long long)m->seq);
  return 1;
}

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
void ftmw_inbox_release_held(void) {
  for (int r = 1; r <= job.W; r++) {
    ftmw_peer *p = &st.workers[r];
    while (!ftmw_q_empty(&p->held)) {
      ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->held), ftmw_msg, by_peer);
      ftmw_q_remove(&m->by_peer);
      uint64_t seq = m->seq;
      size_t len = m->len;
      ftmw_inbox_push(p, m);
      if (p->conn != NULL)
        ftmw_link_ack(p->conn, seq, len, FTMW_ACK_NOW);
    }
  }
}

int ftmw_inbox_data(ftmw_conn *c, ftmw_peer *p, const ftmw_hdr *h,
                    void *payload) {
  ftmw_msg *m = payload ? FTMW_CONTAINER_OF(payload, ftmw_msg, data)
                        : ftmw_msg_new(0);
  if (m == NULL)
    return -1;
  m->source = p->kind == FTMW_ROLE_WORKER ? p->id : 0;
  m->tag = h->tag;
  m->seq = h->seq;
  m->len = (size_t)h->len;
  if (h->type == FTMW_FRAME_DATA && hold_data(p, m))
    return 0;
  /* The application is woken before the ACK is written: on loopback the
   * write runs the receiver's stack inline, and putting it first cost about
   * 25 us of an 80 us round trip. So a receiver that dies in the window may
   * have consumed data whose ft_send then fails; under crash-stop that is
   * harmless (what the dead process did dies with it), and the sender
   * simply sends again. */
  ftmw_inbox_push(p, m);
  if (h->type == FTMW_FRAME_COPY)
    return 0; /* a replica's copy: the worker does not wait for it */
  ftmw_fault_hit(FTMW_FAULT_RECV_ACK);
  ftmw_link_ack(c, h->seq, (size_t)h->len, ftmw_link_ack_when(h->flags));
  /* A worker tells every other live master, in priority order, that it has
   * the primary's data, so that their ft_send of the same call completes
   * (SPEC section 6). */
  if (job.role == FTMW_ROLE_WORKER && p->kind == FTMW_ROLE_MASTER)
    for (int k = 0; k <= job.M; k++) {
      ftmw_peer *r = &st.masters[k];
      if (r == p || r->conn == NULL || !ftmw_peer_is_up(r))
        continue;
      ftmw_fault_hit(FTMW_FAULT_RECV_ACKED); /* once before each replica */
      ftmw_link_send(r->conn, FTMW_FRAME_ACKED, h->tag, h->seq, 0, NULL, 0);
    }
  return 0;
}
