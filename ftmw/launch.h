/* Launch: the only module that calls MPI. MPI starts the processes and
 * carries one set-up record to each (settings, job secret, the masters'
 * addresses); from then on every byte travels over FTMW's connections.
 *
 *  - spawn mode (MPI_COMM_WORLD of size 1): the primary spawns each worker
 *    with MPI_Comm_spawn, one intercommunicator each, on the hosts of
 *    FT_HOSTFILE, and ft_restore spawns replacements;
 *  - static mode (size > 1): rank 0 is the primary, then the workers, then
 *    replicas, then idle spares that ft_restore activates.
 * All functions run on the application thread. */
#ifndef FTMW_LAUNCH_H
#define FTMW_LAUNCH_H

/* Initialises MPI if needed, fills ftmw_st (role, identity, settings,
 * peers), starts the transport and connects the job. Returns 1 for a
 * process created at start-up, 0 for one started by ft_restore, -1 on
 * failure (reason printed). A spare does not return until activated. */
int ftmw_launch_init(int *argc, char ***argv);

/* Starts a replacement for failed worker p, on a host that has not failed
 * (spawn mode) or on an idle spare (static mode); blocks until it has
 * connected. Returns FT_SUCCESS or FT_ERR_NO_HOST. */
int ftmw_launch_restore(ftmw_peer *p);

/* After the transport stopped: MPI_Finalize when clean (no process of the
 * job died, so every process will reach it) and ft_init started MPI. */
void ftmw_launch_finalize(int clean);

#endif
