/* The local process oracle (ftmw/localproc.c): against real processes this
 * test starts, and against a fake /proc for the cases a live process
 * cannot be made to show. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "localproc.h"

static void *sleeper(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

static volatile int spin_forever = 1;

/* A child with a thread named as FTMW's I/O thread (when named), its main
 * thread sleeping or, with spin, busy. */
static pid_t child(int named, int spin) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    if (named)
      pthread_setname_np(t, FTMW_IO_THREAD_NAME);
    while (spin && spin_forever)
      ;
    for (;;)
      pause();
  }
  return pid;
}

/* Waits (at most 5 s) until pid's verdict is want. */
static int becomes(pid_t pid, int want) {
  int v = -1;
  for (int i = 0; i < 500 && (v = ftmw_proc_look("/proc", pid)) != want; i++)
    usleep(10000);
  return v;
}

static void finish(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

Test(localproc, sleeping_process_is_asleep, .timeout = 10) {
  pid_t pid = child(1, 0);
  cr_expect_eq(becomes(pid, FTMW_PROC_ASLEEP), FTMW_PROC_ASLEEP);
  finish(pid);
}

Test(localproc, busy_process_counts_as_starved, .timeout = 10) {
  pid_t pid = child(1, 1);
  cr_expect_eq(becomes(pid, FTMW_PROC_STARVED), FTMW_PROC_STARVED);
  finish(pid);
}

Test(localproc, stopped_process_is_stopped, .timeout = 10) {
  pid_t pid = child(1, 1);
  cr_assert_eq(becomes(pid, FTMW_PROC_STARVED), FTMW_PROC_STARVED);
  kill(pid, SIGSTOP);
  int status;
  cr_assert_eq(waitpid(pid, &status, WUNTRACED), pid);
  cr_expect_eq(becomes(pid, FTMW_PROC_STOPPED), FTMW_PROC_STOPPED);
  kill(pid, SIGCONT);
  cr_expect_eq(becomes(pid, FTMW_PROC_STARVED), FTMW_PROC_STARVED);
  finish(pid);
}

Test(localproc, dead_process_is_gone, .timeout = 10) {
  pid_t pid = child(1, 0);
  cr_assert_eq(becomes(pid, FTMW_PROC_ASLEEP), FTMW_PROC_ASLEEP);
  kill(pid, SIGKILL);
  /* A zombie until reaped, then no process at all. */
  cr_expect_eq(becomes(pid, FTMW_PROC_GONE), FTMW_PROC_GONE);
  waitpid(pid, NULL, 0);
  cr_expect_eq(ftmw_proc_look("/proc", pid), FTMW_PROC_GONE);
}

Test(localproc, kernel_id_is_shared_with_a_child, .timeout = 10) {
  uint8_t mine[FTMW_KERNEL_ID_SIZE], zero[FTMW_KERNEL_ID_SIZE] = {0};
  ftmw_proc_kernel_id(mine);
  cr_assert_neq(memcmp(mine, zero, sizeof(mine)), 0, "no boot id or pid namespace");
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    uint8_t k[FTMW_KERNEL_ID_SIZE];
    ftmw_proc_kernel_id(k);
    _exit(write(fds[1], k, sizeof(k)) == (ssize_t)sizeof(k) ? 0 : 1);
  }
  uint8_t theirs[FTMW_KERNEL_ID_SIZE];
  cr_assert_eq(read(fds[0], theirs, sizeof(theirs)), (ssize_t)sizeof(theirs));
  waitpid(pid, NULL, 0);
  close(fds[0]);
  close(fds[1]);
  cr_expect(ftmw_proc_same_kernel(theirs, mine));
  theirs[20] ^= 1; /* another pid namespace */
  cr_expect(!ftmw_proc_same_kernel(theirs, mine));
  cr_expect(!ftmw_proc_same_kernel(zero, zero), "unknown is never the same");
}

