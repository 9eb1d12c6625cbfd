/* The partition rule: a master cut off from every other host steps down.
 *
 * When a master's host is cut off from the rest of the cluster, the
 * masters elsewhere see it go silent, and one of them takes over as
 * primary. The cut-off master, left alone, must not go on acting as
 * primary (restoring workers, writing the answer, the exit status): there
 * would be two. It cannot tell a partition from the crash of everything
 * else, but it knows when it has nobody left to work with.
 *
 * The rule, checked by a master of a job with replicas each time it is
 * about to declare a peer failed for its silence: it steps down (leaves,
 * FTMW_LEAVE_CUT_OFF: status 4, writing nothing more) when
 *   - it can reach no process on another host: every master, worker and
 *     spare there is failed, or has been silent for half the timeout
 *     (suspected), or is the one now found silent; and
 *   - another master may still be alive to take over: the one now found
 *     silent is a master, or a master elsewhere is silent without having
 *     been declared failed yet.
 * Nor once the master is in ft_finalize: the program is done (its answer
 * is out, or was never to be), and the workers that finished count as
 * unreachable, which must not make a master alone at the end step down.
 * A host is a host name (MPI's processor name). A job on one host never
 * steps down; nor does a master whose other masters all crashed (their
 * connections closed): no one can take over from it.
 *
 * The majority rule, for a partition that splits the hosts into groups
 * each holding a master and workers (where the first rule keeps both
 * sides going, each reaching processes elsewhere): with three masters or
 * more (FT_NUM_MASTERS >= 2), a master steps down when the masters it
 * heard within half the timeout, itself included, are no strict majority
 * of them all while a master elsewhere is silent (not crashed), once every
 * master has joined. The primary checks it when a master goes quiet (half
 * the timeout) too, so a primary on the minority side leaves about half a
 * timeout before the majority side declares it failed and takes over; a
 * replica, only when it declares one failed (a silence shorter than the
 * timeout costs a takeover, not every master).
 * Crashed masters count against the majority: with two of three gone
 * (one crashed, one cut off), no side has one and every master steps
 * down; the job ends without an answer rather than with two. */
#ifndef FTMW_PARTITION_H
#define FTMW_PARTITION_H

#include "ctx.h"

struct ftmw_peer;

/* Called by the loop's owner when lost is about to be declared failed for
 * its silence (declared), or when a master goes quiet (silent for half the
 * timeout, not declared): steps down (does not return) when a rule above
 * says so: when declared, the first; the majority rule at both. */
void ftmw_partition_check(ftmw_ctx *cx, const struct ftmw_peer *lost,
                          int declared);

/* The primary, once every master has joined: says so when one host holds
 * half the masters or more, whose loss would leave the others no
 * majority (a job on one host is not told). */
void ftmw_partition_warn_placement(ftmw_ctx *cx);

#endif
