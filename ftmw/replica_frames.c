/* Master replicas: the frames the other processes send the protocol
 * (ftmw_rep_on_frame, which ftmw_rep_init routes here from the
 * transport): DECIDE (answered with DECIDED), DECIDED, KEPT, ACKED, MARK,
 * DONE, SUSPECT and VERDICT. They run on the loop's owner, st.lock not
 * held on entry (replica.c's functions run on the application thread,
 * with it held), and change only the protocol's state (replica_state.h)
 * and the inboxes (inbox.h). */
#include "ftmw_impl.h"
#include "down.h"
#include "inbox.h"
#include "loop.h"
#include "replica_state.h"

#include <stdlib.h>

int ftmw_rep_queue_decision_locked(ftmw_ctx *cx, const ftmw_decision *d) {
  if (d->number <= cx->rep->dec_rcvd)
    return 1;
  if (d->number != cx->rep->dec_rcvd + 1)
    return -1;
  ftmw_decision *q = malloc(sizeof(*q));
  if (q == NULL)
    return -1;
  *q = *d;
  cx->rep->dec_rcvd = d->number;
  cx->rep->history[d->number % FTMW_REP_HISTORY] = *d;
  ftmw_q_insert_tail(&cx->rep->decisions, &q->node);
  return 0;
}

/* The kinds of decision that may name no worker (rank 0). */
static int names_no_worker(int kind) {
  return kind == FTMW_DECIDE_TESTANY || kind == FTMW_DECIDE_PRIMARY ||
         kind == FTMW_DECIDE_CLOCK || kind == FTMW_DECIDE_TIMEOUT ||
         kind == FTMW_DECIDE_PROBED || kind == FTMW_DECIDE_TERM ||
         kind == FTMW_DECIDE_SYNC || kind == FTMW_DECIDE_ABANDON;
}

/* DECIDE, primary to replica: queued for the call that must follow it. */
static int on_decide(ftmw_ctx *cx, ftmw_peer *p, const ftmw_hdr *h,
                     void *payload) {
  const uint8_t *b = payload;
  ftmw_decision d = {.kind = h->tag, .number = h->seq};
  d.rank = (int)ftmw_get32(b);
  d.value = ftmw_get64(b + 8);
  ftmw_msg_free_data(payload);
  int rc = -1;
  uint64_t held = 0;
  if (p->kind == FTMW_ROLE_MASTER && cx->job.role == FTMW_ROLE_MASTER &&
      d.rank >= (names_no_worker(d.kind) ? 0 : 1) && d.rank <= cx->job.W) {
    uv_mutex_lock(&cx->st.lock);
    /* From a replica to a master that took over: what it holds of the
     * old primary's decisions (those it lacks are queued, the rest are
     * duplicates), then SYNC. One it cannot place (too far ahead) is
     * left: it decides that call itself. */
    int from_replica = p->id != cx->st.primary; /* (this one may not know
                                                yet that it took over) */
    if (d.kind == FTMW_DECIDE_SYNC) {
      rc = from_replica ? 1 : -1;
      cx->rep->synced[p->id] |= from_replica;
      if (from_replica && d.number > cx->rep->dec_held[p->id])
        cx->rep->dec_held[p->id] = d.number; /* what it holds, as DECIDED */
    } else if (d.kind == FTMW_DECIDE_ABANDON) {
      /* From a primary that took over and drops its predecessor's path
       * after decision d.number: so does this replica (which has not
       * gone past it: ftmw_rep_abandon). */
      rc = from_replica ? -1 : 1;
      if (!from_replica) {
        uint64_t n = ftmw_rep_drop_after(cx, d.number);
        ftmw_trace("abandoned",
                   "\"from\":%d,\"after\":%llu,"
                   "\"decisions\":%llu",
                   p->id, (unsigned long long)d.number, (unsigned long long)n);
      }
    } else {
      rc = ftmw_rep_queue_decision_locked(cx, &d);
      if (rc == 0 && from_replica && d.number > cx->rep->learned)
        cx->rep->learned = d.number; /* another replica may lack it */
      if (rc < 0 && from_replica)
        rc = 1;
    }
    held = cx->rep->dec_rcvd;
    ftmw_loop_wake_locked(&cx->loop);
    uv_mutex_unlock(&cx->st.lock);
  }
  if (rc < 0) {
    ftmw_peer_down(cx, p, 0,
                   "protocol error: DECIDE out of order or unexpected");
    return 1;
  }
  /* The sender, a primary, writes no DATA before every replica holds its
   * decisions (ftmw_rep_before_seen). */
  if (d.kind != FTMW_DECIDE_SYNC && p->conn != NULL)
    ftmw_link_send(p->conn, FTMW_FRAME_DECIDED, 0, held,
                   d.kind == FTMW_DECIDE_ABANDON ? FTMW_FLAG_ABANDONED : 0,
                   NULL, 0);
  ftmw_trace("decision", "\"from\":%d,\"number\":%llu,\"kind\":%d,"
             "\"worker\":%d,\"value\":%llu,\"duplicate\":%d", p->id,
             (unsigned long long)d.number, d.kind, d.rank,
             (unsigned long long)d.value, rc);
  return 0;
}

