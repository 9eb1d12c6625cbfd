/* The set-up record MPI carries to each new process (settings, the job's
 * secret, the masters' addresses), between launch.c, spawn.c and
 * restore.c; setup.c fills and applies it. */
#ifndef FTMW_SETUP_H
#define FTMW_SETUP_H

#include <stdint.h>

#include "config.h" /* ftmw_config, FTMW_MAX_MASTERS */
#include "ctx.h"
#include "job.h"    /* ftmw_addr */
#include "wire.h"   /* ftmw_place, FTMW_SECRET_SIZE */

/* The MPI tag of set-up messages (the record, a replica's address). */
#define FTMW_SETUP_TAG 7001

/* What MPI carries to each process: fixed size, one binary per job. */
typedef struct {
  uint32_t magic;
  int32_t status; /* 0, or the job cannot start (errmsg says why) */
  int32_t role, id;
  uint32_t epoch;
  int32_t W, M, S;
  ftmw_config cfg;
  uint8_t secret[FTMW_SECRET_SIZE];
  ftmw_addr masters[FTMW_MAX_MASTERS];
  char errmsg[256];
} ftmw_setup;

/* a as received through MPI, its strings ended within their fields. */
static inline ftmw_addr ftmw_addr_ended(ftmw_addr a) {
  a.ip[sizeof(a.ip) - 1] = '\0';
  a.at.host[sizeof(a.at.host) - 1] = '\0';
  return a;
}

/* setup.c: the set-up record. */
#define FTMW_SETUP_MAGIC 0x46544d53u

/* The set-up record for a new process (role, id, epoch) of this job: the
 * settings, the secret and every master's address as this master knows
 * them (a master known dead with port 0). Takes st.lock, so the caller
 * must not hold it. */
void ftmw_setup_fill(ftmw_ctx *cx, ftmw_setup *s, int role, int id,
                     uint32_t epoch);

/* This master's address, as the others are told it. */
void ftmw_setup_self_addr(ftmw_ctx *cx, ftmw_addr *a);

/* Copies every master's address into s; a master known dead is not worth
 * a connection attempt (port 0). Takes st.lock: the loop may be changing
 * the masters' states. */
void ftmw_setup_put_masters(ftmw_ctx *cx, ftmw_setup *s);

/* Takes a received record's identity, sizes, settings and secret. */
void ftmw_setup_apply(ftmw_ctx *cx, const ftmw_setup *s);

/* Every master's listening address, in priority order ([FTMW_MAX_MASTERS]):
 * what each new process is told to connect to. */
ftmw_addr *ftmw_setup_masters(ftmw_ctx *cx);

#endif
