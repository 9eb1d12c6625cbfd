/* An inbound message: header and data in one allocation, so that a
 * payload is read straight into the memory the application's receive
 * takes it from. Allocated by the link, queued and matched by match.c
 * (which implements these). */
#ifndef FTMW_MSG_H
#define FTMW_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"

typedef struct ftmw_msg {
  ftmw_qnode by_peer;    /* peer->inbox */
  ftmw_qnode by_arrival; /* st.arrivals */
  int source;
  int tag;
  uint64_t seq; /* the sender's sequence number (DATA or COPY) */
  uint32_t epoch; /* a worker's, in a master: its incarnation (inbox.c) */
  size_t len;
  size_t cap; /* bytes data can hold (ftmw_msg_new) */
  uint8_t data[];
} ftmw_msg;

/* A message that can hold len bytes, or NULL. Large ones reuse the last
 * large buffer freed when it fits: the kernel writing a payload into fresh
 * memory takes a page fault per page, which cost more than the copy to the
 * caller's buffer (24 ms against 7.5 for 64 MiB here). At most one such
 * buffer is kept. Thread-safe, like ftmw_msg_free. */
ftmw_msg *ftmw_msg_new(size_t len);
void ftmw_msg_free(ftmw_msg *m);
/* Frees the message whose data is payload (NULL: nothing). */
void ftmw_msg_free_data(void *payload);
/* Frees the kept buffer (ft_finalize). */
void ftmw_msg_release_cache(void);

#endif
