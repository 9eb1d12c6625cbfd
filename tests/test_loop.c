/* The loop's waits (loop.c), run by the calling thread itself: no I/O
 * thread is started. With libuv 1.44 (Debian 12), uv_run(UV_RUN_ONCE)
 * runs the timers due before it polls, which these tests catch; from
 * 1.45 it runs them after the poll too, where they pass either way. */
#include <criterion/criterion.h>

#include "loop.h"
#include "queue.h"

static uv_mutex_t lock;
static ftmw_loop lp;
static uv_timer_t far;

static void take_nothing(void *ctx, ftmw_qnode *into) {
  (void)ctx;
  ftmw_q_init(into);
}

static void run_nothing(void *ctx, ftmw_qnode *work) {
  (void)ctx;
  (void)work;
}

static void never(uv_timer_t *t) {
  (void)t;
  cr_assert_fail("a wait ran until another timer, 10 s away");
}

static void setup(void) {
  static const ftmw_loop_work work = {NULL, take_nothing, run_nothing};
  cr_assert_eq(uv_mutex_init(&lock), 0);
  cr_assert_eq(ftmw_loop_init(&lp, &lock, &work, 10000), 0);
  ftmw_loop_ran(&lp, ftmw_now_ms()); /* not stale: no pass before a wait */
  /* A timer of the loop's own, far away: a heartbeat. */
  uv_timer_init(ftmw_loop_uv(&lp), &far);
  uv_timer_start(&far, never, 10000, 0); /* before the test's time-out */
}

static void teardown(void) {
  uv_close((uv_handle_t *)&far, NULL);
  ftmw_loop_discard(&lp);
  uv_mutex_trylock(&lock); /* held, if an assertion broke a wait */
  uv_mutex_unlock(&lock);
  uv_mutex_destroy(&lock);
}

TestSuite(loop, .init = setup, .fini = teardown, .timeout = 20);

/* A wait bounded by ms, with nothing to change, returns -1 by its bound,
 * not at the loop's next timer. Its 0 ms pass (ft_is_primary's, a test's
 * progress) once waited for that timer, a heartbeat up to 250 ms away:
 * with a replica the farm layer did 83 empty tasks a second. */
Test(loop, bounded_wait_ends_at_its_bound) {
  static const int64_t bounds[] = {0, 1, 30};
  uv_mutex_lock(&lock);
  for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
    cr_assert_eq(ftmw_loop_wait_change_locked(&lp, bounds[i]), -1);
  uv_mutex_unlock(&lock);
}

static void wake(uv_timer_t *t) {
  (void)t;
  ftmw_loop_wake_locked(&lp);
}

/* A change made by the loop's own timer (a peer found silent at a
 * heartbeat) ends an unbounded wait at once, not at the next timer. */
Test(loop, change_in_a_timer_ends_the_wait) {
  static uv_timer_t waker; /* closed at the loop's end (teardown) */
  uv_timer_init(ftmw_loop_uv(&lp), &waker);
  uv_timer_start(&waker, wake, 0, 0);
  uv_mutex_lock(&lock);
  cr_assert_eq(ftmw_loop_wait_change_locked(&lp, -1), 0);
  uv_mutex_unlock(&lock);
  uv_close((uv_handle_t *)&waker, NULL);
}
