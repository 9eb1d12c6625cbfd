/* The replica protocol's state (replica_state.h): defined apart, so that
 * the protocol's two halves (replica.c, on the application thread, and
 * replica_frames.c, on the loop's owner) use it without depending on each
 * other both ways. */
#include "replica_state.h"

ftmw_rep_state ftmw_rep;
