/* The set-up record MPI carries to each new process (setup.h). */
#include "setup.h"

#include "ftmw_impl.h"
#include "join.h" /* ftmw_self_place */

#include <stdio.h>
#include <string.h>

ftmw_addr *ftmw_setup_masters(ftmw_ctx *cx) { return cx->job.masters_at; }

void ftmw_setup_apply(ftmw_ctx *cx, const ftmw_setup *s) {
  cx->job.role = s->role;
  cx->job.id = s->id;
  cx->job.epoch = s->epoch;
  cx->job.W = s->W;
  cx->job.M = s->M;
  cx->job.S = s->S;
  cx->job.cfg = s->cfg;
  memcpy(cx->job.secret, s->secret, sizeof(cx->job.secret));
}

void ftmw_setup_self_addr(ftmw_ctx *cx, ftmw_addr *a) {
  memset(a, 0, sizeof(*a));
  snprintf(a->ip, sizeof(a->ip), "%s", cx->st.listen_ip);
  a->port = cx->st.listen_port;
  a->at = *ftmw_self_place(cx);
}

void ftmw_setup_put_masters(ftmw_ctx *cx, ftmw_setup *s) {
  memcpy(s->masters, cx->job.masters_at, sizeof(cx->job.masters_at));
  uv_mutex_lock(&cx->st.lock);
  for (int k = 0; k <= cx->job.M && cx->st.masters; k++)
    if (ftmw_peer_is_failed(&cx->st.masters[k]))
      s->masters[k].port = 0;
  uv_mutex_unlock(&cx->st.lock);
}

void ftmw_setup_fill(ftmw_ctx *cx, ftmw_setup *s, int role, int id,
                     uint32_t epoch) {
  memset(s, 0, sizeof(*s));
  s->magic = FTMW_SETUP_MAGIC;
  s->role = role;
  s->id = id;
  s->epoch = epoch;
  s->W = cx->job.W;
  s->M = cx->job.M;
  s->S = cx->job.S;
  s->cfg = cx->job.cfg;
  memcpy(s->secret, cx->job.secret, sizeof(s->secret));
  if (cx->job.id == 0 && cx->job.role == FTMW_ROLE_MASTER)
    ftmw_setup_self_addr(cx, &cx->job.masters_at[0]);
  ftmw_setup_put_masters(cx, s);
}
