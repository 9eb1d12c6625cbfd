/* SIGTERM in one process (term.h): taken on the loop instead of killing
 * the process, and, once one came, ignored from ft_finalize on with no
 * moment between where a late copy has the default action. Each test
 * runs in a process of its own (Criterion): one that SIGTERM kills is a
 * crash, reported as a failure. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ftmw_impl.h"
#include "term.h"

static uv_loop_t loop;

static void start(void) {
  memset(&ftmw_st, 0, sizeof(ftmw_st));
  cr_assert_eq(uv_mutex_init(&ftmw_st.lock), 0);
  cr_assert_eq(uv_loop_init(&loop), 0);
}

static void stop(void) {
  uv_run(&loop, UV_RUN_NOWAIT); /* the handles' close callbacks */
  cr_assert_eq(uv_loop_close(&loop), 0, "a handle left open");
  uv_mutex_destroy(&ftmw_st.lock);
}

static void until_requested(void) {
  while (!ftmw_term_requested())
    uv_run(&loop, UV_RUN_ONCE);
}

TestSuite(term, .timeout = 30);

Test(term, taken_on_the_loop) {
  start();
  cr_assert_eq(ftmw_term_start(&loop, 1000), 0);
  cr_assert_eq(ftmw_term_requested(), 0);
  raise(SIGTERM);
  until_requested();
  ftmw_term_close();
  raise(SIGTERM); /* a late copy: ignored */
  stop();
}

/* A late copy of the SIGTERM (ftmw-shim passes it on, the launcher sends
 * it too) may come at any moment of ft_finalize: here another process
 * sends SIGTERM as fast as it can while this one takes it and closes,
 * 2000 times. The libuv signal handle this replaced gave SIGTERM its
 * default action back for a moment at each close, before it was
 * ignored: this test then crashed in most runs. */
Test(term, late_copies_never_kill_a_process_told_to_stop) {
  start();
  pid_t me = getpid(), stormer = -1;
  for (int i = 0; i < 2000; i++) {
    cr_assert_eq(ftmw_term_start(&loop, 1000), 0);
    if (i == 0) {
      raise(SIGTERM);
      until_requested();
      stormer = fork();
      cr_assert_geq(stormer, 0);
      if (stormer == 0) /* until this process is gone (or a zombie) */
        while (getppid() == me && kill(me, SIGTERM) == 0)
          ;
      if (stormer == 0)
        _exit(0);
    }
    uv_run(&loop, UV_RUN_NOWAIT);
    ftmw_term_close();
    uv_run(&loop, UV_RUN_NOWAIT);
  }
  kill(stormer, SIGKILL);
  waitpid(stormer, NULL, 0);
  stop();
}
