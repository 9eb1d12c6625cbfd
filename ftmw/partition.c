/* The partition rule (see partition.h). */
#include "ftmw_impl.h"
#include "peer.h"
#include "partition.h"
#include "leave.h"

#include <string.h>
#include <unistd.h>

typedef struct {
  int elsewhere;   /* processes on other hosts that joined */
  int reachable;   /* ...of them, heard within half the timeout */
  int master_lost; /* a master elsewhere silent, not yet declared failed */
  int masters;     /* masters heard within half the timeout, this one too */
  int unjoined;    /* masters that never joined this one */
} reach;

/* p is up and heard within half the timeout (st.lock held; p->conn
 * belongs to the loop's owner, the caller). */
static int heard(ftmw_ctx *cx, const ftmw_peer *p) {
  return ftmw_peer_is_up(p) && p->conn != NULL &&
         ftmw_link_silent_ms(p->conn) * 2 < (uint64_t)cx->job.cfg.timeout_ms;
}

/* Counts p (st.lock held). */
static void count(ftmw_ctx *cx, reach *r, const ftmw_peer *p,
                  const ftmw_peer *lost) {
  if (p == lost || (p->kind == FTMW_ROLE_MASTER && p->id == cx->job.id))
    return;
  if (p->kind == FTMW_ROLE_MASTER) {
    r->masters += heard(cx, p);
    r->unjoined += p->at.pid == 0;
  }
  if (p->at.pid == 0 || strcmp(p->at.host, cx->job.host) == 0)
    return;
  r->elsewhere++;
  if (!ftmw_peer_is_up(p) || p->conn == NULL)
    return; /* failed, finished, or not yet joined */
  if (heard(cx, p))
    r->reachable++;
  else if (p->kind == FTMW_ROLE_MASTER)
    r->master_lost = 1;
}

void ftmw_partition_check(ftmw_ctx *cx, const ftmw_peer *lost, int declared) {
  if (cx->job.role != FTMW_ROLE_MASTER || cx->job.M == 0)
    return;
  reach r = {0, 0, 0, 1, 0};
  uv_mutex_lock(&cx->st.lock);
  if (cx->st.finalizing) { /* the program is done: only its status is left */
    uv_mutex_unlock(&cx->st.lock);
    return;
  }
  for (int i = 1; i <= cx->job.W; i++)
    count(cx, &r, &cx->st.workers[i], lost);
  for (int k = 0; k <= cx->job.M; k++)
    count(cx, &r, &cx->st.masters[k], lost);
  for (int k = 0; k < cx->job.S; k++)
    count(cx, &r, &cx->st.spares[k], lost);
  int primary = cx->st.primary == cx->job.id;
  uv_mutex_unlock(&cx->st.lock);
  int lost_elsewhere = strcmp(lost->at.host, cx->job.host) != 0;
  r.elsewhere += lost_elsewhere;
  int lost_master = lost->kind == FTMW_ROLE_MASTER;
  /* Cut off from every other host, while a master may take over. */
  int alone = declared && r.elsewhere > 0 && r.reachable == 0 &&
              (lost_master || r.master_lost);
  /* Three masters or more, once all have joined: a master that reaches no
   * strict majority of them (itself included) steps down while one
   * elsewhere is silent, not crashed; those that reach a majority go on.
   * At a master's quiet, only the primary (which would write the answer)
   * checks: a silence shorter than the timeout then costs a takeover,
   * not every master. */
  int minority = cx->job.M >= 2 && r.unjoined == 0 && (declared || primary) &&
                 2 * r.masters <= cx->job.M + 1 &&
                 ((lost_master && lost_elsewhere) || r.master_lost);
  if (!alone && !minority)
    return;
  char name[32];
  ftmw_peer_name(lost, name, sizeof(name));
  ftmw_trace("stepped_down", "\"lost\":\"%s\",\"elsewhere\":%d,\"primary\":%d,"
             "\"masters\":%d", name, r.elsewhere, primary, r.masters);
  if (!alone)
    ftmw_leave(FTMW_LEAVE_CUT_OFF, 0,
               "%son %s, reaches %d of the %d masters, no majority (%s "
               "silent): stepping down, for the masters that reach a "
               "majority to go on",
               primary ? "(primary) " : "", cx->job.host, r.masters,
               cx->job.M + 1, name);
  ftmw_leave(FTMW_LEAVE_CUT_OFF, 0,
             "%son %s, cut off from every other host (%s silent, and %d "
             "more processes elsewhere unreachable): stepping down, for a "
             "master that can reach them to take over",
             primary ? "(primary) " : "", cx->job.host, name, r.elsewhere - 1);
}

void ftmw_partition_warn_placement(ftmw_ctx *cx) {
  if (cx->job.role != FTMW_ROLE_MASTER || cx->job.M < 2)
    return;
  uv_mutex_lock(&cx->st.lock);
  for (int k = 0; k <= cx->job.M; k++) {
    const char *h = k == cx->job.id ? cx->job.host : cx->st.masters[k].at.host;
    int same = 0, other = 0;
    for (int j = 0; j <= cx->job.M; j++) {
      const char *hj =
          j == cx->job.id ? cx->job.host : cx->st.masters[j].at.host;
      if (j != cx->job.id && cx->st.masters[j].at.pid == 0)
        continue; /* not joined: not known */
      if (strcmp(h, hj) == 0)
        same++;
      else
        other++;
    }
    if (other > 0 && 2 * same >= cx->job.M + 1) {
      ftmw_log("%d of the %d masters run on host %s: if it is lost, the "
               "others are no majority and step down (docs/operations.md, "
               "the majority rule); run the masters on different hosts",
               same, cx->job.M + 1, h);
      break;
    }
  }
  uv_mutex_unlock(&cx->st.lock);
}
