/* The process's state records (ftmw_impl.h, job.h) and who this process
 * is. */
#include "ftmw_impl.h"
#include "owned.h"

struct ftmw_state ftmw_st;
struct ftmw_job ftmw_job;
#define job ftmw_job

uint32_t ftmw_self_pid(void) {
  switch (job.role) {
  case FTMW_ROLE_MASTER: return FTMW_PID_MASTER(job.id);
  case FTMW_ROLE_SPARE: return FTMW_PID_SPARE(job.id);
  default: return (uint32_t)job.id;
  }
}

int ftmw_layer_job(int *master, int *workers, int *replicas) {
  if (!ftmw_st.initialized)
    return 0;
  *master = job.role == FTMW_ROLE_MASTER;
  *workers = job.W;
  *replicas = job.M;
  return 1;
}

void ftmw_identity_get(ftmw_identity *out) {
  out->role = ftmw_role_name(job.role);
  out->rank = job.role == FTMW_ROLE_WORKER ? job.id : 0;
  out->id = job.id;
  out->epoch = job.epoch;
  out->host = job.host;
  out->primary = job.role == FTMW_ROLE_MASTER &&
                 job.id == __atomic_load_n(&ftmw_st.primary, __ATOMIC_RELAXED);
}

const char *ftmw_role_name(int role) {
  switch (role) {
  case FTMW_ROLE_MASTER: return "master";
  case FTMW_ROLE_WORKER: return "worker";
  case FTMW_ROLE_SPARE: return "spare";
  default: return "none";
  }
}
