/* Master replicas: the lock-step protocol and failover (see replica.h).
 *
 * Everything a master sends to the other masters goes out in priority
 * order (replica 1 first), and so does what a worker sends to them
 * (ACKED, COPY). So when the primary dies in the middle of a round, the
 * replica that takes over, the first live one, has everything that any
 * other live replica has: it only has to resend the last decision. */
#include "ftmw_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define st ftmw_st

/* An ft_is_primary that answered 1 and is not yet told (see replica.h). */
static int primary_call_pending;

static void flush_primary_call(void) {
  if (primary_call_pending) {
    primary_call_pending = 0;
    ftmw_rep_decide(FTMW_DECIDE_PRIMARY, 0, 1);
  }
}

static int with_replicas(void) {
  return st.M > 0 && st.role == FTMW_ROLE_MASTER;
}

static int is_primary_with_replicas(void) {
  return with_replicas() && st.id == st.primary;
}

static int replica_alive(int k) {
  return k != st.id && ftmw_peer_is_up(&st.masters[k]);
}

/* The transport, as the protocol uses it (see ftmw_rep_link). */
static void transport_send(int k, int type, int tag, unsigned flags,
                           uint64_t seq, const void *data, size_t len) {
  ftmw_op op = {.out = {.seq = seq}};
  ftmw_op_frame(&op, &st.masters[k], type, tag, flags, data, len);
  ftmw_transport_submit(&op, 1);
  ftmw_op_wait_locked(&op);
}

static const ftmw_rep_link transport_link = {
    .send = transport_send,
    .wait_locked = ftmw_transport_wait_locked,
};
static const ftmw_rep_link *link_ = &transport_link;

void ftmw_rep_use_link(const ftmw_rep_link *l) {
  link_ = l != NULL ? l : &transport_link;
}

/* Sends a frame without ACK to master k and waits until it is written. */
static void send_master(int k, int type, int tag, unsigned flags, uint64_t seq,
                        const void *data, size_t len) {
  link_->send(k, type, tag, flags, seq, data, len);
}

/* A replica whose program did not make the call the primary decided: it
 * can no longer follow, and leaves the job as if it had crashed. */
static void diverged(int kind, int want) {
  ftmw_log("master %d: the primary decided another call (kind %d; this call: "
           "kind %d, or another worker): the program is not deterministic; "
           "leaving the job", st.id, kind, want);
  ftmw_trace("diverged", "\"kind\":%d,\"call_kind\":%d", kind, want);
  _exit(70);
}

int ftmw_rep_before(ftmw_peer *p) {
  if (!is_primary_with_replicas() || p->calls == 0)
    return 0;
  int waited = 0;
  for (int k = 0; k <= st.M; k++)
    while (replica_alive(k) && p->done_by[k] < p->calls) {
      ftmw_wait_locked(-1); /* which answers the replicas' SUSPECTs */
      waited = 1;
    }
  return waited;
}

/* An exchange with p ended (ok, or with p's failure reported; m: the data
 * received, kept until the next exchange with p). Returns 1 if m is kept
 * (the caller must not free it). */
static int exchange_ended(ftmw_peer *p, int ok, ftmw_msg *m) {
  if (!with_replicas())
    return 0;
  p->calls++;
  p->outcome_n = p->calls;
  p->outcome_ok = ok;
  ftmw_msg_free(p->kept);
  p->kept = ok ? m : NULL;
  if (ftmw_is_replica() && ftmw_peer_is_up(&st.masters[st.primary]))
    send_master(st.primary, FTMW_FRAME_DONE, p->id, 0, p->calls, NULL, 0);
  /* A primary can now answer SUSPECTs of this exchange; a master that
   * became primary takes over. */
  ftmw_rep_serve();
  return p->kept != NULL;
}

int ftmw_rep_after(ftmw_peer *p, ftmw_msg *m) { return exchange_ended(p, 1, m); }

void ftmw_rep_failed(ftmw_peer *p) { exchange_ended(p, 0, NULL); }

/* Primary: sends the verdict on worker p's exchange n to every live
 * replica, after the data the primary kept if the exchange received some.
 * Returns 0 if it could not (out of memory). */
static int tell_verdict(ftmw_peer *p, uint64_t n, int ok) {
  if (ok && p->kept != NULL) { /* the data the replicas may not have */
    size_t len = 4 + p->kept->len;
    uint8_t *b = malloc(len);
    if (b == NULL)
      return 0;
    ftmw_put32(b, (uint32_t)p->id);
    memcpy(b + 4, p->kept->data, p->kept->len);
    for (int k = 0; k <= st.M; k++)
      if (replica_alive(k))
        send_master(k, FTMW_FRAME_KEPT, p->kept->tag, 0, p->kept->seq, b, len);
    free(b);
  }
  for (int k = 0; k <= st.M; k++)
    if (replica_alive(k)) {
      send_master(k, FTMW_FRAME_VERDICT, p->id, ok ? FTMW_FLAG_OK : 0, n, NULL,
                  0);
      ftmw_trace("verdict_sent", "\"replica\":%d,\"worker\":%d,\"call\":%llu,"
                 "\"ok\":%d", k, p->id, (unsigned long long)n, ok);
    }
  return 1;
}

