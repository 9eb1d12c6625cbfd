/* The masters' clock and stopping a worker (timed.h); the receive with a
 * deadline is recv.c's. Application thread only. */
#include "timed.h"

#include "calls.h"
#include "replica.h"
#include "transport.h"

#define st ftmw_st

/* Decided clock minus this master's own clock (application thread). */
static int64_t clock_offset;

uint64_t ftmw_decided_ms(void) {
  if (!ftmw_is_master())
    return ftmw_now_ms();
  int r;
  uint64_t v;
  uv_mutex_lock(&st.lock);
  /* Read after the follow, which may wait: the wait is not an offset. */
  if (ftmw_rep_follow(FTMW_DECIDE_CLOCK, -1, &r, &v)) {
    clock_offset = (int64_t)(v - ftmw_now_ms());
  } else {
    v = (uint64_t)((int64_t)ftmw_now_ms() + clock_offset);
    ftmw_rep_decide(FTMW_DECIDE_CLOCK, 0, v);
  }
  uv_mutex_unlock(&st.lock);
  return v;
}

int ftmw_fence_worker(int rank, const char *why) {
  ftmw_peer *p = ftmw_master_peer(rank);
  if (p == NULL)
    return 0;
  /* The incarnation this master's calls know, not the newest one: a
   * replica that makes this call later than the primary may have adopted
   * the incarnation the primary's restore made since, which must live. */
  ftmw_op op = {.kind = FTMW_OP_FENCE, .peer = p, .why = why,
                .epoch = ftmw_app_of(p)->app_epoch};
  uv_mutex_lock(&st.lock);
  ftmw_transport_submit(&op, 1);
  int rc = ftmw_op_wait_locked(&op);
  uv_mutex_unlock(&st.lock);
  if (rc != FT_SUCCESS)
    return ftmw_fail(FT_ERR_PEER_FAILED); /* already gone or replaced */
  ftmw_ok();
  return 1;
}
