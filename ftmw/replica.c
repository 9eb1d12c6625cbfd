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
      ftmw_wait_locked(-1);
}

/* Sends a frame without payload or ACK to master k and waits until it is
 * written (st.lock held). */
static void send_master(int k, int type, int tag, uint64_t seq) {
  ftmw_op op = {.seq = seq};
  ftmw_op_frame(&op, &st.masters[k], type, tag, 0, NULL, 0);
  ftmw_transport_submit(&op, 1);
  ftmw_op_wait_locked(&op);
}

void ftmw_rep_after(ftmw_peer *p) {
  if (st.M == 0 || st.role != FTMW_ROLE_MASTER)
    return;
  p->calls++;
  if (ftmw_rep_is_replica() && st.masters[st.primary].state == FTMW_PEER_ALIVE)
    send_master(st.primary, FTMW_FRAME_DONE, p->id, p->calls);
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
  ftmw_op ops[FTMW_MAX_MASTERS];
  memset(ops, 0, sizeof(ops));
  for (int k = 0; k <= st.M; k++) {
    if (k == st.primary || st.masters[k].state != FTMW_PEER_ALIVE)
      continue;
    ops[k].seq = seq;
    ftmw_op_frame(&ops[k], &st.masters[k], FTMW_FRAME_COPY, tag, 0, buf, len);
    ftmw_transport_submit(&ops[k], 1);
  }
  for (int k = 0; k <= st.M; k++)
    if (ops[k].kind)
      ftmw_op_wait_locked(&ops[k]);
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
