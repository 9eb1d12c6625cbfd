/* Sends that do not wait, and their requests: a copy of the data goes out
 * as DATA that the receiver may acknowledge lazily (the wire's
 * FTMW_FLAG_LAZY and FTMW_FLAG_EAGER); the request settles when its ACK
 * comes or its connection fails. ft_isend's and ft_send's eager sends
 * without master replicas (send.c decides which path a send takes).
 * Application thread only. */
#ifndef FTMW_ISEND_H
#define FTMW_ISEND_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "ftmw.h"
#include "owned.h" /* ftmw_piece */

struct ftmw_peer;

/* Frees every request left (ft_finalize, once the loop has stopped and
 * nothing of theirs is written any more). */
void ftmw_isend_free_all(ftmw_ctx *cx);

/* Without master replicas, ft_isend without its check of the tag: the
 * library's own sends name themselves (call: the API call that reports
 * dest's failure), and ft_bcast's use its tag (FTMW_TAG_BCAST). flags,
 * how soon the receiver acknowledges it: FTMW_FLAG_LAZY (ft_isend) with
 * its next frames, FTMW_FLAG_EAGER (ft_send, req NULL) when it likes, 0
 * at once (a broadcast waits for it). An eager send first waits while
 * the frames to dest not yet acknowledged fill its window
 * (FTMW_EAGER_WINDOW_*), so that a sender never runs ahead of its
 * receiver without bound. */
int ftmw_isend(ftmw_ctx *cx, const char *call, const void *buf, int count,
               FT_Datatype type, int dest, int tag, unsigned flags,
               FT_Request *req);
/* The same, its arguments checked already (ftmw_send_target: p, bytes). */
int ftmw_isend_checked(ftmw_ctx *cx, const char *call, struct ftmw_peer *p,
                       const void *buf, size_t bytes, int count, int dest,
                       int tag, unsigned flags, FT_Request *req);
#define FTMW_EAGER_WINDOW_FRAMES 256
#define FTMW_EAGER_WINDOW_BYTES ((size_t)4 << 20)

/* A master's eager DATA number seq to worker p, numbered by the caller
 * (with replicas, the primary's ft_send; st.lock held, released while the
 * window is full): the same as ftmw_isend's with FTMW_FLAG_EAGER and no
 * request. Returns FT_SUCCESS, FT_ERR_NOMEM (nothing sent), or p's
 * failure, reported by call. */
int ftmw_isend_eager_locked(ftmw_ctx *cx, const char *call, struct ftmw_peer *p,
                            uint64_t seq, int tag, const void *buf,
                            size_t bytes);

/* ftmw_isend_owned without master replicas, its arguments checked (p,
 * bytes: the sum of headlen and the pieces' lengths): head copied into
 * the request, the pieces written from where they are and given back
 * (release) when the request is freed, or now if it cannot be sent. */
int ftmw_isend_pieces(ftmw_ctx *cx, const char *call, struct ftmw_peer *p,
                      int dest, int tag, const void *head, size_t headlen,
                      const ftmw_piece *pieces, int n, size_t bytes,
                      ftmw_release_fn release, unsigned flags);
/* Calls release for each piece's owner (not NULL) of v[0..n-1]. */
void ftmw_release_pieces(const ftmw_piece *v, int n, ftmw_release_fn release);

/* A request for a send that is acknowledged when it returns (with
 * replicas, ft_isend is ft_ssend's): made before the send, so that no
 * send goes out without its request (NULL when out of memory), settled
 * with FT_SUCCESS; then ftmw_request_keep queues it for ft_finalize if
 * the send was made (sent), or frees it. */
FT_Request ftmw_request_settled(const struct ftmw_peer *p, int dest, int tag,
                                int count);
void ftmw_request_keep(ftmw_ctx *cx, FT_Request r, int sent);

#endif
