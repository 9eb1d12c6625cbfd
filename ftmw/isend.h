/* Non-blocking sends (ft_isend) and their requests: a copy of the data
 * goes out as DATA that the receiver may acknowledge lazily (the wire's
 * FTMW_FLAG_LAZY); the request settles when its ACK comes or its
 * connection fails. Application thread only. */
#ifndef FTMW_ISEND_H
#define FTMW_ISEND_H

#include "ftmw.h"

/* Frees every request left (ft_finalize, once the loop has stopped and
 * nothing of theirs is written any more). */
void ftmw_isend_free_all(void);

/* ft_isend without its check of the tag: ft_bcast's sends use the
 * library's own (FTMW_TAG_BCAST). lazy: the receiver may acknowledge it
 * with its next frames (ft_isend: FTMW_FLAG_LAZY); 0 when the caller
 * waits for the acknowledgement at once (a broadcast). */
int ftmw_isend(const void *buf, int count, FT_Datatype type, int dest,
               int tag, int lazy, FT_Request *req);

#endif
