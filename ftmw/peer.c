/* Peers (see peer.h). */
#include "ftmw_impl.h"
#include "op.h"
#include "peer.h"
#include "loop.h"
#include "owned.h"

#include <stdio.h>

const char *ftmw_peer_name(const ftmw_peer *p, char *buf, size_t len) {
  if (p->kind == FTMW_ROLE_WORKER)
    snprintf(buf, len, "worker %d", p->id);
  else if (p->kind == FTMW_ROLE_MASTER)
    snprintf(buf, len, "master %d", p->id);
  else
    snprintf(buf, len, "spare %d", p->id);
  return buf;
}

static const char *const state_names[] = {
    "none", "joining", "alive", "suspected", "failed", "fenced", "finished"};

/* Whether the lifecycle lets a peer go from state from to state to, in
 * one incarnation: it joins once, and never comes back to life. A failed
 * or finished slot lives again only as a new incarnation
 * (ftmw_peer_begin_locked). */
static int allowed(int from, int to) {
  switch (to) {
  case FTMW_PEER_JOINING: return from == FTMW_PEER_NONE;
  case FTMW_PEER_ALIVE:
    return from == FTMW_PEER_JOINING || from == FTMW_PEER_SUSPECTED;
  case FTMW_PEER_SUSPECTED: return from == FTMW_PEER_ALIVE;
  case FTMW_PEER_FAILED:
  case FTMW_PEER_FENCED:
    return from != FTMW_PEER_FAILED && from != FTMW_PEER_FENCED;
  case FTMW_PEER_FINISHED: return ftmw_peer_state_live(from);
  default: return 0;
  }
}

/* The MPI layer's door (owned.h): the default context's count. */
unsigned long ftmw_failures(void) {
  return __atomic_load_n(&ftmw_default_ctx.failures, __ATOMIC_ACQUIRE);
}

static void refused(const ftmw_peer *p, uint32_t epoch, int to,
                    const char *why) {
  char name[32];
  ftmw_trace("peer_state_refused",
             "\"peer\":\"%s\",\"peer_epoch\":%u,\"to_epoch\":%u,\"from\":\"%s\","
             "\"to\":\"%s\",\"why\":\"%s\"",
             ftmw_peer_name(p, name, sizeof(name)), p->epoch, epoch,
             state_names[p->state], state_names[to], why ? why : "");
}

/* p becomes incarnation epoch in state to: the one place either changes. */
static void change(ftmw_ctx *cx, ftmw_peer *p, uint32_t epoch, int to,
                   const char *why) {
  int from = p->state;
  char name[32];
  p->epoch = epoch;
  p->state = to;
  if (ftmw_peer_is_failed(p))
    __atomic_add_fetch(&cx->failures, 1, __ATOMIC_RELEASE);
  ftmw_trace("peer_state",
             "\"peer\":\"%s\",\"peer_epoch\":%u,\"from\":\"%s\",\"to\":\"%s\","
             "\"why\":\"%s\"",
             ftmw_peer_name(p, name, sizeof(name)), epoch, state_names[from],
             state_names[to], why ? why : "");
  ftmw_loop_wake_locked(&cx->loop);
}

int ftmw_peer_set_locked(ftmw_ctx *cx, ftmw_peer *p, int to, const char *why) {
  if (p->state == to)
    return 0;
  if (!allowed(p->state, to)) {
    refused(p, p->epoch, to, why);
    return -1;
  }
  change(cx, p, p->epoch, to, why);
  return 0;
}

int ftmw_peer_begin_locked(ftmw_ctx *cx, ftmw_peer *p, uint32_t epoch, int to,
                           const char *why) {
  if (epoch <= p->epoch ||
      (to != FTMW_PEER_JOINING && to != FTMW_PEER_ALIVE)) {
    refused(p, epoch, to, why);
    return -1;
  }
  change(cx, p, epoch, to, why);
  return 0;
}

/* The failure of p (see peer.h): FAILED, or FENCED when told so. */
static int fail_locked(ftmw_ctx *cx, ftmw_peer *p, int report, const char *why,
                       int to) {
  int live = ftmw_peer_is_live(p);
  if (live) {
    /* Traced before the state changes: an application call may report
     * the failure as soon as the lock is released, and the trace must
     * show the detection first. */
    char name[32];
    ftmw_trace("failure_detected",
               "\"peer\":\"%s\",\"peer_epoch\":%u,\"reason\":\"%s\"",
               ftmw_peer_name(p, name, sizeof(name)), p->epoch, why);
    p->failed_at = uv_hrtime();
    cx->st.failure_seen = 1;
  }
  if (!ftmw_peer_is_failed(p))
    ftmw_peer_set_locked(cx, p, to, why);
  if (report)
    p->unreported = 1;
  /* The frames that waited for it to join fail, as they would have on
   * its connection. */
  while (!ftmw_q_empty(&p->pending)) {
    ftmw_op *op = FTMW_CONTAINER_OF(ftmw_q_head(&p->pending), ftmw_op, node);
    ftmw_q_remove(&op->node);
    op->out.failed = 1; /* before done: link.h */
    op->out.done = 1;
  }
  p->join_by = 0;
  ftmw_loop_wake_locked(&cx->loop);
  return live;
}

int ftmw_peer_failed_locked(ftmw_ctx *cx, ftmw_peer *p, int report,
                            const char *why) {
  return fail_locked(cx, p, report, why, FTMW_PEER_FAILED);
}

int ftmw_peer_fenced_locked(ftmw_ctx *cx, ftmw_peer *p, const char *why) {
  return fail_locked(cx, p, 1, why, FTMW_PEER_FENCED);
}

int ftmw_all_masters_gone_locked(ftmw_ctx *cx) {
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_peer_is_live(&cx->st.masters[k]))
      return 0;
  return 1;
}

int ftmw_first_live_master_locked(ftmw_ctx *cx) {
  for (int k = 0; k <= cx->job.M; k++)
    if ((cx->job.role == FTMW_ROLE_MASTER && k == cx->job.id) ||
        ftmw_peer_is_up(&cx->st.masters[k]))
      return k;
  return -1;
}

void ftmw_peer_place_locked(ftmw_peer *p, const ftmw_place *at) {
  p->at = *at;
}

int ftmw_is_replica(ftmw_ctx *cx) {
  return cx->job.M > 0 && cx->job.role == FTMW_ROLE_MASTER &&
         cx->job.id != cx->st.primary;
}
