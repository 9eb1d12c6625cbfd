/* Matching order of inbound messages (ftmw/match.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ftmw_impl.h"
#include "match.h"

static ftmw_peer peers[4];
static ftmw_qnode arrivals;

static void setup(void) {
  memset(peers, 0, sizeof(peers));
  for (int i = 0; i < 4; i++) {
    peers[i].id = i;
    ftmw_q_init(&peers[i].inbox);
    ftmw_q_init(&peers[i].unconfirmed);
  }
  ftmw_q_init(&arrivals);
}

static ftmw_msg *push(int src, int tag, int value) {
  ftmw_msg *m = ftmw_msg_new(sizeof(int));
  m->source = src;
  m->tag = tag;
  m->len = sizeof(int);
  memcpy(m->data, &value, sizeof(int));
  ftmw_match_push(&arrivals, &peers[src], m);
  return m;
}

static int take(ftmw_msg *m) {
  cr_assert_not_null(m);
  int v;
  memcpy(&v, m->data, sizeof(v));
  ftmw_match_take(m);
  ftmw_msg_free(m);
  return v;
}

TestSuite(match, .init = setup);

Test(match, per_source_order_and_tags, .timeout = 5) {
  push(1, 5, 10);
  push(1, 6, 11);
  push(1, 5, 12);
  cr_assert_eq(take(ftmw_match_peer(&peers[1], 6)), 11);
  cr_assert_eq(take(ftmw_match_peer(&peers[1], FT_ANY_TAG)), 10);
  cr_assert_null(ftmw_match_peer(&peers[1], 6));
  cr_assert_null(ftmw_match_peer(&peers[2], FT_ANY_TAG));
  cr_assert_eq(take(ftmw_match_peer(&peers[1], 5)), 12);
}

Test(match, any_source_follows_arrival_order, .timeout = 5) {
  push(2, 1, 20);
  push(1, 2, 10);
  push(3, 1, 30);
  cr_assert_eq(take(ftmw_match_any(&arrivals, 1)), 20);
  cr_assert_eq(take(ftmw_match_any(&arrivals, FT_ANY_TAG)), 10);
  cr_assert_eq(take(ftmw_match_any(&arrivals, FT_ANY_TAG)), 30);
  cr_assert_null(ftmw_match_any(&arrivals, FT_ANY_TAG));
}

/* The receives posted, by worker: its tag, or NOT_POSTED. */
#define NOT_POSTED (-100)
static int posted_tag[4];

static int posted(void *ctx, const ftmw_peer *w, int *tag) {
  cr_assert_eq(ctx, posted_tag);
  *tag = posted_tag[w->id];
  return posted_tag[w->id] != NOT_POSTED;
}

Test(match, posted_receives_keep_source_order, .timeout = 5) {
  push(1, 7, 10);
  push(1, 8, 11);
  push(2, 8, 20);
  posted_tag[1] = 8; /* skips 10 (tag 7): 11 is 1's oldest with tag 8 */
  posted_tag[2] = 8;
  posted_tag[3] = NOT_POSTED;
  ftmw_msg *m = ftmw_match_posted(&arrivals, peers, 3, posted, posted_tag);
  cr_assert_eq(m->source, 1);
  cr_assert_eq(take(m), 11);
  posted_tag[1] = FT_ANY_TAG;
  cr_assert_eq(take(ftmw_match_posted(&arrivals, peers, 3, posted, posted_tag)),
               10);
  posted_tag[1] = NOT_POSTED;
  cr_assert_eq(take(ftmw_match_posted(&arrivals, peers, 3, posted, posted_tag)),
               20);
  cr_assert_null(ftmw_match_posted(&arrivals, peers, 3, posted, posted_tag));
}

Test(match, drop_frees_one_source_only, .timeout = 5) {
  push(1, 1, 10);
  push(2, 1, 20);
  push(1, 1, 11);
  cr_assert_eq(ftmw_match_drop(&peers[1]), 2);
  cr_assert_eq(take(ftmw_match_any(&arrivals, FT_ANY_TAG)), 20);
  cr_assert(ftmw_q_empty(&arrivals));
}

/* A replica takes the message the primary's decision names, by the
 * sender's sequence number, whatever its place in the queue. */
