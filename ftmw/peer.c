/* Peers (see peer.h). */
#include "ftmw_impl.h"
#include "inbox.h"
#include "loop.h"

#include <stdio.h>

#define st ftmw_st

const char *ftmw_peer_name(const ftmw_peer *p, char *buf, size_t len) {
  if (p->kind == FTMW_ROLE_WORKER)
    snprintf(buf, len, "worker %d", p->id);
  else if (p->kind == FTMW_ROLE_MASTER)
    snprintf(buf, len, "master %d", p->id);
  else
    snprintf(buf, len, "spare %d", p->id);
  return buf;
}

int ftmw_peer_failed_locked(ftmw_peer *p, int report, const char *why) {
  int live = p->state == FTMW_PEER_ALIVE || p->state == FTMW_PEER_LAUNCHING;
  if (live) {
    /* Traced before the state changes: an application call may report
     * the failure as soon as the lock is released, and the trace must
     * show the detection first. */
    char name[32];
    ftmw_trace("failure_detected",
               "\"peer\":\"%s\",\"peer_epoch\":%u,\"reason\":\"%s\"",
               ftmw_peer_name(p, name, sizeof(name)), p->epoch, why);
    p->failed_at = uv_hrtime();
    st.failure_seen = 1;
  }
  p->state = FTMW_PEER_FAILED;
  if (report)
    p->unreported = 1;
  ftmw_loop_wake_locked();
  return live;
}

int ftmw_all_masters_gone_locked(void) {
  for (int k = 0; k <= st.M; k++)
    if (st.masters[k].state == FTMW_PEER_ALIVE ||
        st.masters[k].state == FTMW_PEER_LAUNCHING)
      return 0;
  return 1;
}

int ftmw_first_live_master_locked(void) {
  for (int k = 0; k <= st.M; k++)
    if ((st.role == FTMW_ROLE_MASTER && k == st.id) ||
        st.masters[k].state == FTMW_PEER_ALIVE)
      return k;
  return -1;
}

void ftmw_peer_place_locked(ftmw_peer *p, const ftmw_place *at) {
  p->at = *at;
}

/* Primary: worker p's incarnation epoch has failed here; every live
 * replica declares it failed too (DOWN), so that a worker cut off from
 * the primary alone, alive, is fenced everywhere instead of going on with
 * the replicas (see hold_data). Written before any decision that reports
 * the failure, so a replica has it first. */
static void tell_down(const ftmw_peer *p, uint32_t epoch) {
  for (int k = 0; k <= st.M; k++) {
    ftmw_peer *m = &st.masters[k];
    if (k != st.id && m->conn != NULL && m->state == FTMW_PEER_ALIVE)
      ftmw_link_send(m->conn, FTMW_FRAME_DOWN, p->id, epoch, 0, NULL,
                0);
  }
}

/* See peer.h. The FENCE goes out before the close, on the same stream. */
void ftmw_peer_down(ftmw_peer *p, int done, const char *why) {
  ftmw_conn *c = p->conn;
  char name[32];
  ftmw_peer_name(p, name, sizeof(name));
  uv_mutex_lock(&st.lock);
  int was = p->state;
  uint32_t epoch = p->epoch; /* a restore may bump it once we unlock */
  if (was == FTMW_PEER_ALIVE || was == FTMW_PEER_LAUNCHING) {
    if (done)
      p->state = FTMW_PEER_DONE;
    else
      ftmw_peer_failed_locked(p, 1, why);
    int next = !done && p->kind == FTMW_ROLE_MASTER && p->id == st.primary
                   ? ftmw_first_live_master_locked()
                   : -1;
    if (next >= 0) {
      __atomic_store_n(&st.primary, next, __ATOMIC_RELAXED); /* peer_of */
      ftmw_trace("primary_changed", "\"from\":%d,\"primary\":%d", p->id,
                 st.primary);
    }
  }
  int primary = st.role == FTMW_ROLE_MASTER && st.M > 0 && st.primary == st.id;
  int now_primary = primary && p->kind == FTMW_ROLE_MASTER;
  int orphan = st.role == FTMW_ROLE_WORKER || st.role == FTMW_ROLE_SPARE
                   ? ftmw_all_masters_gone_locked()
                   : 0;
  ftmw_loop_wake_locked();
  uv_mutex_unlock(&st.lock);
  int live = was == FTMW_PEER_ALIVE || was == FTMW_PEER_LAUNCHING;
  ftmw_inbox_drop_held(p);
  if (c) {
    if (!done && live && ftmw_link_readable_by_peer(c) &&
        st.role == FTMW_ROLE_MASTER)
      ftmw_link_send(c, FTMW_FRAME_FENCE, 0, 0, 0, NULL, 0);
    p->conn = NULL; /* the FENCE goes out before the close */
    ftmw_link_close(c);
  }
  if (now_primary)
    ftmw_inbox_release_held();
  if (done || !live)
    return;
  if (primary && p->kind == FTMW_ROLE_WORKER)
    tell_down(p, epoch);
  if (st.role == FTMW_ROLE_MASTER && st.id == st.primary && p->at.pid > 0)
    ftmw_log("%s (pid %d on %s) failed: %s", name, (int)p->at.pid,
             p->at.host[0] ? p->at.host : "?", why);
  else if (st.role == FTMW_ROLE_MASTER && st.id == st.primary)
    ftmw_log("%s failed: %s", name, why); /* a master we connected to */
  if (orphan && st.orphan_since == 0) {
    st.orphan_since = ftmw_now_ms();
    ftmw_trace("orphaned", NULL);
  }
}

int ftmw_is_replica(void) {
  return st.M > 0 && st.role == FTMW_ROLE_MASTER && st.id != st.primary;
}
