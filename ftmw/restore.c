/* ft_restore's policy (see launch.h): a failed worker is replaced by a
 * process spawned on a host that has not failed (spawn mode) or by an
 * idle spare (static mode). */

#include "ftmw_impl.h"
#include "localproc.h"
#include "spawn.h"

#include <errno.h>
#include <signal.h>

#define st ftmw_st
#define job ftmw_job

/* The Open MPI hang that spawn.c bounds is most likely when the spawn
 * races with mpirun's handling of the death of the child the new one
 * replaces (about 1 respawn in 80 on this machine, docs/known-problems.md).
 * When the dead process ran on this host, wait until the launcher has
 * reaped it (its pid is gone) before spawning, for at most REAP_WAIT_MS. */
#define REAP_WAIT_MS 500

static void wait_reaped(const ftmw_peer *p) {
  if (!ftmw_proc_is_local(&p->at, ftmw_transport_self()))
    return;
  uint64_t t0 = uv_hrtime(), deadline = ftmw_now_ms() + REAP_WAIT_MS;
  while (kill((pid_t)p->at.pid, 0) == 0 || errno == EPERM) {
    if (ftmw_now_ms() >= deadline) {
      ftmw_log("worker %d: pid %d still there after %d ms; spawning anyway",
               p->id, (pid_t)p->at.pid, REAP_WAIT_MS);
      return;
    }
    uv_sleep(1);
  }
  ftmw_trace("reaped", "\"peer\":%d,\"pid\":%d,\"ms\":%.3f", p->id,
             (pid_t)p->at.pid, (uv_hrtime() - t0) / 1e6);
}

static int restore_spawn(ftmw_peer *p) {
  int attempts = 0;
  wait_reaped(p);
  for (;;) {
    int host = -1;
    if (job.hosts.n) {
      int was = ftmw_spawn_host_of(p->id);
      if (was >= 0 && ftmw_hosts_fail(&job.hosts, job.hosts.v[was].name))
        ftmw_log("host %s blacklisted", job.hosts.v[was].name);
      host = ftmw_hosts_pick(&job.hosts);
      if (host < 0)
        return FT_ERR_NO_HOST;
    } else if (attempts++ == FTMW_SPAWN_ATTEMPTS) {
      return FT_ERR_NO_HOST;
    }
    uv_mutex_lock(&st.lock);
    p->epoch++;
    ftmw_peer_set_locked(p, FTMW_PEER_JOINING, "restoring by spawn");
    uv_mutex_unlock(&st.lock);
    int ok = 0;
    p->from_spare = 0;
    if (ftmw_spawn_replacement(p, host) == 0) {
      uv_mutex_lock(&st.lock);
      ok = ftmw_launch_wait_joined_locked(p, ftmw_now_ms() +
                                                 FTMW_LAUNCH_WAIT_MS);
      uv_mutex_unlock(&st.lock);
    } else {
      uv_mutex_lock(&st.lock);
      ftmw_peer_failed_locked(p, 0, "could not be spawned");
      uv_mutex_unlock(&st.lock);
    }
    if (ok)
      return FT_SUCCESS;
  }
}

static int restore_spare(ftmw_peer *p) {
  for (int k = 0; k < job.S; k++) {
    ftmw_peer *sp = &st.spares[k];
    uv_mutex_lock(&st.lock);
    int idle = ftmw_peer_is_up(sp) &&
               !(job.hosts.n && ftmw_hosts_is_failed(&job.hosts, sp->at.host));
    if (!idle) {
      uv_mutex_unlock(&st.lock);
      continue;
    }
    p->epoch++;
    ftmw_peer_set_locked(p, FTMW_PEER_JOINING, "restoring on a spare");
    p->from_spare = k + 1;
    ftmw_op op = {.kind = FTMW_OP_ACTIVATE, .peer = sp, .target = p};
    ftmw_transport_submit(&op, 1);
    ftmw_op_wait_locked(&op);
    int ok =
        ftmw_launch_wait_joined_locked(p, ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS);
    uv_mutex_unlock(&st.lock);
    if (ok)
      return FT_SUCCESS;
  }
  return FT_ERR_NO_HOST;
}

int ftmw_launch_restore(ftmw_peer *p) {
  /* Static mode with a hostfile: the failed worker's host, by the name its
   * process reported, takes no replacement. */
  if (job.hosts.n && job.mode == FTMW_MODE_STATIC && p->at.host[0] &&
      !ftmw_hosts_is_failed(&job.hosts, p->at.host) &&
      ftmw_hosts_blacklist(&job.hosts, p->at.host) == 0)
    ftmw_log("host %s blacklisted", p->at.host);
  return job.mode == FTMW_MODE_SPAWN ? restore_spawn(p) : restore_spare(p);
}