Test(localproc, thread_sched_counts_cpu_time, .timeout = 10) {
  uint64_t cpu0, runq0, cpu1, runq1;
  cr_assert(ftmw_proc_thread_sched(&cpu0, &runq0));
  for (volatile long i = 0; i < 50000000; i++)
    ;
  cr_assert(ftmw_proc_thread_sched(&cpu1, &runq1));
  cr_expect_gt(cpu1, cpu0, "no CPU time counted for a busy loop");
  cr_expect_geq(runq1, runq0);
}

Test(localproc, other_process_is_unknown, .timeout = 10) {
  pid_t pid = child(0, 1); /* busy, but not an FTMW process */
  usleep(50000);
  cr_expect_eq(ftmw_proc_look("/proc", pid), FTMW_PROC_UNKNOWN);
  finish(pid);
  cr_expect_eq(ftmw_proc_look("/proc", 0), FTMW_PROC_UNKNOWN);
  cr_expect_eq(ftmw_proc_look("/proc", -5), FTMW_PROC_UNKNOWN);
}

/* A fake /proc: FAKE_ROOT/PID/task/TID/{stat,comm}. */
static char fake_root[64];

/* Makes FAKE_ROOT/PID/task/TID (tid 0: only FAKE_ROOT/PID/task). */
static void fake_dirs(int pid, int tid) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%d", fake_root, pid);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/%d/task", fake_root, pid);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/%d/task/%d", fake_root, pid, tid);
  if (tid > 0)
    mkdir(path, 0755);
}

static void fake_file(int pid, int tid, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%d/task/%d/%s", fake_root, pid, tid, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* A task of pid with that command and state letter. */
static void fake_task(int pid, int tid, const char *comm, char state) {
  char line[128];
  fake_dirs(pid, tid);
  snprintf(line, sizeof(line), "%d (%s) %c 1 2 3 4\n", tid, comm, state);
  fake_file(pid, tid, "stat", line);
  snprintf(line, sizeof(line), "%s\n", comm);
  fake_file(pid, tid, "comm", line);
}

static void fake_setup(void) {
  snprintf(fake_root, sizeof(fake_root), "/tmp/ftmw-fakeproc.%d", (int)getpid());
  mkdir(fake_root, 0755);
  char self[128]; /* a /proc shows the process reading it */
  snprintf(self, sizeof(self), "%s/%d", fake_root, (int)getpid());
  mkdir(self, 0755);
}

static void fake_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", fake_root);
  cr_expect_eq(system(cmd), 0);
}

Test(localproc, fake_proc_states, .init = fake_setup, .fini = fake_teardown,
     .timeout = 10) {
  /* Each process: its leader (command, state) and its I/O thread's state. */
  static const struct {
    const char *leader;
    char leader_state, io_state;
    int want;
  } cases[] = {
      /* A command with spaces and parentheses does not shift the state. */
      {"odd) R (name", 'S', 'S', FTMW_PROC_ASLEEP},
      {"app", 'D', 'S', FTMW_PROC_STARVED},
      {"app", 'R', 't', FTMW_PROC_STOPPED},
      /* A leader that called pthread_exit is a zombie; the process lives. */
      {"app", 'Z', 'R', FTMW_PROC_STARVED},
      {"app", 'Z', 'X', FTMW_PROC_GONE},
  };
  for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
    int pid = 100 + 2 * i;
    fake_task(pid, pid, cases[i].leader, cases[i].leader_state);
    fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, cases[i].io_state);
    cr_expect_eq(ftmw_proc_look(fake_root, pid), cases[i].want, "case %d", i);
  }
  fake_dirs(14, 0);
  cr_expect_eq(ftmw_proc_look(fake_root, 14), FTMW_PROC_GONE); /* no tasks */
  cr_expect_eq(ftmw_proc_look(fake_root, 15), FTMW_PROC_GONE);
  /* A /proc that does not show this process shows nothing to go by. */
  cr_expect_eq(ftmw_proc_look("/nonexistent", 15), FTMW_PROC_UNKNOWN);
  cr_expect_str_eq(ftmw_proc_verdict_name(FTMW_PROC_STARVED), "starved");
  cr_expect_str_eq(ftmw_proc_verdict_name(99), "?");
}
