/* Launch: the only modules that call MPI. MPI starts the processes and
 * carries one set-up record to each (settings, job secret, the masters'
 * addresses); from then on every byte travels over FTMW's connections.
 *
 *  - spawn mode (MPI_COMM_WORLD of size 1): the primary spawns each worker
 *    with MPI_Comm_spawn, one intercommunicator each, on the hosts of
 *    FT_HOSTFILE, and ft_restore spawns replacements;
 *  - static mode (size > 1): rank 0 is the primary, then the workers, then
 *    replicas, then idle spares that ft_restore activates.
 *
 * Three files: launch.c starts the job (settings, the set-up record, both
 * modes' start-up, spares' wait, MPI_Finalize); spawn.c makes every
 * MPI_Comm_spawn, bounded in time (spawn.h); restore.c chooses how
 * ft_restore replaces a failed worker. All functions run on the
 * application thread. */
#ifndef FTMW_LAUNCH_H
#define FTMW_LAUNCH_H

#include <stdint.h>

#include "ctx.h"
#include "setup.h"

struct ftmw_peer;

/* Initialises MPI if needed, fills cx (role, identity, settings,
 * peers), starts the transport and connects the job. Returns 1 for a
 * process created at start-up, 0 for one started by ft_restore, -1 on
 * failure (reason printed). A spare does not return until activated. */
int ftmw_launch_init(ftmw_ctx *cx, int *argc, char ***argv);

/* Starts a replacement for failed worker p, on a host that has not failed
 * (spawn mode) or on an idle spare (static mode). Blocks until it has
 * connected, but in spawn mode without replicas: there it returns once
 * the spawn is queued, p JOINING, and ftmw_peer_restoring(p) says so
 * until it has joined or failed (restore.c, spawn.h). Returns
 * FT_SUCCESS or FT_ERR_NO_HOST. */
int ftmw_launch_restore(ftmw_ctx *cx, struct ftmw_peer *p);

/* Ends the restores' helper thread (ft_finalize, before the transport
 * stops and the peers are freed). */
void ftmw_launch_restores_stop(void);

/* After the transport stopped: MPI_Finalize when clean (no process of the
 * job died, so every process will reach it) and ft_init started MPI; else,
 * under MPICH, PMI's finalize alone (pmi.h). Either is traced. The
 * primary's exit status is then the first thing written at exit. */
void ftmw_launch_finalize(ftmw_ctx *cx, int clean);

/* Waits (st.lock held, released meanwhile) until p leaves LAUNCHING; one
 * that has not joined by deadline (ftmw_now_ms), or, with notices, whose
 * process has a death notice (death.h), is declared failed and the
 * failure logged. Returns 1 if p is alive. Without notices for a peer
 * this process connected to: its end comes through that connection, after
 * what it wrote first (a loaded CI run found a replica that read the
 * primary's notice before its WELCOME, already come, and failed its
 * ft_init where it had joined). */
int ftmw_launch_wait_joined_locked(ftmw_ctx *cx, struct ftmw_peer *p,
                                   uint64_t deadline, int notices);

#endif
