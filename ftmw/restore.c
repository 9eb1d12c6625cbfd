/* ft_restore's policy (see launch.h): a failed worker is replaced by a
 * process spawned on a host that has not failed (spawn mode) or by an
 * idle spare (static mode). */

#include "ftmw_impl.h"
#include "launch.h"
#include "transport.h"
#include "join.h"
#include "death.h"
#include "localproc.h"
#include "spawn.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* The Open MPI hang that spawn.c bounds is most likely when the spawn
 * races with mpirun's handling of the death of the child the new one
 * replaces (about 1 respawn in 80 on this machine, docs/known-problems.md).
 * When the dead process ran on this host, wait until the launcher has
 * reaped it before spawning, for at most REAP_WAIT_MS: its pid is gone,
 * and, when it ran under ftmw-shim (the process the launcher started),
 * the shim's pid too, which the shim's death notice gives (death.h). */
#define REAP_WAIT_MS 500

/* 1 once pid is gone, 0 at deadline (ftmw_now_ms). */
static int gone_by(pid_t pid, uint64_t deadline) {
  while (kill(pid, 0) == 0 || errno == EPERM) {
    if (ftmw_now_ms() >= deadline)
      return 0;
    uv_sleep(1);
  }
  return 1;
}

static void wait_reaped(ftmw_ctx *cx, const ftmw_place *at,
                        const char *notice) {
  if (!ftmw_proc_is_local(at, ftmw_self_place(cx)))
    return;
  uint64_t t0 = uv_hrtime(), deadline = ftmw_now_ms() + REAP_WAIT_MS;
  pid_t pid = (pid_t)at->pid;
  int shim = 0, gone = gone_by(pid, deadline);
  if (gone && notice[0] != '\0') {
    char why[128];
    /* the shim writes it once it has reaped the process, then exits */
    while (!ftmw_death_notice(notice, why, sizeof(why), &shim) &&
           ftmw_now_ms() < deadline)
      uv_sleep(1);
    if (shim > 0)
      gone = gone_by(pid = shim, deadline);
  }
  if (!gone) {
    ftmw_log("pid %d still there after %d ms; spawning anyway", (int)pid,
             REAP_WAIT_MS);
    return;
  }
  ftmw_trace("reaped", "\"pid\":%d,\"shim\":%d,\"ms\":%.3f", (int)at->pid,
             shim, (uv_hrtime() - t0) / 1e6);
}

/* What wait_reaped needs of p's last process, before its next one
 * replaces it (st.lock held). */
static void last_process_locked(const ftmw_peer *p, ftmw_place *at,
                                char notice[FTMW_DEATH_NAME_MAX]) {
  *at = p->at;
  memcpy(notice, p->notice, FTMW_DEATH_NAME_MAX);
}

/* p's next incarnation begins (st.lock held): JOINING, from spare
 * from_spare (index + 1, or 0 for a spawn). */
static void next_incarnation_locked(ftmw_ctx *cx, ftmw_peer *p, const char *why,
                                    int from_spare) {
  ftmw_peer_begin_locked(cx, p, p->epoch + 1, FTMW_PEER_JOINING, why);
  p->from_spare = from_spare;
}

/* The hostfile entry for p's next process into *host, -1 for anywhere
 * (no hostfile), after blacklisting the host of its last one. Returns
 * FT_SUCCESS, or FT_ERR_NO_HOST when no host is left. */
static int pick_host(ftmw_ctx *cx, const ftmw_peer *p, int *host) {
  *host = -1;
  if (!cx->job.hosts.n)
    return FT_SUCCESS;
  int was = ftmw_spawn_host_of(cx, p->id);
  if (was >= 0 && ftmw_hosts_fail(&cx->job.hosts, cx->job.hosts.v[was].name))
    ftmw_log("host %s blacklisted", cx->job.hosts.v[was].name);
  *host = ftmw_hosts_pick(&cx->job.hosts);
  return *host < 0 ? FT_ERR_NO_HOST : FT_SUCCESS;
}

/* Without replicas: the spawn is queued and ft_restore returns at once,
 * p JOINING (spawn.h); what is sent to p waits for it to join, and a
 * spawn that fails, or a process that does not join in time, is a
 * failure of the new incarnation, reported like any other. A worker
 * whose last FTMW_SPAWN_ATTEMPTS processes never joined (no hostfile to
 * pick another host from) is not restored again. */