Test(match, by_sequence_number, .timeout = 5) {
  ftmw_msg *a = push(2, 5, 20), *b = push(2, 5, 21), *c = push(3, 5, 30);
  a->seq = 7;
  b->seq = 8;
  c->seq = 8;
  cr_assert_eq(take(ftmw_match_seq(&peers[2], 8)), 21);
  cr_assert_null(ftmw_match_seq(&peers[2], 9));
  cr_assert_eq(take(ftmw_match_seq(&peers[3], 8)), 30);
  cr_assert_eq(take(ftmw_match_seq(&peers[2], 7)), 20);
  cr_assert_null(ftmw_match_seq(&peers[2], 7));
}

/* Large messages reuse the one kept buffer when it fits without wasting
 * more than half of it; small ones never take it. Reuse is told by the
 * contents: fresh memory from malloc's mmap is zeroed, even at the same
 * address. */
Test(match, large_buffer_reuse) {
  size_t big = 1 << 20;
  ftmw_msg *a = ftmw_msg_new(big);
  cr_assert_not_null(a);
  memset(a->data, 1, big);
  ftmw_msg_free(a);
  ftmw_msg *small = ftmw_msg_new(16);
  cr_assert_neq(small, a, "a small message took the large buffer");
  ftmw_msg *b = ftmw_msg_new(big - 100);
  cr_assert(b == a && b->data[0] == 1 && b->data[big - 101] == 1,
            "a fitting large message did not reuse the buffer");
  cr_assert_geq(b->cap, big - 100);
  ftmw_msg_free(b);
  ftmw_msg *c = ftmw_msg_new(big / 4 + 1024); /* fits, but wastes 3/4 */
  cr_assert_eq(c->cap, big / 4 + 1024);
  ftmw_msg *d = ftmw_msg_new(2 * big); /* the kept one was freed by c */
  cr_assert_eq(d->cap, 2 * big);
  memset(d->data, 2, 2 * big);
  ftmw_msg_free(c);
  ftmw_msg_free(d); /* replaces c as the kept buffer */
  ftmw_msg *e = ftmw_msg_new(2 * big);
  cr_assert(e == d && e->data[0] == 2 && e->data[2 * big - 1] == 2);
  ftmw_msg_free(e);
  ftmw_msg_free(small);
  ftmw_msg_release_cache();
}

/* --- seqset.h: which data numbers came from a sender --------------------- */

#include "seqset.h"

Test(seqset, in_order_and_duplicates) {
  ftmw_seqset s;
  ftmw_seqset_clear(&s);
  for (uint64_t q = 1; q <= 1000; q++)
    cr_assert_eq(ftmw_seqset_add(&s, q), 1, "seq %llu", (unsigned long long)q);
  cr_assert_eq(s.upto, 1000);
  cr_assert_eq(ftmw_seqset_add(&s, 1000), 0);
  cr_assert_eq(ftmw_seqset_add(&s, 3), 0);
}

/* A dead worker's messages from the primary (KEPT) come in the order the
 * program received them: 2 before 1 is no reason to drop 1
 * (tools/ftmw-sim seed 15798). */
Test(seqset, out_of_order_is_not_a_duplicate) {
  ftmw_seqset s;
  ftmw_seqset_clear(&s);
  cr_assert_eq(ftmw_seqset_add(&s, 2), 1);
  cr_assert_eq(s.upto, 0);
  cr_assert_eq(ftmw_seqset_add(&s, 2), 0, "2 again is a duplicate");
  cr_assert_eq(ftmw_seqset_add(&s, 1), 1, "1 is new");
  cr_assert_eq(s.upto, 2);
  cr_assert_eq(ftmw_seqset_add(&s, 1), 0);
  cr_assert_eq(ftmw_seqset_add(&s, 250), 1); /* in the last word */
  cr_assert_eq(ftmw_seqset_add(&s, 100), 1);
  cr_assert_eq(ftmw_seqset_add(&s, 250), 0);
  for (uint64_t q = 3; q < 250; q++)
    if (q != 100)
      cr_assert_eq(ftmw_seqset_add(&s, q), 1, "seq %llu", (unsigned long long)q);
  cr_assert_eq(s.upto, 250);
}

/* A number further ahead than the window counts the oldest missing ones
 * as received: bounded memory, said in seqset.h. */
Test(seqset, far_ahead_moves_the_window) {
  ftmw_seqset s;
  ftmw_seqset_clear(&s);
  cr_assert_eq(ftmw_seqset_add(&s, FTMW_SEQSET_SPAN + 10), 1);
  cr_assert_eq(s.upto, 10, "1..10 count as received");
  cr_assert_eq(ftmw_seqset_add(&s, 5), 0);
  cr_assert_eq(ftmw_seqset_add(&s, 11), 1);
}
