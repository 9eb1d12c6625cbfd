/* Non-blocking sends (ft_isend) and their requests: a copy of the data
 * goes out as DATA that the receiver may acknowledge lazily (the wire's
 * FTMW_FLAG_LAZY); the request settles when its ACK comes or its
 * connection fails. Application thread only. */
#ifndef FTMW_ISEND_H
#define FTMW_ISEND_H

/* Frees every request left (ft_finalize, once the loop has stopped and
 * nothing of theirs is written any more). */
void ftmw_isend_free_all(void);

#endif