/* Primary: answers the replicas that suspect worker p's exchange n. The
 * verdict goes to every live replica, once: a replica that has not asked
 * yet then follows it without asking, and whichever replica takes over
 * has it if any other has. Out of memory, it is tried again at the next
 * ftmw_rep_serve. */
static void answer(ftmw_peer *p, uint64_t n) {
  if (p->answered_n != n) {
    if (!tell_verdict(p, n, n == p->outcome_n && p->outcome_ok))
      return;
    p->answered_n = n;
  }
  for (int k = 0; k <= st.M; k++)
    if (p->suspect_by[k] == n)
      p->suspect_by[k] = 0;
}

static void send_decision(int k, const ftmw_decision *d) {
  uint8_t b[FTMW_DECIDE_SIZE] = {0};
  ftmw_put32(b, (uint32_t)d->rank);
  ftmw_put64(b + 8, d->value);
  send_master(k, FTMW_FRAME_DECIDE, d->kind, 0, d->number, b, sizeof(b));
}

/* This master noticed that the primary changed. If it is now the primary,
 * it resends the last decision it received (a replica behind it may have
 * missed only that one); otherwise it reports to the new primary the
 * exchanges it has completed (its DONEs went to the old one). */
static void primary_changed(void) {
  st.seen_primary = st.primary;
  if (st.primary == st.id) {
    ftmw_trace("role_change", "\"role\":\"primary\",\"decisions\":%llu",
               (unsigned long long)st.dec_rcvd);
    ftmw_log("master %d takes over as primary", st.id);
    for (int k = 0; k <= st.M && st.dec_rcvd > 0; k++)
      if (replica_alive(k))
        send_decision(k, &st.dec_last);
    return;
  }
  for (int r = 1; r <= st.W; r++)
    if (st.workers[r].calls > 0 &&
        ftmw_peer_is_up(&st.masters[st.primary]))
      send_master(st.primary, FTMW_FRAME_DONE, r, 0, st.workers[r].calls,
                  NULL, 0);
}

int ftmw_rep_serve(void) {
  static int serving;
  if (!with_replicas() || serving)
    return 0;
  serving = 1;
  int n = 0;
  flush_primary_call();
  if (st.primary != st.seen_primary) {
    primary_changed();
    n++;
  }
  for (int r = 1; r <= st.W && st.id == st.primary; r++) {
    ftmw_peer *p = &st.workers[r];
    for (int k = 0; k <= st.M; k++)
      if (p->suspect_by[k] != 0 && p->suspect_by[k] <= p->outcome_n) {
        answer(p, p->suspect_by[k]);
        n++;
      }
  }
  serving = 0;
  return n;
}

int ftmw_rep_verdict(ftmw_peer *p) {
  uint64_t n = p->calls + 1;
  int asked = -1;
  while (with_replicas()) {
    if (p->verdict_n >= n)
      return p->verdict_ok;
    if (!ftmw_is_replica())
      return 0; /* the primary reports what it saw */
    if (asked != st.primary) { /* first asking, or a new primary */
      asked = st.primary;
      ftmw_trace("suspect_sent", "\"primary\":%d,\"worker\":%d,\"call\":%llu",
                 asked, p->id, (unsigned long long)n);
      send_master(asked, FTMW_FRAME_SUSPECT, p->id, 0, n, NULL, 0);
      continue; /* the verdict may have come while sending */
    }
    ftmw_wait_locked(-1);
  }
  return 0;
}

int ftmw_rep_send(ftmw_peer *p, uint64_t seq) {
  while (p->acked_seq < seq) {
    if (!ftmw_peer_is_up(p))
      return ftmw_peer_is_failed(p) ? FT_ERR_PEER_FAILED
                                    : FT_ERR_PEER_FINALIZED;
    if (!ftmw_is_replica())
      return FTMW_REP_SEND_SELF;
    ftmw_wait_locked(-1);
  }
  return FT_SUCCESS;
}

void ftmw_rep_copy(int acker, int tag, uint64_t seq, const void *buf,
                   size_t len) {
  if (st.M == 0 || st.role != FTMW_ROLE_WORKER)
    return;
  /* One master after the other, so that a death between two copies
   * (fault point send.copy, hit before each) reaches exactly the first. */
  for (int k = 0; k <= st.M; k++) {
    if (k == acker || !ftmw_peer_is_up(&st.masters[k]))
      continue;
    ftmw_fault_hit(FTMW_FAULT_SEND_COPY);
    send_master(k, FTMW_FRAME_COPY, tag, 0, seq, buf, len);
  }
}

