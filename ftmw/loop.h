/* Who runs the process's libuv loop. The loop has one owner at a time: a
 * call that waits runs it on its own thread (so a round trip costs the
 * socket wake-ups alone, as raw TCP does), and the I/O thread runs it the
 * rest of the time. This module knows nothing of connections or peers:
 * it hands the loop over, counts the writes libuv has queued (and keeps
 * their SIGPIPE from the application), and makes a call wait until a
 * condition holds. */
#ifndef FTMW_LOOP_H
#define FTMW_LOOP_H

#include <stdint.h>
#include <uv.h>

#include "queue.h"

/* The work queued for the loop, in two steps: take_locked moves it into
 * a list of the caller's (lock held, the loop perhaps not yet taken), run
 * carries that list out (the loop's owner, lock not held). A waiting call
 * takes the work under the lock it holds on entry, and runs it once it
 * has the loop; the I/O thread does both at each pass. The lists run in
 * the order they were taken, so frames go out in the order submitted: the
 * work comes from the application's one thread, which submits nothing
 * while it waits; the I/O thread runs the list it took in the same pass,
 * before a waiting call can have the loop, and takes none while a call
 * waits (the pass finds inside set) but from its async callback, which
 * finds nothing new. */
typedef struct ftmw_loop_work {
  void *ctx; /* passed to both */
  void (*take_locked)(void *ctx, ftmw_qnode *into);
  void (*run)(void *ctx, ftmw_qnode *work);
} ftmw_loop_work;

/* A loop and its hand-over: the context's (ftmw_impl.h), or a test's.
 * Its fields are loop.c's alone. */
typedef struct ftmw_loop {
  uv_loop_t loop;
  uv_async_t async; /* hurries a running I/O thread */
  uv_thread_t thread;
  uv_mutex_t *lock;
  ftmw_loop_work work;
  uint64_t stale_ms;
  uint64_t linger_ns; /* see io_thread */
  uv_mutex_t owner;
  uv_cond_t io_wake;     /* the waiting I/O thread (with *lock) */
  uv_timer_t wait_timer; /* a timed wait's limit */
  int wait_expired;
  int kick;          /* the owner started a watcher this pass */
  int new_fd;        /* ...on a new connection (see loop_leave) */
  int timer;         /* ...a timer (see ftmw_loop_timer_started) */
  int writes;        /* uv_write requests not yet called back */
  uint64_t last_ran; /* ftmw_loop_ran's last now */
  /* Changes a waiter may be waiting for: an atomic, counted by anyone
   * with *lock (ftmw_loop_wake_locked) or by the loop's owner without it
   * (ftmw_loop_wake_owner, which sets owner_woke), and read by a waiting
   * call once it owns the loop. */
  uint64_t wakes;
  int owner_woke; /* the owner counted one without *lock (owner only) */
  /* Under *lock: */
  int inside;         /* calls waiting in the loop */
  int io_state;       /* IO_* */
  int pass_now;       /* the I/O thread must make a pass at once */
  uint64_t left_at;   /* when the last call left (uv_hrtime) */
  uint64_t due;       /* a waiting I/O thread's pass is due then (0: none) */
  uint64_t batch_due; /* due, when a lazy frame found it soon enough */
  uint64_t io_until;  /* the waiting I/O thread wakes by then */
} ftmw_loop;

/* Creates the loop lp; nothing runs it yet. lock guards everything both
 * threads touch (the job's one mutex); work: the work queued for the
 * loop, carried out by whoever takes it; stale_ms: a waiting call that
 * finds the loop not run for this long (ftmw_loop_ran) reads before it
 * writes. Returns 0, or -1 when libuv could not create it. */
int ftmw_loop_init(ftmw_loop *lp, uv_mutex_t *lock, const ftmw_loop_work *work,
                   uint64_t stale_ms);

/* Monotonic milliseconds: the clock of the loop's deadlines. */
static inline uint64_t ftmw_now_ms(void) { return uv_hrtime() / 1000000u; }

/* lp's libuv loop, for the handles others start on it, and back: the
 * ftmw_loop whose loop a handle's is (a write's callback, say). */
