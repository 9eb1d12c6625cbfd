/* What a layer above the API (farm.c) needs to act on time in a master,
 * the same way in the primary and its replicas: the masters' one clock,
 * and stopping a worker whose task overran (its receive from any worker
 * with a deadline is ftmw_recv_owned's, owned.h). Master only,
 * application thread. */
#ifndef FTMW_TIMED_H
#define FTMW_TIMED_H

#include <stdint.h>

#include "ftmw.h"

/* The masters' clock, in milliseconds: the primary reads its own and the
 * replicas' same call follows it, so every master takes the same
 * time-based decisions. Each master keeps the offset from its own clock
 * to the last value it followed, so that a master that takes over goes on
 * from where the old primary's clock was (across hosts too). Outside a
 * master: this process's clock. */
uint64_t ftmw_decided_ms(void);

/* Declares worker rank's incarnation failed, for why (logged and
 * traced): the one the application knows (its last ft_restore's, the
 * same in every master at the same call), if still live. It fences it
 * (it exits when it reads the FENCE), as if it had gone silent: the next
 * call that names it reports the failure. Returns 1, or 0 with the error
 * set (misuse, or it had already failed or been replaced). */
int ftmw_fence_worker(int rank, const char *why);

/* Worker rank was restored without waiting for it (ft_restore in spawn
 * mode without replicas) and has not joined yet: what it was sent waits
 * for it. Never, with replicas (their restores wait), so a decision on it
 * is the same in every master. */
int ftmw_worker_pending(int rank);

/* Whether worker rank's last incarnation ever joined: 0 when it was
 * restored without waiting for it and failed before it joined (its spawn
 * failed or was abandoned, or it did not connect in time), so that what
 * it was handed never ran. Still so after the failure, until the next
 * restore. Always 1 with replicas (their restores wait for the join). */
int ftmw_worker_joined(int rank);

#endif