int ftmw_rep_primary_call(void) {
  int r;
  uint64_t v;
  flush_primary_call(); /* two in a row: the first is told now */
  if (ftmw_rep_follow(FTMW_DECIDE_PRIMARY, -1, &r, &v))
    return 0;
  /* One pass of the loop first: a primary that was stopped or starved
   * past FT_TIMEOUT_MS, and replaced meanwhile, finds its FENCE there and
   * exits instead of writing the output a new primary writes. */
  ftmw_wait_locked(0);
  primary_call_pending = 1;
  return 1;
}

void ftmw_rep_decide(int kind, int rank, uint64_t value) {
  if (!is_primary_with_replicas())
    return;
  /* A master that has just taken over resends the old primary's last
   * decision first: a replica that missed it would take a new one for
   * out of order. */
  if (st.primary != st.seen_primary)
    primary_changed();
  flush_primary_call(); /* decisions go out in the order they were made */
  ftmw_decision d = {.kind = kind, .rank = rank, .value = value,
                     .number = ++st.dec_taken};
  for (int k = 0; k <= st.M; k++)
    if (replica_alive(k))
      send_decision(k, &d);
}

int ftmw_rep_follow(int kind, int want_rank, int *rank, uint64_t *value) {
  if (!with_replicas())
    return 0;
  while (ftmw_q_empty(&st.decisions)) {
    if (!ftmw_is_replica())
      return 0;
    ftmw_wait_locked(-1);
  }
  ftmw_decision *d =
      FTMW_CONTAINER_OF(ftmw_q_head(&st.decisions), ftmw_decision, node);
  if (d->kind != kind || (want_rank >= 0 && d->rank != want_rank))
    diverged(d->kind, kind);
  ftmw_q_remove(&d->node);
  *rank = d->rank;
  *value = d->value;
  st.dec_taken = d->number;
  free(d);
  return 1;
}

void ftmw_rep_unfollow(int kind, int rank, uint64_t value) {
  ftmw_decision *d = malloc(sizeof(*d));
  if (d == NULL)
    diverged(kind, 0); /* cannot keep it: cannot follow any more */
  d->kind = kind;
  d->rank = rank;
  d->value = value;
  d->number = st.dec_taken--;
  /* insert at the head */
  d->node.next = st.decisions.next;
  d->node.prev = &st.decisions;
  st.decisions.next->prev = &d->node;
  st.decisions.next = &d->node;
}

uint64_t ftmw_rep_restore_value(int code, const ftmw_peer *p) {
  uint64_t v = (uint16_t)code;
  if (code == FT_SUCCESS)
    v |= (uint64_t)(uint16_t)p->from_spare << 16 | (uint64_t)p->epoch << 32;
  return v;
}

int ftmw_rep_follow_restore(ftmw_peer *p, uint64_t v) {
  int code = (int)(v & 0xffff), s = (int)(v >> 16 & 0xffff) - 1;
  uint32_t e = (uint32_t)(v >> 32);
  if (code == FT_ERR_NOT_FAILED)
    return code;
  p->unreported = 0;
  p->post.active = 0;
  p->log.posted = NULL; /* ms_restore posts it again if it replays it */
  if (code != FT_SUCCESS)
    return code;
  /* A spare's ACTIVATED, or a spawned worker's HELLO, is on its way: it
   * left before the primary heard from it. A spare that dies first is
   * seen; a spawned worker is given the launch deadline. */
  const ftmw_peer *sp = s >= 0 && s < st.S ? &st.spares[s] : NULL;
  uint64_t deadline = ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS;
  while (p->epoch < e) {
    uint64_t now = ftmw_now_ms();
    if (sp != NULL ? !ftmw_peer_is_up(sp) : now >= deadline)
      break;
    ftmw_wait_locked(sp != NULL ? -1 : (int64_t)(deadline - now));
  }
  if (p->epoch < e) { /* it died before it reached this master */
    ftmw_match_drop(p);
    p->epoch = e;
    /* the incarnation the primary made (an older one still live here was
     * replaced there: it is failed with it) */
    if (!ftmw_peer_is_live(p))
      ftmw_peer_set_locked(p, FTMW_PEER_JOINING, "restored by the primary");
    ftmw_peer_failed_locked(p, 1, "died before it reached this master");
  }
  p->app_epoch = e;
  ftmw_trace("restore_followed", "\"peer\":%d,\"peer_epoch\":%u", p->id, e);
  return FT_SUCCESS;
}

int ftmw_wait_locked(int64_t ms) {
  /* A primary answers its replicas while it waits; answering waits for
   * writes, and a wake-up meant for the caller may have come meanwhile. */
  if (ftmw_rep_serve() > 0)
    return 0;
  return link_->wait_locked(ms);
}
