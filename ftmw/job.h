/* This process's place in the job, and the job's settings: set at
 * start-up (launch.c, setup.c) before the transport starts, and read by
 * every layer. Changes later: a spare activated becomes a worker (role,
 * id, epoch; join.c's ftmw_join_activate, under st.lock, while its
 * application thread waits in ft_init for exactly that); the masters'
 * addresses (masters_at), learned during ft_init as the replicas start
 * (launch.c, spawn.c), and the primary's own rewritten at each set-up
 * record it fills (setup.c, on whichever thread spawns). */
#ifndef FTMW_JOB_H
#define FTMW_JOB_H

#include <stdint.h>

#include "config.h"
#include "hosts.h"
#include "identity.h" /* ftmw_self_pid, ftmw_role_name */
#include "wire.h" /* FTMW_SECRET_SIZE, FTMW_HOST_MAX */

/* A master's listening address, and where it runs (what its WELCOME will
 * say), as MPI carries it at launch. */
typedef struct {
  char ip[48];
  int32_t port;
  ftmw_place at;
} ftmw_addr;

enum ftmw_mode { FTMW_MODE_SPAWN = 1, FTMW_MODE_STATIC };

struct ftmw_job {
  int mode; /* FTMW_MODE_* */
  int role; /* FTMW_ROLE_* of this process */
  int id;   /* this process's worker rank / master index / spare index */
  uint32_t epoch; /* this process's incarnation */
  int restored;   /* started by ft_restore */
  int W, M, S;    /* workers, master replicas, spares */
  ftmw_config cfg;
  ftmw_hosts hosts;
  uint8_t secret[FTMW_SECRET_SIZE];
  char host[FTMW_HOST_MAX]; /* this process's host name */
  ftmw_place place; /* where it runs (join.c, as the transport starts) */
  /* Every master's listening address, in priority order: what each new
   * process (worker, spare, replacement) is told to connect to. */
  ftmw_addr masters_at[FTMW_MAX_MASTERS];
};

/* The process id on the wire (FTMW_PID_*) of the process job describes
 * (ftmw_self_pid: this one's, for the base modules). */
uint32_t ftmw_job_pid(const struct ftmw_job *job);

#endif
