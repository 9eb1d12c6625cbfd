/* A peer goes down (down.h). */
#include "down.h"

#include "ftmw_impl.h"
#include "inbox.h"

/* Primary: worker p's incarnation epoch has failed here; every live
 * replica declares it failed too (DOWN), so that a worker cut off from
 * the primary alone, alive, is fenced everywhere instead of going on with
 * the replicas (hold_data, inbox.c). Written before any decision that reports
 * the failure, so a replica has it first. */
static void tell_down(ftmw_ctx *cx, const ftmw_peer *p, uint32_t epoch) {
  for (int k = 0; k <= cx->job.M; k++) {
    ftmw_peer *m = &cx->st.masters[k];
    if (k != cx->job.id && m->conn != NULL && ftmw_peer_is_up(m))
      ftmw_link_send(m->conn, FTMW_FRAME_DOWN, p->id, epoch, 0, NULL, 0);
  }
}

/* See down.h. */
void ftmw_mark_primary(ftmw_ctx *cx) {
  if (cx->job.role != FTMW_ROLE_WORKER || cx->job.M == 0)
    return;
  uv_mutex_lock(&cx->st.lock);
  ftmw_peer *m = &cx->st.masters[cx->st.primary];
  ftmw_conn *c = cx->st.primary != 0 && ftmw_peer_is_up(m) ? m->conn : NULL;
  uv_mutex_unlock(&cx->st.lock);
  if (c != NULL)
    ftmw_link_send(c, FTMW_FRAME_MARK, 0, 0, 0, NULL, 0);
}

/* See down.h. The FENCE goes out before the close, on the same stream. */
void ftmw_peer_down(ftmw_ctx *cx, ftmw_peer *p, int done, const char *why) {
  ftmw_conn *c = p->conn;
  char name[32];
  ftmw_peer_name(p, name, sizeof(name));
  uv_mutex_lock(&cx->st.lock);
  int was = p->state;
  int live = ftmw_peer_state_live(was);
  uint32_t epoch = p->epoch; /* a restore may bump it once we unlock */
  int next = -1;              /* the new primary, if p was the primary */
  /* A master tells a live peer that it may still reach, before closing. */
  int fence = !done && live && c != NULL && ftmw_link_readable_by_peer(c) &&
              cx->job.role == FTMW_ROLE_MASTER;
  if (live) {
    if (done)
      ftmw_peer_set_locked(cx, p, FTMW_PEER_FINISHED, why);
    else if (fence)
      ftmw_peer_fenced_locked(cx, p, why);
    else
      ftmw_peer_failed_locked(cx, p, 1, why);
    next = !done && p->kind == FTMW_ROLE_MASTER && p->id == cx->st.primary
               ? ftmw_first_live_master_locked(cx)
               : -1;
    if (next >= 0) {
      __atomic_store_n(&cx->st.primary, next, __ATOMIC_RELAXED); /* peer_of */
      ftmw_trace("primary_changed", "\"from\":%d,\"primary\":%d", p->id,
                 cx->st.primary);
    }
  }
  int primary = cx->job.role == FTMW_ROLE_MASTER && cx->job.M > 0 &&
                cx->st.primary == cx->job.id;
  int now_primary = primary && p->kind == FTMW_ROLE_MASTER;
  int orphan =
      cx->job.role == FTMW_ROLE_WORKER || cx->job.role == FTMW_ROLE_SPARE
          ? ftmw_all_masters_gone_locked(cx)
          : 0;
  ftmw_loop_wake_locked(&cx->loop);
  uv_mutex_unlock(&cx->st.lock);
  ftmw_inbox_drop_held(p);
  if (c) {
    if (fence)
      ftmw_link_send(c, FTMW_FRAME_FENCE, 0, 0, 0, NULL, 0);
    p->conn = NULL; /* the FENCE goes out before the close */
    ftmw_link_close(c);
  }
  if (now_primary)
    ftmw_inbox_release_held(cx);
  if (done || !live || __atomic_load_n(&cx->st.aborting, __ATOMIC_RELAXED))
    return; /* ending the job: every peer goes, nothing to tell */
  if (next >= 0)
    ftmw_mark_primary(cx);
  if (primary && p->kind == FTMW_ROLE_WORKER)
    tell_down(cx, p, epoch);
  if (cx->job.role == FTMW_ROLE_MASTER && cx->job.id == cx->st.primary &&
      p->at.pid > 0)
    ftmw_log("%s (pid %d on %s) failed: %s", name, (int)p->at.pid,
             p->at.host[0] ? p->at.host : "?", why);
  else if (cx->job.role == FTMW_ROLE_MASTER && cx->job.id == cx->st.primary)
    ftmw_log("%s failed: %s", name, why); /* a master we connected to */
  if (orphan && cx->st.orphan_since == 0) {
    cx->st.orphan_since = ftmw_now_ms();
    ftmw_trace("orphaned", NULL);
  }
}
