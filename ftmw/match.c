/* Matching of inbound messages (see match.h). */
#include "ftmw_impl.h"
#include "match.h"

#include <stdlib.h>

/* Messages of at least this size reuse the kept buffer. */
#define MSG_REUSE_MIN (256 * 1024)

static ftmw_msg *kept_large; /* exchanged atomically: two threads free */

ftmw_msg *ftmw_msg_new(size_t len) {
  if (len >= MSG_REUSE_MIN) {
    ftmw_msg *m = __atomic_exchange_n(&kept_large, NULL, __ATOMIC_ACQ_REL);
    if (m != NULL && m->cap >= len && m->cap / 2 <= len)
      return m; /* fits, and wastes less than half of itself */
    free(m);
  }
  ftmw_msg *m = malloc(sizeof(*m) + len);
  if (m != NULL)
    m->cap = len;
  return m;
}

void ftmw_msg_free_data(void *payload) {
  if (payload)
    ftmw_msg_free(FTMW_CONTAINER_OF(payload, ftmw_msg, data));
}

void ftmw_msg_free(ftmw_msg *m) {
  if (m != NULL && m->cap >= MSG_REUSE_MIN)
    m = __atomic_exchange_n(&kept_large, m, __ATOMIC_ACQ_REL);
  free(m);
}

void ftmw_msg_release_cache(void) {
  free(__atomic_exchange_n(&kept_large, NULL, __ATOMIC_ACQ_REL));
}

void ftmw_match_push(ftmw_qnode *arrivals, ftmw_peer *p, ftmw_msg *m) {
  ftmw_q_insert_tail(&p->inbox, &m->by_peer);
  ftmw_q_insert_tail(arrivals, &m->by_arrival);
}

ftmw_msg *ftmw_match_peer(ftmw_peer *p, int tag) {
  ftmw_qnode *n;
  ftmw_q_foreach(n, &p->inbox) {
    ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_peer);
    if (ftmw_tag_matches(tag, m->tag))
      return m;
  }
  return NULL;
}

ftmw_msg *ftmw_match_seq(ftmw_peer *p, uint64_t seq) {
  ftmw_qnode *n;
  ftmw_q_foreach(n, &p->inbox) {
    ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_peer);
    if (m->seq == seq)
      return m;
  }
  return NULL;
}

ftmw_msg *ftmw_match_any(ftmw_qnode *arrivals, int tag) {
  ftmw_qnode *n;
  ftmw_q_foreach(n, arrivals) {
    ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_arrival);
    if (ftmw_tag_matches(tag, m->tag))
      return m;
  }
  return NULL;
}

ftmw_msg *ftmw_match_posted(ftmw_qnode *arrivals, ftmw_peer *workers, int W,
                            int (*posted)(void *ctx, const ftmw_peer *w,
                                          int *tag),
                            void *ctx) {
  ftmw_qnode *n;
  ftmw_q_foreach(n, arrivals) {
    ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_arrival);
    int tag;
    if (m->source < 1 || m->source > W ||
        !posted(ctx, &workers[m->source], &tag))
      continue;
    /* Only the oldest message of a source may complete its posting, so
     * that one sender's messages are still received in order. */
    if (ftmw_tag_matches(tag, m->tag) &&
        ftmw_match_peer(&workers[m->source], tag) == m)
      return m;
  }
  return NULL;
}

void ftmw_match_take(ftmw_msg *m) {
  ftmw_q_remove(&m->by_peer);
  ftmw_q_remove(&m->by_arrival);
}

int ftmw_match_drop(ftmw_peer *p) {
  int n = 0;
  while (!ftmw_q_empty(&p->inbox)) {
    ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->inbox), ftmw_msg, by_peer);
    ftmw_match_take(m);
    ftmw_msg_free(m);
    n++;
  }
  while (!ftmw_q_empty(&p->unconfirmed)) { /* never received: not counted */
    ftmw_msg *m =
        FTMW_CONTAINER_OF(ftmw_q_head(&p->unconfirmed), ftmw_msg, by_peer);
    ftmw_q_remove(&m->by_peer);
    ftmw_msg_free(m);
  }
  return n;
}
