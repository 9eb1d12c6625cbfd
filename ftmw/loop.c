/* Who runs the loop (see loop.h).
 *
 * The loop has one owner at a time, the holder of lp->owner. A call that
 * waits (ftmw_loop_wait_locked) runs the loop itself: it writes its own
 * frames and reads the answers on its own thread. The I/O thread runs
 * the loop only while the application has not called for a while: it
 * sleeps in poll() on the loop's backend fd, without owning the loop,
 * and takes the loop for one non-blocking pass when something is ready.
 * While a call is inside, and for lp->linger_ns after the last one left,
 * it sleeps on a condition variable instead, and no socket wakes it: an
 * application that calls again within that time (a master answering its
 * workers, a worker whose tasks are shorter) reads everything itself,
 * and its I/O thread wakes about once a linger, not once a message. It
 * makes a pass before the linger ends only when something cannot wait:
 * writes a socket did not take, a new connection, a timer of the loop
 * falling due (lp->due), a batch of lazy frames (see
 * ftmw_loop_flush_soon_locked). Every callback on the loop runs on one
 * thread at a time, the caller's or the I/O thread's. */
#include "loop.h"
#include "localproc.h" /* FTMW_IO_THREAD_NAME */

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

/* How long a lazy frame may wait for the ones after it (see
 * ftmw_loop_flush_soon_locked). */
#define BATCH_NS (FTMW_LOOP_BATCH_US * 1000u)

enum { IO_RUNNING, IO_WAITING }; /* ftmw_loop.io_state */

uv_loop_t *ftmw_loop_uv(ftmw_loop *lp) { return &lp->loop; }

/* The loop whose waiting call this thread runs now (ftmw_loop_wait_locked's
 * uv_run), if any. */
static __thread ftmw_loop *waiting_in;

/* Ends the pass of the wait this thread runs on lp, if this is one of its
 * callbacks. uv_run(UV_RUN_ONCE) runs the timers due, then polls until an
 * event or the next timer: what a timer did (the wait's bound, a peer
 * found silent) would otherwise wait there, for a heartbeat up to 250 ms
 * away (ft_is_primary's 0 ms pass did: with a replica, 83 empty farm
 * tasks a second, where 98,000 without). */
static void end_pass(ftmw_loop *lp) {
  if (waiting_in == lp)
    uv_stop(&lp->loop);
}

void ftmw_loop_wake_locked(ftmw_loop *lp) {
  __atomic_add_fetch(&lp->wakes, 1, __ATOMIC_RELEASE);
  end_pass(lp);
}

void ftmw_loop_wake_owner(ftmw_loop *lp) {
  __atomic_add_fetch(&lp->wakes, 1, __ATOMIC_RELEASE);
  lp->owner_woke = 1;
  end_pass(lp);
}

/* The owner, about to give the loop back (lock held), counts once more
 * what it counted without the lock: a caller that looked at the state
 * under the lock, missed what the owner had just set, and then took
 * the count with that change in it, sees it change again once it owns
 * the loop (the owner counts first and lets go of the loop after). */
static void owner_woke_locked(ftmw_loop *lp) {
  if (lp->owner_woke) {
    lp->owner_woke = 0;
    ftmw_loop_wake_locked(lp);
  }
}

int ftmw_loop_calls_waiting_locked(ftmw_loop *lp) { return lp->inside; }

void ftmw_loop_watchers_changed(ftmw_loop *lp, int new_fd) {
  lp->kick = 1;
  lp->new_fd |= new_fd;
}

void ftmw_loop_timer_started(ftmw_loop *lp) { lp->timer = 1; }

void ftmw_loop_ran(ftmw_loop *lp, uint64_t now) { lp->last_ran = now; }

/* The bound of a wait passed. */
static void wait_timer_cb(uv_timer_t *t) {
  ftmw_loop *lp = FTMW_CONTAINER_OF(t, ftmw_loop, wait_timer);
  lp->wait_expired = 1;
  end_pass(lp);
}

/* Takes the work queued for the loop and carries it out (the loop's
 * owner, lock not held). */
static void run_submitted(ftmw_loop *lp) {
  ftmw_qnode work;
  uv_mutex_lock(lp->lock);
  lp->work.take_locked(lp->work.ctx, &work);
  uv_mutex_unlock(lp->lock);
  lp->work.run(lp->work.ctx, &work);
}