uv_loop_t *ftmw_loop_uv(ftmw_loop *lp);
static inline ftmw_loop *ftmw_loop_of(uv_loop_t *loop) {
  return FTMW_CONTAINER_OF(loop, ftmw_loop, loop);
}

/* Starts the I/O thread, every signal blocked in it. Returns 0 or -1. */
int ftmw_loop_start(ftmw_loop *lp);

/* Closes the loop's own handles: the last of a loop being stopped (run
 * by the pass that carries out the stop, see ftmw_loop_stop). */
void ftmw_loop_close_handles(ftmw_loop *lp);

/* Hurries the I/O thread, which carries out the stop already submitted
 * (its pass closes every handle), joins it and frees the loop. */
void ftmw_loop_stop(ftmw_loop *lp);

/* Frees a loop whose thread never started, closing its handles first. */
void ftmw_loop_discard(ftmw_loop *lp);

/* How many calls wait in the loop now (lock held): 0 when the
 * application is not in a call that waits. */
int ftmw_loop_calls_waiting_locked(ftmw_loop *lp);

/* Something a waiting call may wait for has changed: by a thread holding
 * the lock (_locked), or by the loop's owner without it (_owner: the
 * link's outcomes, link.h). A call that looked under the lock and then
 * waits for a change misses neither: the owner counts its changes again,
 * under the lock, before it gives the loop back. */
void ftmw_loop_wake_locked(ftmw_loop *lp);
void ftmw_loop_wake_owner(ftmw_loop *lp);

/* Runs the loop (lock held on entry and return, released meanwhile)
 * until done(arg) holds, checked under the lock, or for at most ms
 * (ms < 0: no limit). Returns 0, or -1 when the time ran out first. */
int ftmw_loop_wait_locked(ftmw_loop *lp, int (*done)(const void *),
                          const void *arg, int64_t ms);

/* Runs the loop (lock held) until anything changes (ftmw_loop_wake_*)
 * or for at most ms. Returns 0 on a change, -1 on timeout. */
int ftmw_loop_wait_change_locked(ftmw_loop *lp, int64_t ms);

/* The owner started a watcher (new_fd: on a new connection), which libuv
 * takes into its epoll set only at its next pass: whoever owns the loop
 * next makes that pass before sleeping on the set. */
void ftmw_loop_watchers_changed(ftmw_loop *lp, int new_fd);

/* The owner started a timer: an I/O thread asleep on the loop's set
 * with an older deadline is hurried when the call leaves (one parked or
 * lingering makes a pass, and so sees it, anyway). */
void ftmw_loop_timer_started(ftmw_loop *lp);

/* Carries out the work submitted so far on the calling thread (lock held
 * on entry and return, released meanwhile), without waiting for
 * anything: what a call that does not wait writes now. */
void ftmw_loop_flush_locked(ftmw_loop *lp);

/* The same, unless the I/O thread is waiting after the application's
 * last call (see loop.c): it then carries the work out at a pass within
 * FTMW_LOOP_BATCH_US, together with what is submitted meanwhile (a frame
 * batched with the ones after it), unless a call that enters the loop
 * does first. */
void ftmw_loop_flush_soon_locked(ftmw_loop *lp);
#define FTMW_LOOP_BATCH_US 1000

/* How long the I/O thread leaves the loop to the application after its
 * last call (at most a quarter of the stall bound given to
 * ftmw_loop_init): data that comes meanwhile is read, and acknowledged,
 * by the application's next call or at the end of that time. */
#define FTMW_LOOP_LINGER_MS 10

/* uv_write, counted until ftmw_loop_write_done (the owner's callback
 * calls it first thing): while such writes are queued, a calling thread
 * that owns the loop has SIGPIPE blocked. Returns uv_write's result. */
int ftmw_loop_write(ftmw_loop *lp, uv_write_t *req, uv_stream_t *s,
                    const uv_buf_t *bufs, unsigned n, uv_write_cb cb);
void ftmw_loop_write_done(ftmw_loop *lp);

/* The loop ran at now (ftmw_now_ms): the heartbeat tick says so. */
void ftmw_loop_ran(ftmw_loop *lp, uint64_t now);

#endif
