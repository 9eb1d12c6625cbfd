/* Master replicas: the lock-step protocol (see replica.h). */
#include "ftmw_impl.h"

#include <stdlib.h>
#include <string.h>

#define st ftmw_st

int ftmw_rep_is_replica(void) {
  return st.M > 0 && st.role == FTMW_ROLE_MASTER && st.id != st.primary;
}

static int primary_with_replicas(void) {
  return st.M > 0 && st.role == FTMW_ROLE_MASTER && st.id == st.primary;
}

static int replica_alive(int k) {
  return k != st.id && st.masters[k].state == FTMW_PEER_ALIVE;
}

void ftmw_rep_before(ftmw_peer *p) {
  if (!primary_with_replicas() || p->calls == 0)
    return;
  for (int k = 0; k <= st.M; k++)
    while (replica_alive(k) && p->done_by[k] < p->calls)
      ftmw_wait_locked(-1); /* which answers the replicas' SUSPECTs */
}

/* Sends a frame without payload or ACK to master k and waits until it is
 * written (st.lock held). */
static void send_master(int k, int type, int tag, uint64_t seq) {
  ftmw_op op = {.seq = seq};
  ftmw_op_frame(&op, &st.masters[k], type, tag, 0, NULL, 0);
  ftmw_transport_submit(&op, 1);
  ftmw_op_wait_locked(&op);
}

/* An exchange with p ended (ok, or with p's failure reported; m: the data
 * the primary received, kept until its next exchange with p). */
static void exchange_ended(ftmw_peer *p, int ok, const ftmw_msg *m) {
  if (st.M == 0 || st.role != FTMW_ROLE_MASTER)
    return;
  p->calls++;
  if (ftmw_rep_is_replica()) {
    if (st.masters[st.primary].state == FTMW_PEER_ALIVE)
      send_master(st.primary, FTMW_FRAME_DONE, p->id, p->calls);
    return;
  }
  p->outcome_n = p->calls;
  p->outcome_ok = ok;
  free(p->kept);
  p->kept = NULL;
  if (ok && m != NULL) {
    p->kept = malloc(sizeof(*m) + m->len);
    if (p->kept != NULL)
      memcpy(p->kept, m, sizeof(*m) + m->len);
  }
  ftmw_rep_serve();
}

void ftmw_rep_after(ftmw_peer *p, const ftmw_msg *m) { exchange_ended(p, 1, m); }

void ftmw_rep_failed(ftmw_peer *p) { exchange_ended(p, 0, NULL); }

/* Primary: answers replica k's SUSPECT about worker p's exchange n. */
static void answer(ftmw_peer *p, int k) {
  ftmw_peer *r = &st.masters[k];
  uint64_t n = p->suspect_by[k];
  p->suspect_by[k] = 0;
  int ok = n == p->outcome_n && p->outcome_ok;
  if (r->state != FTMW_PEER_ALIVE)
    return;
  if (ok && p->kept != NULL) { /* the data the replica never got */
    size_t len = 4 + p->kept->len;
    uint8_t *b = malloc(len);
    if (b != NULL) {
      b[0] = (uint8_t)p->id;
      b[1] = (uint8_t)(p->id >> 8);
      b[2] = (uint8_t)(p->id >> 16);
      b[3] = (uint8_t)(p->id >> 24);
      memcpy(b + 4, p->kept->data, p->kept->len);
      ftmw_op op = {.seq = p->kept->seq};
      ftmw_op_frame(&op, r, FTMW_FRAME_KEPT, p->kept->tag, 0, b, len);
      ftmw_transport_submit(&op, 1);
      ftmw_op_wait_locked(&op);
      free(b);
    }
  }
  ftmw_op op = {.seq = n};
  ftmw_op_frame(&op, r, FTMW_FRAME_VERDICT, p->id, ok ? FTMW_FLAG_OK : 0, NULL,
                0);
  ftmw_transport_submit(&op, 1);
  ftmw_op_wait_locked(&op);
  ftmw_trace("verdict_sent", "\"replica\":%d,\"worker\":%d,\"call\":%llu,"
             "\"ok\":%d", k, p->id, (unsigned long long)n, ok);
}