static void async_cb(uv_async_t *a) {
  ftmw_loop *lp = FTMW_CONTAINER_OF(a, ftmw_loop, async);
  run_submitted(lp);
}

/* A write to a dead peer must fail with EPIPE on an application thread
 * too, without a SIGPIPE reaching the application. FTMW's own writes say
 * MSG_NOSIGNAL; libuv's, of what a socket did not take at once
 * (lp->writes), cannot, so SIGPIPE is blocked on a calling thread while it
 * owns the loop with such writes queued, and one that they raised is taken
 * back before it is unblocked. The I/O thread has every signal blocked. */
static __thread struct {
  int on;
  sigset_t old;
} pipe_guard;

static void guard_sigpipe(void) {
  if (pipe_guard.on)
    return;
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &pipe_guard.old);
  pipe_guard.on = 1;
}

static void unguard_sigpipe(void) {
  if (!pipe_guard.on || sigismember(&pipe_guard.old, SIGPIPE))
    return; /* not guarded, or blocked already before (the I/O thread) */
  sigset_t pending, pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
    struct timespec now = {0, 0};
    sigtimedwait(&pipe_only, NULL, &now);
  }
  pthread_sigmask(SIG_SETMASK, &pipe_guard.old, NULL);
  pipe_guard.on = 0;
}

int ftmw_loop_write(ftmw_loop *lp, uv_write_t *req, uv_stream_t *s,
                    const uv_buf_t *bufs, unsigned n, uv_write_cb cb) {
  ftmw_loop_watchers_changed(lp, 0);
  guard_sigpipe();
  int rc = uv_write(req, s, bufs, n, cb);
  if (rc == 0)
    lp->writes++;
  return rc;
}

void ftmw_loop_write_done(ftmw_loop *lp) { lp->writes--; }

/* Takes the loop in a calling thread. */
static void loop_enter(ftmw_loop *lp) {
  uv_mutex_lock(&lp->owner);
  if (lp->writes > 0)
    guard_sigpipe();
}

/* What the I/O thread must be told when a call leaves the loop. */
enum { LEAVE_KICK = 1, LEAVE_TIMER = 2 };

/* Leaves the loop; *timer_ms: how long until its next timer falls due
 * (-1: none). */
static int loop_leave(ftmw_loop *lp, int *timer_ms) {
  /* What the I/O thread must not leave for later: reading a connection
   * just opened, and writing what the sockets did not take yet; and a
   * timer it does not know of. */
  int kick = (lp->new_fd || lp->writes > 0 ? LEAVE_KICK : 0) |
             (lp->timer ? LEAVE_TIMER : 0);
  lp->kick = lp->new_fd = lp->timer = 0;
  *timer_ms = uv_backend_timeout(&lp->loop);
  unguard_sigpipe();
  uv_mutex_unlock(&lp->owner);
  return kick;
}

/* The waiting I/O thread must make a pass by at (lock held). */
static void io_due_locked(ftmw_loop *lp, uint64_t at) {
  if (lp->due == 0 || at < lp->due)
    lp->due = at;
  if (lp->io_state == IO_WAITING && lp->due < lp->io_until)
    uv_cond_signal(&lp->io_wake);
}

/* The last waiting call is out of the loop (lock held), its next timer
 * due in timer_ms (-1: none). A waiting I/O thread is woken only when
 * the call left work for the loop's next pass (LEAVE_KICK, see
 * loop_leave) or a timer falls due before the thread would wake; one
 * polling is hurried for that work, or for a timer it does not know of
 * (LEAVE_TIMER). */
static void io_resume_locked(ftmw_loop *lp, int kick, int timer_ms) {
  if (kick & LEAVE_KICK)
    lp->pass_now = 1;
  if (lp->io_state == IO_WAITING) {
    if (kick & LEAVE_KICK)
      uv_cond_signal(&lp->io_wake);
    else if (timer_ms >= 0)
      io_due_locked(lp, lp->left_at + (uint64_t)timer_ms * 1000000u);
  } else if (kick) {
    uv_async_send(&lp->async);
  }
}

