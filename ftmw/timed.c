/* The masters' clock (timed.h, and ft_wtime on it) and stopping a
 * worker; the receive with a deadline is recv.c's. Application thread
 * only. */
#include "timed.h"

#include "calls.h"
#include "replica.h"
#include "transport.h"

static uint64_t now_us(void) { return uv_hrtime() / 1000u; }

/* The decided clock's choice, where this master decides: its own clock
 * and the offset it keeps (ftmw_rep_choose_fn). */
static int clock_choose(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c) {
  (void)arg;
  c->value = (uint64_t)((int64_t)now_us() + cx->clock_offset);
  return 0;
}

/* The masters' clock in microseconds (see ftmw_decided_ms). */
static uint64_t decided_us(ftmw_ctx *cx) {
  if (!ftmw_is_master(cx) || cx->job.M == 0) /* nobody to agree with */
    return now_us();
  ftmw_rep_choice c;
  uv_mutex_lock(&cx->st.lock);
  ftmw_rep_decided(cx, FTMW_DECIDE_CLOCK, -1, clock_choose, NULL, &c);
  /* Read after the follow, which may wait: the wait is not an offset. */
  if (c.followed)
    cx->clock_offset = (int64_t)(c.value - now_us());
  uv_mutex_unlock(&cx->st.lock);
  return c.value;
}

uint64_t ftmw_decided_ms(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return decided_us(cx) / 1000u;
}

double ft_wtime(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized)
    return (double)now_us() / 1e6;
  return (double)decided_us(cx) / 1e6;
}

int ftmw_fence_worker(int rank, const char *why) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  /* The incarnation this master's calls know, not the newest one: a
   * replica that makes this call later than the primary may have adopted
   * the incarnation the primary's restore made since, which must live. */
  ftmw_op op = {.kind = FTMW_OP_FENCE,
                .peer = p,
                .why = why,
                .epoch = ftmw_app_of(cx, p)->app_epoch};
  uv_mutex_lock(&cx->st.lock);
  ftmw_transport_submit(cx, &op, 1);
  int rc = ftmw_op_wait_locked(cx, &op);
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS)
    return ftmw_fail(FT_ERR_PEER_FAILED); /* already gone or replaced */
  ftmw_ok();
  return 1;
}

int ftmw_worker_pending(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  uv_mutex_lock(&cx->st.lock);
  int pending = ftmw_peer_restoring(p);
  uv_mutex_unlock(&cx->st.lock);
  return pending;
}

int ftmw_worker_joined(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 1;
  uv_mutex_lock(&cx->st.lock);
  int joined = p->unjoined == 0; /* restore.c counts, join.c clears */
  uv_mutex_unlock(&cx->st.lock);
  return joined;
}
