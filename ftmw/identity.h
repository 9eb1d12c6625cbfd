/* This process's identity, for the modules below the job (the trace, the
 * way out): what it is now (a spare activated becomes a worker). Defined
 * in state.c, from the default context's job (job.h), which these modules
 * do not include. */
#ifndef FTMW_IDENTITY_H
#define FTMW_IDENTITY_H

#include <stdint.h>

typedef struct ftmw_identity {
  const char *role; /* "master", "worker", "spare", or "none" */
  int rank;         /* a worker's rank, else 0 */
  int id;           /* worker rank, master index or spare index */
  uint32_t epoch;   /* this process's incarnation */
  const char *host; /* its host's name */
  int primary;      /* 1 in the master this process takes for primary,
                       when it is that master: the one that records the
                       job's exit status */
} ftmw_identity;

__attribute__((visibility("hidden"))) void ftmw_identity_get(ftmw_identity *out);

/* This process's identity on the wire, and a role's name. */
__attribute__((visibility("hidden"))) uint32_t ftmw_self_pid(void);
__attribute__((visibility("hidden"))) const char *ftmw_role_name(int role);

#endif
