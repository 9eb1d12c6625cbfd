/* The process's one state record (ftmw_impl.h) and who this process is. */
#include "ftmw_impl.h"

struct ftmw_state ftmw_st;
#define st ftmw_st

struct ftmw_state ftmw_st;

uint32_t ftmw_self_pid(void) {
  switch (st.role) {
  case FTMW_ROLE_MASTER: return FTMW_PID_MASTER(st.id);
  case FTMW_ROLE_SPARE: return FTMW_PID_SPARE(st.id);
  default: return (uint32_t)st.id;
  }
}

const char *ftmw_role_name(int role) {
  switch (role) {
  case FTMW_ROLE_MASTER: return "master";
  case FTMW_ROLE_WORKER: return "worker";
  case FTMW_ROLE_SPARE: return "spare";
  default: return "none";
  }
}
