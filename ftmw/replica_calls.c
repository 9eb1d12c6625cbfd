/* Master replicas: the calls that only masters with replicas make (see
 * replica.h): ft_send's wait for the worker's ACKED and the DATA numbers
 * it counts, and ft_restore's follow, over replica.c's exchange sequence
 * (which also has ft_is_primary's decision, and a worker's COPY and
 * CONFIRM). */
#include "ftmw_impl.h"
#include "match.h"
#include "replica.h"
#include "replica_state.h"

int ftmw_rep_send(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  while (ftmw_rep_of(cx, p->id)->acked_seq < seq) {
    if (!ftmw_peer_is_up(p))
      return ftmw_peer_is_failed(p) ? FT_ERR_PEER_FAILED
                                    : FT_ERR_PEER_FINALIZED;
    if (!ftmw_is_replica(cx))
      return FTMW_REP_SEND_SELF;
    ftmw_wait_locked(cx, -1);
  }
  return FT_SUCCESS;
}

void ftmw_rep_number(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  if (cx->job.M > 0 && seq > ftmw_rep_of(cx, p->id)->numbered)
    ftmw_rep_of(cx, p->id)->numbered = seq;
}

int ftmw_rep_acked(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  return cx->job.M > 0 && ftmw_rep_of(cx, p->id)->acked_seq >= seq;
}

uint64_t ftmw_rep_restore_value(int code, const ftmw_peer *p) {
  uint64_t v = (uint16_t)code;
  if (code == FT_SUCCESS)
    v |= (uint64_t)(uint16_t)p->from_spare << 16 | (uint64_t)p->epoch << 32;
  return v;
}

int ftmw_rep_follow_restore(ftmw_ctx *cx, ftmw_peer *p, uint64_t v,
                            uint32_t *epoch) {
  int code = (int)(v & 0xffff), s = (int)(v >> 16 & 0xffff) - 1;
  uint32_t e = *epoch = (uint32_t)(v >> 32);
  if (code == FT_ERR_NOT_FAILED)
    return code;
  /* The failure this restore answers is reported. One of the new
   * incarnation, adopted here before this decision came and failed since,
   * is not (ftmw_report_failure_locked). */
  if (code != FT_SUCCESS || p->epoch < e || !ftmw_peer_is_failed(p))
    p->unreported = 0;
  if (code != FT_SUCCESS) {
    /* The primary's ft_restore dropped what the failed incarnation had
     * left queued before it tried, and so does every replica: kept here,
     * it was delivered once this master took over, a result the primary
     * had dropped (chaos seed 20261128, run 40). The primary's DOWN came
     * before this decision, so nothing more arrives from it. */
    ftmw_match_drop(p);
    return code;
  }
  /* A spare's ACTIVATED, or a spawned worker's HELLO, is on its way: it
   * left before the primary heard from it. A spare that dies first is
   * seen; a spawned worker is given the launch deadline. */
  const ftmw_peer *sp = s >= 0 && s < cx->job.S ? &cx->st.spares[s] : NULL;
  uint64_t deadline = ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS;
  while (p->epoch < e) {
    uint64_t now = ftmw_now_ms();
    if (sp != NULL ? !ftmw_peer_is_up(sp) : now >= deadline)
      break;
    ftmw_wait_locked(cx, sp != NULL ? -1 : (int64_t)(deadline - now));
  }
  if (p->epoch < e) { /* it died before it reached this master */
    ftmw_match_drop(p);
    /* the incarnation the primary made (an older one still live here was
     * replaced there: it is failed with it) */
    ftmw_peer_begin_locked(cx, p, e, FTMW_PEER_JOINING,
                           "restored by the primary");
    ftmw_peer_failed_locked(cx, p, 1, "died before it reached this master");
  }
  ftmw_trace("restore_followed", "\"peer\":%d,\"peer_epoch\":%u", p->id, e);
  return FT_SUCCESS;
}
