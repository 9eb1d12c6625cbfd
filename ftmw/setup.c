/* The set-up record MPI carries to each new process (setup.h). */
#include "setup.h"

#include "ftmw_impl.h"
#include "join.h" /* ftmw_self_place */

#include <stdio.h>
#include <string.h>

#define st ftmw_st
#define job ftmw_job

/* Every master's listening address, in priority order: what each new
 * process (worker, spare, replacement) is told to connect to. */
static ftmw_addr masters_at[FTMW_MAX_MASTERS];

ftmw_addr *ftmw_setup_masters(void) { return masters_at; }

void ftmw_setup_apply(const ftmw_setup *s) {
  job.role = s->role;
  job.id = s->id;
  job.epoch = s->epoch;
  job.W = s->W;
  job.M = s->M;
  job.S = s->S;
  job.cfg = s->cfg;
  memcpy(job.secret, s->secret, sizeof(job.secret));
}

void ftmw_setup_self_addr(ftmw_addr *a) {
  memset(a, 0, sizeof(*a));
  snprintf(a->ip, sizeof(a->ip), "%s", st.listen_ip);
  a->port = st.listen_port;
  a->at = *ftmw_self_place();
}

void ftmw_setup_put_masters(ftmw_setup *s) {
  memcpy(s->masters, masters_at, sizeof(masters_at));
  uv_mutex_lock(&st.lock);
  for (int k = 0; k <= job.M && st.masters; k++)
    if (ftmw_peer_is_failed(&st.masters[k]))
      s->masters[k].port = 0;
  uv_mutex_unlock(&st.lock);
}

void ftmw_setup_fill(ftmw_setup *s, int role, int id, uint32_t epoch) {
  memset(s, 0, sizeof(*s));
  s->magic = FTMW_SETUP_MAGIC;
  s->role = role;
  s->id = id;
  s->epoch = epoch;
  s->W = job.W;
  s->M = job.M;
  s->S = job.S;
  s->cfg = job.cfg;
  memcpy(s->secret, job.secret, sizeof(s->secret));
  if (job.id == 0 && job.role == FTMW_ROLE_MASTER)
    ftmw_setup_self_addr(&masters_at[0]);
  ftmw_setup_put_masters(s);
}