int ftmw_loop_wait_locked(ftmw_loop *lp, int (*done)(const void *),
                          const void *arg, int64_t ms) {
  lp->inside++;
  ftmw_qnode work; /* taken under the lock held now: one acquisition less */
  lp->work.take_locked(lp->work.ctx, &work);
  uv_mutex_unlock(lp->lock);
  loop_enter(lp);
  /* A process whose loop has not run for a while (stopped, starved) reads
   * before it writes: it may have been declared failed meanwhile, and a
   * FENCE then ends it before anything it was about to send goes out. */
  if (ftmw_now_ms() - lp->last_ran > lp->stale_ms)
    uv_run(&lp->loop, UV_RUN_NOWAIT);
  lp->work.run(lp->work.ctx, &work);
  lp->wait_expired = 0;
  if (ms >= 0) {
    uv_update_time(&lp->loop); /* the timer counts from the loop's clock */
    uv_timer_start(&lp->wait_timer, wait_timer_cb, (uint64_t)ms, 0);
  }
  uv_mutex_lock(lp->lock);
  while (!done(arg) && !lp->wait_expired) {
    uv_mutex_unlock(lp->lock);
    waiting_in = lp;
    uv_run(&lp->loop, UV_RUN_ONCE);
    waiting_in = NULL;
    uv_mutex_lock(lp->lock);
  }
  int rc = done(arg) ? 0 : -1;
  /* The lock is kept while the loop is given back (the owner mutex is
   * released under it: only its taking has an order, owner first): one
   * acquisition a wait less. */
  if (ms >= 0)
    uv_timer_stop(&lp->wait_timer);
  owner_woke_locked(lp);
  int timer_ms;
  int kick = loop_leave(lp, &timer_ms);
  lp->left_at = uv_hrtime();
  if (--lp->inside == 0)
    io_resume_locked(lp, kick, timer_ms);
  return rc;
}

static int always(const void *arg) {
  (void)arg;
  return 1;
}

void ftmw_loop_flush_locked(ftmw_loop *lp) {
  ftmw_loop_wait_locked(lp, always, NULL, -1);
}

void ftmw_loop_flush_soon_locked(ftmw_loop *lp) {
  if (lp->io_state != IO_WAITING || lp->inside > 0) {
    ftmw_loop_flush_locked(lp);
    return;
  }
  /* A pass due by an earlier frame's time plus BATCH_NS takes this one
   * in time too, and costs no clock read (lp->due only comes earlier, or
   * goes back to 0 once the pass is made). */
  if (lp->due != 0 && lp->due == lp->batch_due)
    return;
  uint64_t by = uv_hrtime() + BATCH_NS;
  if (lp->due == 0 || lp->due > by)
    io_due_locked(lp, by);
  lp->batch_due = lp->due;
}

/* Whether something changed since *seen (lp->wakes). */
typedef struct change_seen {
  ftmw_loop *lp;
  uint64_t wakes;
} change_seen;

static int woken(const void *arg) {
  const change_seen *seen = arg;
  return __atomic_load_n(&seen->lp->wakes, __ATOMIC_ACQUIRE) != seen->wakes;
}

int ftmw_loop_wait_change_locked(ftmw_loop *lp, int64_t ms) {
  change_seen seen = {lp, __atomic_load_n(&lp->wakes, __ATOMIC_ACQUIRE)};
  return ftmw_loop_wait_locked(lp, woken, &seen, ms);
}

/* The I/O thread: the loop's owner while the application does not call.
 * It waits (IO_WAITING) while a call is inside and for lp->linger_ns after
 * the last one left, waking about once a linger to look, or when woken
 * for a pass that cannot wait (lp->pass_now, lp->due); past the linger it
 * polls the loop's fd and makes a pass whenever something is ready. */
