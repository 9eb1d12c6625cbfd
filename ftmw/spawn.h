/* Spawn mode's MPI_Comm_spawn calls, each bounded in time (see spawn.c):
 * the workers and replicas at launch, a replacement for ft_restore. A
 * spawned process is sent its set-up record (launch.h) at once. Included
 * by the launch modules only (it brings in MPI). Every function but
 * ftmw_spawn_wait_flag_locked runs on the application thread, without
 * st.lock. */
#ifndef FTMW_SPAWN_H
#define FTMW_SPAWN_H

#include <mpi.h>
#include <stdint.h>
#include <uv.h>

#include "ftmw_impl.h"
#include "setup.h" /* ftmw_addr */

/* Told to each spawned process in its environment: the ms it may wait for
 * its set-up record before it exits (launch.c, setup_watchdog), and, set,
 * the spawn.stall fault (it stops before MPI_Init, as Open MPI's hang). */
#define FTMW_SPAWN_WAIT_ENV "FTMW_SPAWN_WAIT_MS"
#define FTMW_SPAWN_STALL_ENV "FTMW_SPAWN_STALL"

/* Without a hostfile the local host is reused; a replacement that dies
 * before connecting is retried this many times per ft_restore, and an
 * abandoned spawn at launch made this many times. */
#define FTMW_SPAWN_ATTEMPTS 3

/* Records this program and its arguments (argv after the program name)
 * for the processes it spawns, and whether MPI allows a spawn on a helper
 * thread (thread_multiple; else spawns are not bounded). Returns -1 if
 * the executable cannot be found (logged). */
int ftmw_spawn_prepare(int *argc, char ***argv, int thread_multiple);

/* How long a spawn of n processes may take (ms):
 * FT_SPAWN_TIMEOUT_MS x (1 + n/16). */
int ftmw_spawn_wait_ms(ftmw_ctx *cx, int n);

/* Holding lock, waits on cond until *flag is set or uv_hrtime() reaches
 * deadline; returns *flag. Any thread (also the set-up watchdog's). */
int ftmw_spawn_wait_flag_locked(uv_cond_t *cond, uv_mutex_t *lock,
                                const int *flag, uint64_t deadline);

/* MPI_Recv of a set-up message from rank 0 of comm, given up after
 * wait_ms: MPI_Recv from a process that died first waits for ever.
 * Returns 0 when received, else -1. */
int ftmw_spawn_recv_bounded(void *buf, int bytes, MPI_Comm comm, int wait_ms);

/* Every master: where each worker runs (placement on FT_HOSTFILE, then
 * the hosts restores pick), so that a replica that takes over can
 * restore. Returns -1 when out of memory. */
int ftmw_spawn_place_workers(ftmw_ctx *cx);

/* The hostfile entry worker r was last placed on, or -1 (no hostfile). */
int ftmw_spawn_host_of(ftmw_ctx *cx, int r);

/* The primary: spawns the replicas one by one, each told the masters
 * before it; learns each one's listening address into at[k] (port 0: it
 * died starting, and the job goes on without it); then tells every
 * replica all of them. Returns 0, or -1 if the job cannot start. */
int ftmw_spawn_replicas(ftmw_ctx *cx, ftmw_addr *at);

/* The primary: spawns every worker on its placed host in one call, made
 * again while abandoned. Returns 0, else nonzero. */
int ftmw_spawn_workers(ftmw_ctx *cx);

/* Spawns a replacement for worker p (its new epoch set) on hostfile entry
 * host (-1: anywhere), which becomes p's placed host, and sends it its
 * set-up record; does not wait for it to connect. Returns 0, else nonzero
 * if the spawn failed or was abandoned. */
int ftmw_spawn_replacement(ftmw_ctx *cx, ftmw_peer *p, int host);

/* Whether a spawn may run on a helper thread (MPI_THREAD_MULTIPLE): then
 * a restore need not wait for it. */
int ftmw_spawn_async_ok(void);

/* What runs before a respawn: given the dead incarnation's place and its
 * process's death notice name ("" if none). */
typedef void (*ftmw_spawn_before)(ftmw_ctx *cx, const ftmw_place *old,
                                  const char *notice);

/* ft_restore without waiting: queues the spawn of p's new incarnation
 * (its epoch set, JOINING, join_by not 0) on hostfile entry host (-1:
 * anywhere), which becomes p's placed host. A helper thread runs before
 * (old, old_notice: the dead incarnation's) and then the spawn; it sets
 * p->join_by when it starts, on failure declares that incarnation failed,
 * and until it joins reads its death notice (death.h). Returns 0, or -1
 * when it cannot (nothing queued). */
int ftmw_spawn_replacement_async(ftmw_ctx *cx, ftmw_peer *p, int host,
                                 ftmw_spawn_before before,
                                 const ftmw_place *old, const char *old_notice);

/* Ends the helper thread of the restores (ft_finalize, before anything
 * it uses is freed): the spawns still queued are dropped, and the one it
 * is making ends within its bound. */
void ftmw_spawn_stop(void);

/* Whether an abandoned spawn's thread may still be inside MPI: then
 * MPI_Finalize must not be called. */
int ftmw_spawn_abandoned(void);

#endif
