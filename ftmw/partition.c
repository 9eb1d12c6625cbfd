/* The partition rule (see partition.h). */
#include "ftmw_impl.h"
#include "partition.h"

#include <string.h>
#include <unistd.h>

#define st ftmw_st
#define job ftmw_job

typedef struct {
  int elsewhere;   /* processes on other hosts that joined */
  int reachable;   /* ...of them, heard within half the timeout */
  int master_lost; /* a master elsewhere silent, not yet declared failed */
} reach;

/* Counts p (st.lock held; p->conn belongs to the loop's owner, the caller). */
static void count(reach *r, const ftmw_peer *p, const ftmw_peer *lost) {
  if (p == lost || p->at.pid == 0 || strcmp(p->at.host, job.host) == 0)
    return;
  if (p->kind == FTMW_ROLE_MASTER && p->id == job.id)
    return;
  r->elsewhere++;
  if (!ftmw_peer_is_up(p) || p->conn == NULL)
    return; /* failed, finished, or not yet joined */
  if (ftmw_link_silent_ms(p->conn) * 2 < (uint64_t)job.cfg.timeout_ms)
    r->reachable++;
  else if (p->kind == FTMW_ROLE_MASTER)
    r->master_lost = 1;
}

void ftmw_partition_check(const ftmw_peer *lost) {
  if (job.role != FTMW_ROLE_MASTER || job.M == 0)
    return;
  reach r = {0, 0, lost->kind == FTMW_ROLE_MASTER};
  uv_mutex_lock(&st.lock);
  if (st.finalizing) { /* the program is done: only its status is left */
    uv_mutex_unlock(&st.lock);
    return;
  }
  for (int i = 1; i <= job.W; i++)
    count(&r, &st.workers[i], lost);
  for (int k = 0; k <= job.M; k++)
    count(&r, &st.masters[k], lost);
  for (int k = 0; k < job.S; k++)
    count(&r, &st.spares[k], lost);
  int primary = st.primary == job.id;
  uv_mutex_unlock(&st.lock);
  r.elsewhere += strcmp(lost->at.host, job.host) != 0;
  if (r.elsewhere == 0 || r.reachable > 0 || !r.master_lost)
    return;
  char name[32];
  ftmw_peer_name(lost, name, sizeof(name));
  ftmw_log("master %d%s on %s: cut off from every other host (%s silent, "
           "and %d more processes elsewhere unreachable): stepping down, "
           "for a master that can reach them to take over",
           job.id, primary ? " (primary)" : "", job.host, name,
           r.elsewhere - 1);
  ftmw_trace("stepped_down", "\"lost\":\"%s\",\"elsewhere\":%d,\"primary\":%d",
             name, r.elsewhere, primary);
  _exit(FTMW_EXIT_CUT_OFF);
}
