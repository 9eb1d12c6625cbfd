/* Master replicas: how the protocol's frames go out and how it waits,
 * through the transport or a unit test's fake (ftmw_rep_use_link), and
 * the frames that more than one part of the protocol sends (KEPT, DECIDE).
 * st.lock held in every function. */
#include "ftmw_impl.h"
#include "transport.h"
#include "replica.h"
#include "replica_state.h"

#include <string.h>

/* The transport, as the protocol uses it (see ftmw_rep_link). */
static void transport_send(ftmw_ctx *cx, int k, int type, int tag,
                           unsigned flags, uint64_t seq, const void *data,
                           size_t len) {
  ftmw_op op = {.out = {.seq = seq}};
  ftmw_op_frame(cx, &op, &cx->st.masters[k], type, tag, flags, data, len);
  ftmw_transport_submit(cx, &op, 1);
  ftmw_op_wait_locked(cx, &op);
}

static const ftmw_rep_link transport_link = {
    .send = transport_send,
    .wait_locked = ftmw_transport_wait_locked,
};
void ftmw_rep_use_link(ftmw_ctx *cx, const ftmw_rep_link *l) {
  cx->rep_link = l;
}

static const ftmw_rep_link *link_of(ftmw_ctx *cx) {
  return cx->rep_link != NULL ? cx->rep_link : &transport_link;
}

void ftmw_rep_send_master(ftmw_ctx *cx, int k, int type, int tag,
                          unsigned flags, uint64_t seq, const void *data,
                          size_t len) {
  link_of(cx)->send(cx, k, type, tag, flags, seq, data, len);
}

int ftmw_rep_link_wait(ftmw_ctx *cx, int64_t ms) {
  return link_of(cx)->wait_locked(cx, ms);
}

/* Worker p's message m as a KEPT frame's payload (p's rank, the
 * incarnation that sent it, then the data), in a message of its own
 * bearing m's tag and number; NULL out of memory. */
ftmw_msg *ftmw_rep_kept_of(const ftmw_peer *p, const ftmw_msg *m) {
  ftmw_msg *k = ftmw_msg_new(FTMW_KEPT_HEAD + m->len);
  if (k == NULL)
    return NULL;
  k->tag = m->tag;
  k->seq = m->seq;
  k->len = FTMW_KEPT_HEAD + m->len;
  ftmw_put32(k->data, (uint32_t)p->id);
  ftmw_put32(k->data + 4, m->epoch);
  memcpy(k->data + FTMW_KEPT_HEAD, m->data, m->len);
  return k;
}

/* Sends KEPT k to master to, or (to < 0) to every live replica. */
void ftmw_rep_send_kept(ftmw_ctx *cx, int to, const ftmw_msg *k,
                        unsigned flags) {
  for (int m = 0; m <= cx->job.M; m++)
    if (ftmw_rep_alive(cx, m) && (to < 0 || m == to))
      ftmw_rep_send_master(cx, m, FTMW_FRAME_KEPT, k->tag, flags, k->seq,
                           k->data, k->len);
}

void ftmw_rep_send_decision(ftmw_ctx *cx, int k, const ftmw_decision *d) {
  uint8_t b[FTMW_DECIDE_SIZE] = {0};
  ftmw_put32(b, (uint32_t)d->rank);
  ftmw_put64(b + 8, d->value);
  ftmw_rep_send_master(cx, k, FTMW_FRAME_DECIDE, d->kind, 0, d->number, b,
                       sizeof(b));
}
