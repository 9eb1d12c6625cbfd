/* ft_bcast and ms_bcast: the master sends one message to every worker,
 * with the library's own tag (FTMW_TAG_BCAST), which no application
 * receive matches; a worker receives the master's next one. Each send is
 * an ordinary ft_send (ms_send for ms_bcast, whose log keeps every
 * broadcast: mslog.h), so replicas, failures and replay need nothing of
 * their own here. Application thread only. */
#include "calls.h"

#define st ftmw_st
#define job ftmw_job

static int bcast(const char *call, int logged, void *buf, int count,
                 FT_Datatype type, int root) {
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  if (root != 0)
    return ftmw_fail(FT_ERR_RANK);
  if (!ftmw_is_master())
    return ftmw_recv(call, buf, count, type, 0, FTMW_TAG_BCAST, NULL);
  size_t bytes;
  int rc = ftmw_check_buffer(buf, count, type, &bytes);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  /* Every worker gets its copy, whoever failed before it; a failure is
   * what this call reports, before an ft_finalize seen. */
  int error = FT_SUCCESS;
  for (int r = 1; r <= job.W; r++) {
    if (logged)
      ftmw_ms_send(call, buf, count, type, r, FTMW_TAG_BCAST);
    else
      ftmw_send(call, buf, count, type, r, FTMW_TAG_BCAST);
    int e = ft_error();
    if (e != FT_SUCCESS && error != FT_ERR_PEER_FAILED)
      error = e;
  }
  if (error != FT_SUCCESS)
    return ftmw_fail(error);
  ftmw_ok();
  return count;
}

int ft_bcast(void *buf, int count, FT_Datatype type, int root) {
  return bcast("ft_bcast", 0, buf, count, type, root);
}

int ms_bcast(void *buf, int count, FT_Datatype type, int root) {
  return bcast("ms_bcast", 1, buf, count, type, root);
}