static int restore_spawn_async(ftmw_ctx *cx, ftmw_peer *p) {
  int host, rc = pick_host(cx, p, &host);
  uv_mutex_lock(&cx->st.lock);
  if (rc == FT_SUCCESS && !cx->job.hosts.n &&
      p->unjoined >= FTMW_SPAWN_ATTEMPTS)
    rc = FT_ERR_NO_HOST;
  ftmw_place old;
  char old_notice[FTMW_DEATH_NAME_MAX];
  last_process_locked(p, &old, old_notice);
  if (rc == FT_SUCCESS) {
    next_incarnation_locked(cx, p, "restoring by spawn", 0);
    p->join_by = UINT64_MAX; /* set when its spawn starts */
    p->restore_t0 = uv_hrtime();
    p->unjoined++;
  }
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS)
    return rc;
  if (ftmw_spawn_replacement_async(cx, p, host, wait_reaped, &old,
                                   old_notice) != 0) {
    uv_mutex_lock(&cx->st.lock);
    ftmw_peer_failed_locked(cx, p, 0, "could not be spawned");
    uv_mutex_unlock(&cx->st.lock);
    return FT_ERR_NO_HOST;
  }
  return FT_SUCCESS;
}

static int restore_spawn(ftmw_ctx *cx, ftmw_peer *p) {
  int attempts = 0;
  uv_mutex_lock(&cx->st.lock);
  ftmw_place old;
  char old_notice[FTMW_DEATH_NAME_MAX];
  last_process_locked(p, &old, old_notice);
  uv_mutex_unlock(&cx->st.lock);
  wait_reaped(cx, &old, old_notice);
  for (;;) {
    int host;
    if (pick_host(cx, p, &host) != FT_SUCCESS ||
        (!cx->job.hosts.n && attempts++ == FTMW_SPAWN_ATTEMPTS))
      return FT_ERR_NO_HOST;
    uv_mutex_lock(&cx->st.lock);
    next_incarnation_locked(cx, p, "restoring by spawn", 0);
    uv_mutex_unlock(&cx->st.lock);
    int ok = 0;
    if (ftmw_spawn_replacement(cx, p, host) == 0) {
      uv_mutex_lock(&cx->st.lock);
      ok = ftmw_launch_wait_joined_locked(
          cx, p, ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS, 1);
      uv_mutex_unlock(&cx->st.lock);
    } else {
      uv_mutex_lock(&cx->st.lock);
      ftmw_peer_failed_locked(cx, p, 0, "could not be spawned");
      uv_mutex_unlock(&cx->st.lock);
    }
    if (ok)
      return FT_SUCCESS;
  }
}

static int restore_spare(ftmw_ctx *cx, ftmw_peer *p) {
  for (int k = 0; k < cx->job.S; k++) {
    ftmw_peer *sp = &cx->st.spares[k];
    uv_mutex_lock(&cx->st.lock);
    int idle =
        ftmw_peer_is_up(sp) &&
        !(cx->job.hosts.n && ftmw_hosts_is_failed(&cx->job.hosts, sp->at.host));
    if (!idle) {
      uv_mutex_unlock(&cx->st.lock);
      continue;
    }
    next_incarnation_locked(cx, p, "restoring on a spare", k + 1);
    ftmw_op op = {.kind = FTMW_OP_ACTIVATE, .peer = sp, .target = p};
    ftmw_transport_submit(cx, &op, 1);
    ftmw_op_wait_locked(cx, &op);
    int ok = ftmw_launch_wait_joined_locked(
        cx, p, ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS, 1);
    uv_mutex_unlock(&cx->st.lock);
    if (ok)
      return FT_SUCCESS;
  }
  return FT_ERR_NO_HOST;
}

int ftmw_launch_restore(ftmw_ctx *cx, ftmw_peer *p) {
  /* Static mode with a hostfile: the failed worker's host, by the name its
   * process reported, takes no replacement. */
  if (cx->job.hosts.n && cx->job.mode == FTMW_MODE_STATIC && p->at.host[0] &&
      !ftmw_hosts_is_failed(&cx->job.hosts, p->at.host) &&
      ftmw_hosts_blacklist(&cx->job.hosts, p->at.host) == 0)
    ftmw_log("host %s blacklisted", p->at.host);
  if (cx->job.mode == FTMW_MODE_SPAWN && cx->job.M == 0 &&
      ftmw_spawn_async_ok())
    return restore_spawn_async(cx, p);
  return cx->job.mode == FTMW_MODE_SPAWN ? restore_spawn(cx, p)
                                         : restore_spare(cx, p);
}

void ftmw_launch_restores_stop(void) { ftmw_spawn_stop(); }
