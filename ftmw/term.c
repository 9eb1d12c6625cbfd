/* SIGTERM, in every process of the job (term.h). */
#include "term.h"

#include "abort.h"
#include "ftmw_impl.h"
#include "leave.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static struct {
  /* SIGTERM's handler is this file's own (sigaction), not a libuv signal
   * handle, whose closing gives the signal back its default action before
   * ft_finalize can ignore it: a late copy of the SIGTERM (the shim
   * passes it on, the launcher sends it too) that came in between killed
   * a master on its way out, before it recorded its status (ftmwrun then
   * said 130). The handler passes the signal to the loop through async. */
  uv_async_t async;
  int started;   /* the handler is installed (until ftmw_term_end) */
  int closed;    /* async is closed (ftmw_term_close) */
  int open;      /* atomic: the handler may send to async */
  int ended;     /* atomic: ft_finalize is over: the default action */
  int inflight;  /* atomic: handlers sending to it now */
  int requested; /* atomic: read by the application thread */
  uint64_t grace_ms, leave_at;
} term;

int ftmw_term_requested(void) {
  return __atomic_load_n(&term.requested, __ATOMIC_ACQUIRE);
}

/* Leaves now, for why: what the program printed goes out first. */
static void leave(const char *why) {
  ftmw_trace("term_exit", NULL);
  ftmw_leave(FTMW_LEAVE_TERMINATED, 0, "%s", why);
}

/* Any thread, async-signal-safe (uv_async_send is). */
static void on_sigterm(int signum) {
  (void)signum;
  int saved = errno;
  if (__atomic_load_n(&term.ended, __ATOMIC_SEQ_CST)) {
    /* After ft_finalize: what the default action does (SIGTERM is
     * blocked in here, so the raised one comes once this returns). */
    struct sigaction sa = {.sa_handler = SIG_DFL};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    raise(SIGTERM);
    errno = saved;
    return;
  }
  /* Sequentially consistent, with ftmw_term_close's two: either it sees
   * this handler in flight, or this handler sees it closed. */
  __atomic_add_fetch(&term.inflight, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&term.open, __ATOMIC_SEQ_CST))
    uv_async_send(&term.async);
  __atomic_sub_fetch(&term.inflight, 1, __ATOMIC_RELEASE);
  errno = saved;
}

static void on_signal(uv_async_t *h) {
  ftmw_ctx *cx = h->data;
  if (ftmw_term_requested())
    return; /* a second one (the shim passes it on, Slurm sends it too) */
  term.leave_at = ftmw_now_ms() + term.grace_ms;
  ftmw_trace("sigterm", "\"grace_ms\":%llu", (unsigned long long)term.grace_ms);
  uv_mutex_lock(&cx->st.lock);
  __atomic_store_n(&term.requested, 1, __ATOMIC_RELEASE);
  ftmw_loop_wake_locked(&cx->loop); /* a master's waiting receive reports it */
  uv_mutex_unlock(&cx->st.lock);
}

int ftmw_term_start(ftmw_ctx *cx, uv_loop_t *loop, int grace_ms) {
  if (grace_ms <= 0)
    return 0;
  term.grace_ms = (uint64_t)grace_ms;
  term.closed = 0;
  __atomic_store_n(&term.ended, 0, __ATOMIC_SEQ_CST);
  int rc = uv_async_init(loop, &term.async, on_signal);
  if (rc == 0) {
    term.async.data = cx; /* before SIGTERM can wake it */
    __atomic_store_n(&term.open, 1, __ATOMIC_RELEASE);
    struct sigaction sa = {.sa_handler = on_sigterm, .sa_flags = SA_RESTART};
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0) {
      rc = uv_translate_sys_error(errno);
      __atomic_store_n(&term.open, 0, __ATOMIC_RELEASE);
      uv_close((uv_handle_t *)&term.async, NULL);
    }
  }
  if (rc != 0) {
    ftmw_log("cannot take SIGTERM (%s): it ends this process at once",
             uv_strerror(rc));
    return rc;
  }
  term.started = 1;
  return 0;
}

void ftmw_term_close(void) {
  if (!term.started || term.closed)
    return;
  /* The handler stays: a SIGTERM that comes from now on, while the
   * process ends MPI, does nothing (ftmw_term_end). */
  __atomic_store_n(&term.open, 0, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&term.inflight, __ATOMIC_SEQ_CST) > 0)
    sched_yield(); /* a handler that began before: done with async */
  uv_close((uv_handle_t *)&term.async, NULL);
  term.closed = 1;
}

void ftmw_term_end(void) {
  if (!term.started)
    return;
  /* In a process that had SIGTERM, a late copy (ftmw-shim passes it on,
   * Slurm and the launcher send it too) is ignored from now on, set in
   * one step. In any other, the handler gives the next one the default
   * action. Until now a SIGTERM did not kill it (seen: a replica's first
   * SIGTERM came after its loop's last pass, when closing gave the signal
   * its default action back, and killed it before it ended MPI; hydra
   * then counts a death). */
  if (ftmw_term_requested()) {
    struct sigaction sa = {.sa_handler = SIG_IGN};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
  } else {
    __atomic_store_n(&term.ended, 1, __ATOMIC_SEQ_CST);
  }
  term.started = 0;
}

/* A worker whose job is being stopped (its primary's FIN said so, or it
 * had SIGTERM itself), while its program computes (in no call that
 * waits: a call sees the FIN itself, and its program ends as at any end):
 * tells every master it leaves, then leaves once the primary's BYE has
 * come. Looked at when the FIN or the BYE comes, and at each tick (a call
 * that was waiting may have returned a task to compute). */
static void worker_step(ftmw_ctx *cx) {
  if (cx->job.role != FTMW_ROLE_WORKER || !cx->worker_end.primary_fin ||
      !(cx->worker_end.stopping || ftmw_term_requested()))
    return;
  uv_mutex_lock(&cx->st.lock);
  int computing =
      !cx->st.finalizing && !ftmw_loop_calls_waiting_locked(&cx->loop);
  int bye = cx->st.masters[cx->st.primary].bye;
  uv_mutex_unlock(&cx->st.lock);
  if (!computing)
    return;
  if (cx->worker_end.fin_sent && bye)
    leave("the job is being stopped (SIGTERM) and the primary master has "
          "finished");
  if (cx->worker_end.fin_sent)
    return;
  cx->worker_end.fin_sent = 1;
  for (int k = 0; k <= cx->job.M; k++)
    if (cx->st.masters[k].conn != NULL)
      ftmw_link_send(cx->st.masters[k].conn, FTMW_FRAME_FIN, 0, 0,
                     FTMW_FLAG_LEAVING, NULL, 0);
}

void ftmw_term_poll(ftmw_ctx *cx, uint64_t now) {
  worker_step(cx);
  if (ftmw_term_requested() && now >= term.leave_at) {
    char why[96];
    snprintf(why, sizeof(why),
             "still running %llu ms after SIGTERM "
             "(FT_TERM_GRACE_MS)",
             (unsigned long long)term.grace_ms);
    leave(why);
  }
}

void ftmw_term_on_primary_end(ftmw_ctx *cx, int bye, int stopping) {
  if (!bye) {
    cx->worker_end.primary_fin = 1;
    cx->worker_end.stopping |= stopping;
  }
  worker_step(cx);
}
