/* The process's state records (ftmw_impl.h, job.h) and who this process
 * is. */
#include "ftmw_impl.h"
#include "owned.h"

ftmw_ctx ftmw_default_ctx;

uint32_t ftmw_job_pid(const struct ftmw_job *job) {
  switch (job->role) {
  case FTMW_ROLE_MASTER: return FTMW_PID_MASTER(job->id);
  case FTMW_ROLE_SPARE: return FTMW_PID_SPARE(job->id);
  default: return (uint32_t)job->id;
  }
}

uint32_t ftmw_self_pid(void) { return ftmw_job_pid(&ftmw_default_ctx.job); }

int ftmw_layer_job(int *master, int *workers, int *replicas) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized)
    return 0;
  *master = cx->job.role == FTMW_ROLE_MASTER;
  *workers = cx->job.W;
  *replicas = cx->job.M;
  return 1;
}

void ftmw_identity_get(ftmw_identity *out) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  out->role = ftmw_role_name(cx->job.role);
  out->rank = cx->job.role == FTMW_ROLE_WORKER ? cx->job.id : 0;
  out->id = cx->job.id;
  out->epoch = cx->job.epoch;
  out->host = cx->job.host;
  out->primary =
      cx->job.role == FTMW_ROLE_MASTER &&
      cx->job.id == __atomic_load_n(&cx->st.primary, __ATOMIC_RELAXED);
}

const char *ftmw_role_name(int role) {
  switch (role) {
  case FTMW_ROLE_MASTER: return "master";
  case FTMW_ROLE_WORKER: return "worker";
  case FTMW_ROLE_SPARE: return "spare";
  default: return "none";
  }
}
