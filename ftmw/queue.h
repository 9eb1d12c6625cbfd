/* Intrusive doubly-linked queues (circular, with a sentinel head), in the
 * manner of libuv's src/queue.h: no allocation, O(1) insert and remove. */
#ifndef FTMW_QUEUE_H
#define FTMW_QUEUE_H

#include <stddef.h>

typedef struct ftmw_qnode {
  struct ftmw_qnode *next;
  struct ftmw_qnode *prev;
} ftmw_qnode;

#define FTMW_CONTAINER_OF(ptr, type, field)                                    \
  ((type *)((char *)(ptr)-offsetof(type, field)))

static inline void ftmw_q_init(ftmw_qnode *h) { h->next = h->prev = h; }
static inline int ftmw_q_empty(const ftmw_qnode *h) { return h->next == h; }
static inline ftmw_qnode *ftmw_q_head(const ftmw_qnode *h) { return h->next; }

static inline void ftmw_q_insert_tail(ftmw_qnode *h, ftmw_qnode *n) {
  n->next = h;
  n->prev = h->prev;
  h->prev->next = n;
  h->prev = n;
}

static inline void ftmw_q_insert_head(ftmw_qnode *h, ftmw_qnode *n) {
  ftmw_q_insert_tail(h->next, n); /* before the first node */
}

static inline void ftmw_q_remove(ftmw_qnode *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->next = n->prev = n;
}

/* Moves every node of src to the (empty) dst, leaving src empty. */
static inline void ftmw_q_move(ftmw_qnode *src, ftmw_qnode *dst) {
  if (ftmw_q_empty(src)) {
    ftmw_q_init(dst);
    return;
  }
  dst->next = src->next;
  dst->prev = src->prev;
  dst->next->prev = dst;
  dst->prev->next = dst;
  ftmw_q_init(src);
}

#define ftmw_q_foreach(n, h) for ((n) = (h)->next; (n) != (h); (n) = (n)->next)

#endif