/* KEPT, primary to replica: the data a worker sent the primary before
 * dying, queued as if the worker's CONFIRM had come; replica to a master
 * that took over: what it holds of the workers' (send_inbox). */
static int on_kept(ftmw_ctx *cx, ftmw_peer *p, const ftmw_hdr *h,
                   void *payload) {
  const uint8_t *b = payload;
  uint32_t rank = ftmw_get32(b); /* the wire checked len >= FTMW_KEPT_HEAD */
  size_t len = (size_t)h->len - FTMW_KEPT_HEAD;
  ftmw_msg *m = NULL;
  if (p->kind == FTMW_ROLE_MASTER && cx->job.role == FTMW_ROLE_MASTER &&
      rank >= 1 && (int)rank <= cx->job.W)
    m = ftmw_msg_new(len);
  if (m != NULL) {
    m->source = (int)rank;
    m->tag = h->tag;
    m->seq = h->seq;
    m->len = len;
    m->epoch = ftmw_get32(b + 4);
    memcpy(m->data, b + FTMW_KEPT_HEAD, len);
  }
  ftmw_msg_free_data(payload);
  if (m == NULL) {
    ftmw_peer_down(cx, p, 0, "protocol error: bad KEPT");
    return 1;
  }
  int unconfirmed = (h->flags & FTMW_FLAG_UNCONFIRMED) != 0;
  ftmw_trace("kept", "\"worker\":%u,\"seq\":%llu,\"unconfirmed\":%d", rank,
             (unsigned long long)h->seq, unconfirmed);
  ftmw_inbox_kept(cx, &cx->st.workers[rank], m, unconfirmed);
  return 0;
}

/* Replica: keeps the VERDICT on exchange n until its call asks for it,
 * in a slot that is free or holds one it has completed since (st.lock
 * held). A VERDICT answers an open SUSPECT, and a replica has at most one
 * open per worker: at most FTMW_MAX_MASTERS at once, half the slots, so a
 * free one is always found (the oldest is overwritten only if not). */
static void keep_verdict(ftmw_rep_worker *w, uint64_t n, int ok) {
  size_t slots = sizeof(w->verdicts) / sizeof(w->verdicts[0]), at = 0;
  if (n <= w->calls)
    return; /* an exchange this master has completed: no news */
  for (size_t i = 0; i < slots; i++) {
    if (w->verdicts[i].n == n || w->verdicts[i].n <= w->calls) {
      at = i;
      break;
    }
    if (w->verdicts[i].n < w->verdicts[at].n)
      at = i;
  }
  w->verdicts[at].n = n;
  w->verdicts[at].ok = ok;
}

