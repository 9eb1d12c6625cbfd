/* The job's settings, read from the environment and validated once, by
 * the process that launches the job; the others receive them over MPI. */
#ifndef FTMW_CONFIG_H
#define FTMW_CONFIG_H

#include "bounds.h" /* FTMW_MAX_WORKERS, _MASTERS, _SPARES */
#include "fault.h"  /* FTMW_FAULT_MAX */
#include "parse.h"

#include <stddef.h>
#include <stdint.h>

#define FTMW_PATH_MAX 512

#define FTMW_DEFAULT_HEARTBEAT_MS 250
#define FTMW_DEFAULT_TIMEOUT_MS 3000
/* How long a master waits for a launched or restored process to join it
 * (a replica too, for a worker the primary restored). */
#define FTMW_LAUNCH_WAIT_MS 60000
/* Spawn mode: a spawn of n processes not done after FT_SPAWN_TIMEOUT_MS
 * x (1 + n / 16) is abandoned and made again (spawn.c). */
#define FTMW_DEFAULT_SPAWN_TIMEOUT_MS 16000
/* ft_send returns once a message up to this many bytes is handed to the
 * transport (eager); a longer one waits for its acknowledgement
 * (FT_EAGER_LIMIT; docs/api.md). Open MPI's TCP eager limit, 64 KiB. */
#define FTMW_DEFAULT_EAGER_LIMIT 65536
#define FTMW_MAX_EAGER_LIMIT (64 << 20)
/* After SIGTERM (a time limit) a process has this long to end by itself
 * (FT_TERM_GRACE_MS; term.h), within Slurm's KillWait (30 s by default).
 * Under Open MPI, mpirun SIGKILLs the processes 2 s after it passes
 * SIGTERM on (ftmwrun). */
#define FTMW_DEFAULT_TERM_GRACE_MS 8000
/* The largest message; a frame header cannot announce more. */
#ifndef FTMW_MAX_MESSAGE
#define FTMW_MAX_MESSAGE ((uint64_t)4 << 30)
#endif

typedef struct {
  int workers;      /* FT_NUM_SLAVES; -1 when unset */
  int masters;      /* FT_NUM_MASTERS, replicas besides the primary */
  int spares;       /* FT_SPARES; -1 when unset */
  int heartbeat_ms; /* FT_HEARTBEAT_MS */
  int timeout_ms;   /* FT_TIMEOUT_MS */
  int trace_data;   /* FT_TRACE_DATA: trace every Nth data message; 0 off */
  int spawn_timeout_ms; /* FT_SPAWN_TIMEOUT_MS */
  int eager_limit;  /* FT_EAGER_LIMIT: bytes; 0: every send acknowledged */
  int errors_return; /* FT_ERRORS=return; 0: checked (calls.h) */
  int term_grace_ms; /* FT_TERM_GRACE_MS; 0: SIGTERM ends a process at once */
  uint64_t max_message;
  char hostfile[FTMW_PATH_MAX]; /* FT_HOSTFILE, "" when unset */
  char iface[16];               /* FT_IFACE: masters listen on its IPv4
                                   address; "" when unset (the address
                                   the host's name resolves to) */
  char trace[FTMW_PATH_MAX];    /* FT_TRACE, "" when unset */
  char fault[FTMW_FAULT_MAX];   /* FT_FAULT (tests only), "" when unset */
} ftmw_config;

typedef const char *(*ftmw_getenv_fn)(const char *name);

/* Fills c from the environment through get (getenv in the library, a table
 * in tests). Returns 0, or -1 with a message naming the variable in err. */
int ftmw_config_parse(ftmw_config *c, ftmw_getenv_fn get, char *err,
                      size_t errlen);

#endif