int ftmw_rep_serve(void) {
  static int serving;
  if (!primary_with_replicas() || serving)
    return 0;
  serving = 1;
  int n = 0;
  for (int r = 1; r <= st.W; r++) {
    ftmw_peer *p = &st.workers[r];
    for (int k = 0; k <= st.M; k++)
      if (p->suspect_by[k] != 0 && p->suspect_by[k] <= p->outcome_n) {
        answer(p, k);
        n++;
      }
  }
  serving = 0;
  return n;
}

int ftmw_rep_verdict(ftmw_peer *p) {
  uint64_t n = p->calls + 1;
  ftmw_peer *m = &st.masters[st.primary];
  if (m->state != FTMW_PEER_ALIVE)
    return 0;
  ftmw_trace("suspect_sent", "\"worker\":%d,\"call\":%llu", p->id,
             (unsigned long long)n);
  send_master(st.primary, FTMW_FRAME_SUSPECT, p->id, n);
  while (p->verdict_n < n && m->state == FTMW_PEER_ALIVE)
    ftmw_wait_locked(-1);
  return p->verdict_n >= n && p->verdict_ok;
}

int ftmw_rep_send(ftmw_peer *p) {
  uint64_t seq = ++p->next_seq;
  while (p->acked_seq < seq) {
    if (p->state != FTMW_PEER_ALIVE)
      return p->state == FTMW_PEER_FAILED ? FT_ERR_PEER_FAILED
                                          : FT_ERR_PEER_FINALIZED;
    ftmw_wait_locked(-1);
  }
  return FT_SUCCESS;
}

void ftmw_rep_copy(int tag, uint64_t seq, const void *buf, size_t len) {
  if (st.M == 0 || st.role != FTMW_ROLE_WORKER)
    return;
  /* One replica after the other, so that a death between two copies
   * (fault point send.copy, hit before each) reaches exactly the first. */
  for (int k = 0; k <= st.M; k++) {
    if (k == st.primary || st.masters[k].state != FTMW_PEER_ALIVE)
      continue;
    ftmw_fault_hit(FTMW_FAULT_SEND_COPY);
    ftmw_op op = {.seq = seq};
    ftmw_op_frame(&op, &st.masters[k], FTMW_FRAME_COPY, tag, 0, buf, len);
    ftmw_transport_submit(&op, 1);
    ftmw_op_wait_locked(&op);
  }
}

void ftmw_rep_decide(int rank, uint64_t seq) {
  if (!primary_with_replicas())
    return;
  for (int k = 0; k <= st.M; k++)
    if (replica_alive(k))
      send_master(k, FTMW_FRAME_DECIDE, rank, seq);
}

int ftmw_rep_decision(int *rank, uint64_t *seq) {
  while (ftmw_q_empty(&st.decisions)) {
    if (st.masters[st.primary].state != FTMW_PEER_ALIVE)
      return -1;
    ftmw_wait_locked(-1);
  }
  ftmw_decision *d =
      FTMW_CONTAINER_OF(ftmw_q_head(&st.decisions), ftmw_decision, node);
  ftmw_q_remove(&d->node);
  *rank = d->rank;
  *seq = d->seq;
  free(d);
  return 0;
}

void ftmw_rep_undecide(int rank, uint64_t seq) {
  ftmw_decision *d = malloc(sizeof(*d));
  if (d == NULL)
    return; /* the replica then waits for a decision that does not come:
               its failure is seen by the primary as a silent replica */
  d->rank = rank;
  d->seq = seq;
  /* insert at the head */
  d->node.next = st.decisions.next;
  d->node.prev = &st.decisions;
  st.decisions.next->prev = &d->node;
  st.decisions.next = &d->node;
}