/* ACKED, MARK, DONE, SUSPECT and VERDICT: what the worker or the other
 * masters have done with an exchange. */
static int on_progress(ftmw_ctx *cx, ftmw_peer *p, const ftmw_hdr *h) {
  /* A worker's ACKED and MARK are about itself; a master's DECIDED
   * names nobody (tag 0); its others, and a replica's ACKED to a master
   * that took over, name the worker in the tag. */
  int self = p->kind == FTMW_ROLE_WORKER &&
             (h->type == FTMW_FRAME_ACKED || h->type == FTMW_FRAME_MARK);
  int names = h->type == FTMW_FRAME_DECIDED ? h->tag == 0
              : h->type != FTMW_FRAME_MARK  ? h->tag >= 1 && h->tag <= cx->job.W
                                            : 0;
  int ok = cx->job.role == FTMW_ROLE_MASTER &&
           (self || (p->kind == FTMW_ROLE_MASTER && names));
  uv_mutex_lock(&cx->st.lock);
  ftmw_rep_worker *w = ok ? ftmw_rep_of(cx, self ? p->id : (int)h->tag) : NULL;
  switch (ok ? h->type : 0) {
  case FTMW_FRAME_DECIDED: /* from a replica, to the master that decided */
    /* After an ABANDON, only its answer and what follows it tell what
     * the replica holds of this master's path. */
    if (h->flags & FTMW_FLAG_ABANDONED) {
      cx->rep->abandoning[p->id] = 0;
      cx->rep->dec_held[p->id] = h->seq;
    } else if (!cx->rep->abandoning[p->id] && h->seq > cx->rep->dec_held[p->id])
      cx->rep->dec_held[p->id] = h->seq;
    break;
  case FTMW_FRAME_ACKED: /* from a worker, or a replica at a takeover */
    if (h->seq > w->acked_seq)
      w->acked_seq = h->seq;
    break;
  case FTMW_FRAME_MARK: /* from a worker, to the master it now takes for
                          primary, after every ACKED it sent it */
    w->marked = (uint64_t)p->epoch + 1;
    break;
  case FTMW_FRAME_DONE: /* from a replica, to every other master */
    if (h->seq > w->done_by[p->id])
      w->done_by[p->id] = h->seq;
    break;
  case FTMW_FRAME_SUSPECT:
    w->suspect_by[p->id] = h->seq;
    break;
  case FTMW_FRAME_VERDICT: /* from the primary, to a replica */
    keep_verdict(w, h->seq, (h->flags & FTMW_FLAG_OK) != 0);
    break;
  }
  ftmw_loop_wake_locked(&cx->loop);
  uv_mutex_unlock(&cx->st.lock);
  if (!ok) {
    ftmw_peer_down(cx, p, 0, "protocol error: unexpected replica frame");
    return 1;
  }
  if (ftmw_trace_enabled())
    ftmw_trace(h->type == FTMW_FRAME_ACKED     ? "acked"
               : h->type == FTMW_FRAME_MARK    ? "marked"
               : h->type == FTMW_FRAME_DECIDED ? "decided"
               : h->type == FTMW_FRAME_DONE    ? "done"
               : h->type == FTMW_FRAME_SUSPECT ? "suspect"
                                               : "verdict",
               "\"from\":%d,\"worker\":%d,\"call\":%llu,\"ok\":%d", p->id,
               h->tag, (unsigned long long)h->seq,
               (h->flags & FTMW_FLAG_OK) != 0);
  return 0;
}

int ftmw_rep_on_frame(ftmw_ctx *cx, ftmw_peer *p, const ftmw_hdr *h,
                      void *payload) {
  switch (h->type) {
  case FTMW_FRAME_DECIDE: return on_decide(cx, p, h, payload);
  case FTMW_FRAME_KEPT: return on_kept(cx, p, h, payload);
  default: return on_progress(cx, p, h);
  }
}
