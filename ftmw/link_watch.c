/* The link's watch (link.h): the tick that sends heartbeats and finds
 * silent peers, drops connections that never said HELLO, and notices when
 * this process itself did not run (a stall: nobody was listening, so that
 * time is nobody's silence). A silent peer on this host is asked about
 * through its kernel first (localproc.h). ftmw_link_init is here, since
 * it starts the tick: the connections, reads and writes below (link.c)
 * know nothing of the watch. Loop thread only, but ftmw_link_init and
 * ftmw_link_stalled_ms. */
#include "link.h"

#include "localproc.h"
#include "loop.h"
#include "trace.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

/* Whether bytes wait unread on c: its peer has spoken, whatever the
 * clock says (the timers run before the reads in a pass of the loop). */
static int unread(ftmw_conn *c) {
  int fd = ftmw_link_fd(c), n = 0;
  return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* This process did not run its loop for a while: the loop's owner was
 * not scheduled (an overloaded machine), or the process was stopped.
 * Nobody here was listening meanwhile, so that time does not count as
 * any peer's silence: every deadline moves on by the gap. Peers may have
 * declared this process failed meanwhile; those that did have closed
 * their connections (masters after a FENCE), which the reads that follow
 * find. */
static void stalled(ftmw_link *l, uint64_t gap, uint64_t now, int known,
                    uint64_t cpu_ms, uint64_t runq_ms) {
  for (ftmw_qnode *n = ftmw_q_head(&l->conns); n != &l->conns; n = n->next) {
    ftmw_conn *c = FTMW_CONTAINER_OF(n, ftmw_conn, node);
    c->last_rx_ms = ftmw_link_later(c->last_rx_ms, gap, now);
    c->opened_ms = ftmw_link_later(c->opened_ms, gap, now);
    ftmw_link_heard(c);
  }
  if (l->ops->on_stalled)
    l->ops->on_stalled(l->ctx, gap, now,
                       gap + 2 * l->cfg.heartbeat_ms >= l->cfg.timeout_ms);
  __atomic_add_fetch(&l->stalled_ms, gap, __ATOMIC_RELAXED);
  if (known)
    ftmw_trace("stalled", "\"ms\":%llu,\"cpu_ms\":%llu,\"runq_ms\":%llu",
               (unsigned long long)gap, (unsigned long long)cpu_ms,
               (unsigned long long)runq_ms);
  else
    ftmw_trace("stalled", "\"ms\":%llu", (unsigned long long)gap);
}

uint64_t ftmw_link_stalled_ms(const ftmw_link *l) {
  return __atomic_load_n(&l->stalled_ms, __ATOMIC_RELAXED);
}

/* Milliseconds from t to now; 0 for a t after now (a read during this
 * tick, a drain in on_stalled, stamps a later time than the tick's now). */
static uint64_t since(uint64_t t, uint64_t now) { return now > t ? now - t : 0; }

uint64_t ftmw_link_silent_ms(ftmw_conn *c) {
  return unread(c) ? 0 : since(c->last_rx_ms, ftmw_now_ms());
}

/* A peer silent past the timeout is asked about, if it runs on this host:
 * its kernel knows whether it is gone, stopped, asleep, running, or
 * runnable but waiting for a CPU (an overloaded machine), and only the
 * last is a live process that could not speak. A peer on a CPU yet
 * silent has a hung loop, and one asleep is hung if it is still asleep,
 * and silent, ASLEEP_MIN_MS later (a tick later at least): one found asleep
 * just after a long starvation has run its loop and gone back to sleep,
 * its heartbeat on the way (seen in a job's trace: declared failed 25 ms
 * after it resumed). Nobody is spared past FTMW_LINK_SPARED_MAX timeouts
 * of silence. */
#define ASLEEP_MIN_MS 250
/* A connection without a HELLO is a process not yet known: a join, which
 * comes when a machine is busiest (spawns), or a stranger. It is dropped
 * after this many timeouts (a joiner that dies closes it at once). */
#define HELLO_WAIT_TIMEOUTS 10

/* Whether the silent peer on c is spared for now; *verdict says what this
 * host's kernel said of it (FTMW_PROC_UNKNOWN for a peer elsewhere). */
static int spared(ftmw_conn *c, uint64_t silent, uint64_t to, uint64_t now,
                  int *verdict) {
  ftmw_link *l = c->link;
  *verdict = FTMW_PROC_UNKNOWN;
  if (c->at == NULL || !ftmw_proc_is_local(c->at, &l->self.at))
    return 0;
  *verdict = ftmw_proc_look("/proc", (int)c->at->pid, c->at->start, now, &c->look);
  /* Asleep since the first such look, unless found waiting for a CPU
   * since: a look that catches a thread runnable for a moment (BUSY) does
   * not start the count again. */
  if (*verdict == FTMW_PROC_STARVED)
    c->asleep_ms = 0;
  if (silent > FTMW_LINK_SPARED_MAX * to)
    return 0;
  switch (*verdict) {
  case FTMW_PROC_ASLEEP:
    if (c->asleep_ms == 0)
      c->asleep_ms = now;
    return since(c->asleep_ms, now) < ASLEEP_MIN_MS;
  case FTMW_PROC_BUSY: /* runnable: the next look tells */
    return 1;
  case FTMW_PROC_STARVED:
    if (!c->starved) {
      c->starved = 1;
      char name[48] = "?";
      if (l->ops->name)
        l->ops->name(l->ctx, c->peer, name, sizeof(name));
      ftmw_trace("peer_starved", "\"peer\":\"%s\",\"pid\":%d,\"ms\":%llu",
                 name, (int)c->at->pid, (unsigned long long)silent);
    }
    return 1;
  default: /* gone, stopped, running yet silent, or not to be read */
    return 0;
  }
}

/* The loop's thread: the tick repeats every heartbeat while the loop
 * runs, so a later one means that it did not run (two ticks' leeway for
 * a busy pass); what the thread did meanwhile comes from the scheduler
 * statistics it read at the previous tick. */
static void check_stall(ftmw_link *l, uint64_t now) {
  uint64_t hb = l->cfg.heartbeat_ms, cpu = 0, runq = 0;
  uv_thread_t self = uv_thread_self();
  int known = ftmw_proc_thread_sched(&cpu, &runq);
  if (now - l->last_tick > 2 * hb) {
    int same = known && l->sched_seen.at == l->last_tick &&
               uv_thread_equal(&l->sched_seen.by, &self);
    stalled(l, now - l->last_tick - hb, now, same,
            same ? (cpu - l->sched_seen.cpu) / 1000000 : 0,
            same ? (runq - l->sched_seen.runq) / 1000000 : 0);
  }
  l->last_tick = now;
  ftmw_loop_ran(l->lp, now);
  l->sched_seen.cpu = cpu;
  l->sched_seen.runq = runq;
  l->sched_seen.at = known ? now : 0;
  l->sched_seen.by = self;
}

/* Heartbeats, silence timeouts, handshake deadlines. */
static void tick_cb(uv_timer_t *t) {
  ftmw_link *l = t->data;
  uint64_t hb = l->cfg.heartbeat_ms, to = l->cfg.timeout_ms;
  if (l->ops->on_tick_start)
    l->ops->on_tick_start(l->ctx);
  uint64_t now = ftmw_now_ms();
  check_stall(l, now);
  ftmw_qnode *n = ftmw_q_head(&l->conns);
  while (n != &l->conns) {
    ftmw_conn *c = FTMW_CONTAINER_OF(n, ftmw_conn, node);
    n = n->next; /* c may be closed (and unlinked) below */
    if (c->peer == NULL) { /* no HELLO yet: a process not known, given long */
      if (since(c->opened_ms, now) > HELLO_WAIT_TIMEOUTS * to) {
        ftmw_log("dropped connection from %s: no HELLO within %llu ms",
                 c->addr, (unsigned long long)(HELLO_WAIT_TIMEOUTS * to));
        ftmw_link_close(c);
      }
      continue;
    }
    uint64_t silent = since(c->last_rx_ms, now);
    int verdict;
    if (silent > to && unread(c)) {
      c->last_rx_ms = now;
      ftmw_link_heard(c);
      silent = 0;
    } else if (silent > to && !spared(c, silent, to, now, &verdict)) {
      char why[80];
      snprintf(why, sizeof(why), "silent for %llu ms%s%s",
               (unsigned long long)silent,
               verdict == FTMW_PROC_UNKNOWN ? "" : ", process ",
               verdict == FTMW_PROC_UNKNOWN ? "" : ftmw_proc_verdict_name(verdict));
      ftmw_link_down(c, FTMW_DOWN_SILENT, why);
      continue;
    }
    if (silent > to / 2 && !c->quiet && !unread(c)) {
      c->quiet = 1;
      if (l->ops->on_quiet)
        l->ops->on_quiet(l->ctx, c, c->peer, 1, silent);
    }
    if (since(c->last_tx_ms, now) >= hb / 2 && !c->connecting)
      ftmw_link_send(c, FTMW_FRAME_HEARTBEAT, 0, 0, 0, NULL, 0);
    else
      ftmw_link_send_ack(c); /* an ACK left for later (FTMW_ACK_LATER) */
  }
  if (l->ops->on_tick)
    l->ops->on_tick(l->ctx, now);
}

void ftmw_link_init(ftmw_link *l, ftmw_loop *lp, const ftmw_link_cfg *cfg,
                    const ftmw_link_ops *ops, void *ctx) {
  memset(l, 0, sizeof(*l));
  l->lp = lp;
  l->cfg = *cfg;
  l->ops = ops;
  l->ctx = ctx;
  ftmw_q_init(&l->conns);
  uv_timer_init(ftmw_loop_uv(lp), &l->tick);
  l->tick.data = l;
  uv_timer_init(ftmw_loop_uv(lp), &l->ack_timer);
  l->ack_timer.data = l;
  /* A loop that does not run before the first tick has stalled too. */
  l->last_tick = ftmw_now_ms();
  uv_timer_start(&l->tick, tick_cb, cfg->heartbeat_ms, cfg->heartbeat_ms);
}
