/* Master replicas: the outcomes of exchanges that another replica may
 * still ask about (replica_state.h), kept by every master in a ring per
 * worker. */
#include "ftmw_impl.h"
#include "leave.h"
#include "peer.h"
#include "replica_state.h"

#include <stdlib.h>

const ftmw_rep_outcome *ftmw_rep_outcome_of(const ftmw_rep_worker *w,
                                            uint64_t n) {
  if (n > w->calls || n + w->kept <= w->calls)
    return NULL;
  uint32_t i = (uint32_t)(n - (w->calls - w->kept + 1));
  return &w->ring[(w->first + i) % w->cap];
}

int ftmw_rep_verdict_of(const ftmw_rep_worker *w, uint64_t n) {
  for (size_t i = 0; i < sizeof(w->verdicts) / sizeof(w->verdicts[0]); i++)
    if (w->verdicts[i].n == n)
      return w->verdicts[i].ok;
  return -1;
}

/* The last of exchanges 1..n with w's worker that every replica that may
 * ask about one has reported DONE: the live masters but this one and the
 * primary (which decides, and never asks). A replica behind this master
 * asks the primary, and asks this master once it is the primary. */
static uint64_t done_by_askers(ftmw_ctx *cx, const ftmw_rep_worker *w,
                               uint64_t n) {
  for (int k = 0; k <= cx->job.M; k++)
    if (k != cx->st.primary && ftmw_rep_alive(cx, k) && w->done_by[k] < n)
      n = w->done_by[k];
  /* A master that took over (any primary but master 0) may be behind
   * this one, and ask it: it reports DONE as a replica does. */
  if (cx->st.primary != 0 && cx->st.primary != cx->job.id &&
      ftmw_rep_alive(cx, cx->st.primary) && w->done_by[cx->st.primary] < n)
    n = w->done_by[cx->st.primary];
  return n;
}

int ftmw_rep_keep_outcome(ftmw_ctx *cx, ftmw_rep_worker *w, int ok,
                          ftmw_msg *m) {
  uint64_t n = w->calls, lo = done_by_askers(cx, w, n);
  while (w->kept > 0 && n - w->kept <= lo) { /* the oldest is n - kept */
    ftmw_msg_free(w->ring[w->first].msg);
    w->first = (w->first + 1) % w->cap;
    w->kept--;
  }
  if (n <= lo)
    return 0; /* nobody can ask about it */
  if (w->kept == w->cap) {
    uint32_t cap = w->cap ? 2 * w->cap : 4;
    ftmw_rep_outcome *ring = malloc(cap * sizeof(*ring));
    if (ring == NULL) { /* it could not answer a replica that asks */
      ftmw_leave(FTMW_LEAVE_NO_MEMORY, 0,
                 "out of memory keeping exchange %llu with worker %d for "
                 "the replicas; leaving the job",
                 (unsigned long long)n, (int)(w - cx->rep->workers));
    }
    for (uint32_t i = 0; i < w->kept; i++)
      ring[i] = w->ring[(w->first + i) % w->cap];
    free(w->ring);
    w->ring = ring;
    w->cap = cap;
    w->first = 0;
  }
  w->ring[(w->first + w->kept++) % w->cap] =
      (ftmw_rep_outcome){ok, ok ? m : NULL};
  return ok && m != NULL;
}
