/* The data numbers received from one sender, so that a duplicate is
 * dropped and nothing else is. A sender's frames come in order on one
 * connection, but a replica also gets a dead worker's messages from the
 * primary (KEPT) in the order the program received them, which the tags
 * may make another (found by tools/ftmw-sim, seed 15798: a replica took
 * the later message for new and the earlier one for a duplicate, and
 * reported the worker's failure where the other masters got its data).
 * So: every number up to `upto`, and which of the next FTMW_SEQSET_SPAN.
 * A number further ahead counts the oldest missing ones as received. */
#ifndef FTMW_SEQSET_H
#define FTMW_SEQSET_H

#include <stdint.h>
#include <string.h>

#define FTMW_SEQSET_WORDS 4
#define FTMW_SEQSET_SPAN (64 * FTMW_SEQSET_WORDS)

typedef struct ftmw_seqset {
  uint64_t upto;
  uint64_t above[FTMW_SEQSET_WORDS]; /* bit i: upto + 1 + i received */
} ftmw_seqset;

static inline void ftmw_seqset_clear(ftmw_seqset *s) {
  memset(s, 0, sizeof(*s));
}

/* Moves the window one number on (upto + 1 counts as received). */
static inline void ftmw_seqset_step(ftmw_seqset *s) {
  for (int i = 0; i < FTMW_SEQSET_WORDS; i++)
    s->above[i] = s->above[i] >> 1 |
                  (i + 1 < FTMW_SEQSET_WORDS ? s->above[i + 1] << 63 : 0);
  s->upto++;
}

/* Whether seq was received already. */
static inline int ftmw_seqset_has(const ftmw_seqset *s, uint64_t seq) {
  if (seq <= s->upto)
    return 1;
  uint64_t i = seq - s->upto - 1;
  return i < FTMW_SEQSET_SPAN && (s->above[i / 64] >> (i % 64) & 1) != 0;
}

/* Records seq: 1 if it is new, 0 if it was received already. */
static inline int ftmw_seqset_add(ftmw_seqset *s, uint64_t seq) {
  if (seq <= s->upto)
    return 0;
  /* In order, nothing received ahead (every message but a dead worker's
   * after a failover): nothing to shift. */
  uint64_t ahead = 0;
  for (int w = 0; w < FTMW_SEQSET_WORDS; w++)
    ahead |= s->above[w];
  if (seq == s->upto + 1 && ahead == 0) {
    s->upto = seq;
    return 1;
  }
  while (seq > s->upto + FTMW_SEQSET_SPAN)
    ftmw_seqset_step(s);
  uint64_t i = seq - s->upto - 1;
  uint64_t bit = (uint64_t)1 << (i % 64);
  if (s->above[i / 64] & bit)
    return 0;
  s->above[i / 64] |= bit;
  while (s->above[0] & 1)
    ftmw_seqset_step(s);
  return 1;
}

#endif