static void io_thread(void *arg) {
  ftmw_loop *lp = arg;
  int timeout = 0; /* the last pass's: how long to poll */
  for (;;) {
    uv_mutex_lock(lp->lock);
    int waited = 0, poll_first = 0;
    for (;;) {
      uint64_t now = uv_hrtime(), until;
      if (lp->pass_now || (lp->inside == 0 && lp->due != 0 && lp->due <= now))
        break;
      if (lp->inside > 0) {
        /* The call runs the loop meanwhile, and when it leaves it says
         * what falls due next (io_resume_locked). */
        if (lp->due != 0 && lp->due <= now)
          lp->due = 0;
        until = now + lp->linger_ns;
      } else if (now - lp->left_at < lp->linger_ns) {
        until = lp->left_at + lp->linger_ns;
      } else { /* the linger is over */
        poll_first = !waited;
        break;
      }
      if (lp->due != 0 && lp->due < until)
        until = lp->due; /* so that nobody wakes it for that again */
      lp->io_state = IO_WAITING;
      lp->io_until = until;
      uv_cond_timedwait(&lp->io_wake, lp->lock, until - now);
      waited = 1;
    }
    lp->io_state = IO_RUNNING;
    lp->pass_now = 0;
    lp->due = 0;
    uv_mutex_unlock(lp->lock);
    if (poll_first && timeout != 0) {
      struct pollfd pfd = {.fd = uv_backend_fd(&lp->loop), .events = POLLIN};
      poll(&pfd, 1, timeout);
    }
    /* A call that came in meanwhile runs the loop itself: this thread
     * waits, and makes a pass once the call is out. */
    timeout = 0;
    if (uv_mutex_trylock(&lp->owner) != 0)
      continue;
    ftmw_qnode work;
    uv_mutex_lock(lp->lock);
    int inside = lp->inside;
    if (inside == 0)
      lp->work.take_locked(lp->work.ctx, &work);
    uv_mutex_unlock(lp->lock);
    if (inside > 0) {
      uv_mutex_unlock(&lp->owner);
      continue;
    }
    lp->work.run(lp->work.ctx, &work);
    int alive = uv_run(&lp->loop, UV_RUN_NOWAIT);
    if (lp->owner_woke) { /* one acquisition, only after a completion */
      uv_mutex_lock(lp->lock);
      owner_woke_locked(lp);
      uv_mutex_unlock(lp->lock);
    }
    /* Watchers its callbacks started enter the epoll set at the next
     * pass, which must come before this thread sleeps on that set. */
    timeout = lp->kick ? 0 : uv_backend_timeout(&lp->loop);
    lp->kick = lp->new_fd = lp->timer = 0;
    uv_mutex_unlock(&lp->owner);
    if (!alive)
      break;
  }
}

int ftmw_loop_init(ftmw_loop *lp, uv_mutex_t *lock, const ftmw_loop_work *work,
                   uint64_t stale_ms) {
  lp->lock = lock;
  lp->work = *work;
  lp->stale_ms = stale_ms;
  /* Within a quarter of the stall bound, so that the loop's ticks never
   * look late for it (FT_HEARTBEAT_MS of 20 ms or less). */
  lp->linger_ns = (uint64_t)FTMW_LOOP_LINGER_MS * 1000000u;
  if (lp->linger_ns > stale_ms * 1000000u / 4)
    lp->linger_ns = stale_ms * 1000000u / 4;
  if (uv_mutex_init(&lp->owner) != 0)
    return -1;
  if (uv_cond_init(&lp->io_wake) != 0) {
    uv_mutex_destroy(&lp->owner);
    return -1;
  }
  if (uv_loop_init(&lp->loop) != 0) {
    uv_cond_destroy(&lp->io_wake);
    uv_mutex_destroy(&lp->owner);
    return -1;
  }
  uv_async_init(&lp->loop, &lp->async, async_cb);
  uv_timer_init(&lp->loop, &lp->wait_timer);
  return 0;
}

int ftmw_loop_start(ftmw_loop *lp) {
  /* The thread starts with every signal blocked: a write to a dead peer
   * then fails with EPIPE instead of killing the process with SIGPIPE, and
   * the application's signals keep going to the application's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = uv_thread_create(&lp->thread, io_thread, lp);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) /* named from the start, not once it first runs */
    pthread_setname_np(lp->thread, FTMW_IO_THREAD_NAME);
  return rc == 0 ? 0 : -1;
}

void ftmw_loop_close_handles(ftmw_loop *lp) {
  uv_close((uv_handle_t *)&lp->wait_timer, NULL);
  uv_close((uv_handle_t *)&lp->async, NULL);
}

static void loop_free(ftmw_loop *lp) {
  uv_loop_close(&lp->loop);
  uv_cond_destroy(&lp->io_wake);
  uv_mutex_destroy(&lp->owner);
}

void ftmw_loop_stop(ftmw_loop *lp) {
  uv_mutex_lock(lp->lock);
  io_resume_locked(lp, LEAVE_KICK,
                   -1); /* the I/O thread carries the stop out, at once */
  uv_mutex_unlock(lp->lock);
  uv_thread_join(&lp->thread);
  loop_free(lp);
}

void ftmw_loop_discard(ftmw_loop *lp) {
  ftmw_loop_close_handles(lp);
  uv_run(&lp->loop, UV_RUN_DEFAULT);
  loop_free(lp);
}
