/* Death notices: how a master learns at once of a process that died
 * before it connected (in MPI_Init, or in ft_init), which has no
 * connection whose loss could be seen.
 *
 * Under ftmwrun, ftmw-shim is the parent of every process a master waits
 * for: each rank in static mode (ftmwrun puts it there), each spawned
 * process in spawn mode (spawn.c spawns FTMW_SHIM with the program as its
 * argument, and names the notice). When its process ends, the shim writes
 * a notice into FTMW_DEATH_DIR (tools/ftmw-shim.c). A master waiting for a
 * process to join reads its notice every FTMW_DEATH_POLL_MS (launch.c, and
 * spawn.c for a restore that does not wait), rather than waiting
 * FTMW_LAUNCH_WAIT_MS for nothing. */
#ifndef FTMW_DEATH_H
#define FTMW_DEATH_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

struct ftmw_peer;

#define FTMW_DEATH_POLL_MS 100 /* how often a wait for a join reads it */
#define FTMW_DEATH_NAME_MAX 48

/* Static mode: the name of the notice of the rank launched as peer (kind,
 * id), in name (len bytes); 0 if it has none (an incarnation above 0 is a
 * spare activated as that peer). */
int ftmw_death_name_static(ftmw_ctx *cx, int kind, int id, uint32_t epoch,
                           char *name, size_t len);

/* Spawn mode: a new name for the notice of one spawn of incarnation epoch
 * of peer (kind, id), unique in the job (this master's index and a count
 * of its spawns: a spawn abandoned and made again, or made again by a
 * master that took over, has the same epoch, and its abandoned process
 * writes its notice later). */
void ftmw_death_name_spawn(ftmw_ctx *cx, int kind, int id, uint32_t epoch,
                           char *name, size_t len);

/* 1 with the first line of the notice called name in why (len bytes), and
 * the pid of the ftmw-shim that wrote it in *shim (0 if not said; shim may
 * be NULL); 0 if there is none, or no FTMW_DEATH_DIR. May take a while on a
 * shared file system: not to be called under st.lock. */
int ftmw_death_notice(const char *name, char *why, size_t len, int *shim);

/* p, still joining, has a notice: it is declared failed, and logged
 * (st.lock held). */
void ftmw_death_declare_locked(ftmw_ctx *cx, struct ftmw_peer *p,
                               const char *notice);

#endif
