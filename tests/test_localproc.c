/* The local process oracle (ftmw/localproc.c): against real processes this
 * test starts, and against a fake /proc for the cases a live process
 * cannot be made to show on demand. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "localproc.h"

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *sleeper(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

static void pin_cpu0(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof(one), &one);
}

enum { SLEEP, SPIN, STARVE };

/* A child with a thread named as FTMW's I/O thread (when named), its main
 * thread sleeping, spinning, or spinning at SCHED_IDLE on CPU 0 (where the
 * test puts a hog): runnable, waiting for a CPU. Its place goes to *at. */
static pid_t child(int named, int how, ftmw_place *at) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    if (named)
      pthread_setname_np(t, FTMW_IO_THREAD_NAME);
    ftmw_place me;
    ftmw_proc_self(&me, "here");
    if (write(fds[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
      _exit(1);
    if (how == STARVE) {
      struct sched_param idle = {.sched_priority = 0};
      pin_cpu0();
      sched_setscheduler(0, SCHED_IDLE, &idle);
    }
    for (volatile int spin = how != SLEEP; spin;)
      ;
    for (;;)
      pause();
  }
  ftmw_place got;
  cr_assert_eq(read(fds[0], &got, sizeof(got)), (ssize_t)sizeof(got));
  close(fds[0]);
  close(fds[1]);
  if (at)
    *at = got;
  return pid;
}

/* A process spinning on CPU 0 at normal priority. */
static pid_t hog_cpu0(void) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    pin_cpu0();
    for (;;)
      ;
  }
  return pid;
}

/* Looks every 20 ms (at most 5 s) until pid's verdict is want. */
static int becomes(pid_t pid, uint64_t start, int want) {
  ftmw_proc_sample s = {0};
  int v = -1;
  for (int i = 0; i < 250 && (v = ftmw_proc_look("/proc", pid, start, now_ms(), &s)) != want; i++)
    usleep(20000);
  return v;
}

static void finish(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

Test(localproc, sleeping_process_is_asleep, .timeout = 10) {
  ftmw_place at;
  pid_t pid = child(1, SLEEP, &at);
  cr_expect_eq(becomes(pid, at.start, FTMW_PROC_ASLEEP), FTMW_PROC_ASLEEP);
  finish(pid);
}

/* A real starvation: runnable, and the CPU it may use taken by a process
 * of higher priority. Whatever else loads the machine, it waits. */
Test(localproc, process_waiting_for_a_cpu_is_starved, .timeout = 10) {
  pid_t hog = hog_cpu0();
  ftmw_place at;
  pid_t pid = child(1, STARVE, &at);
  cr_expect_eq(becomes(pid, at.start, FTMW_PROC_STARVED), FTMW_PROC_STARVED);
  finish(pid);
  finish(hog);
}

Test(localproc, stopped_process_is_stopped, .timeout = 10) {
  ftmw_place at;
  pid_t pid = child(1, SPIN, &at);
  kill(pid, SIGSTOP);
  int status;
  cr_assert_eq(waitpid(pid, &status, WUNTRACED), pid);
  cr_expect_eq(becomes(pid, at.start, FTMW_PROC_STOPPED), FTMW_PROC_STOPPED);
  kill(pid, SIGCONT);
  ftmw_proc_sample s = {0};
  int v = FTMW_PROC_STOPPED;
  for (int i = 0; i < 250 && v == FTMW_PROC_STOPPED; i++, usleep(20000))
    v = ftmw_proc_look("/proc", pid, at.start, now_ms(), &s);
  cr_expect(v == FTMW_PROC_BUSY || v == FTMW_PROC_RUNNING || v == FTMW_PROC_STARVED,
            "a spinning process after SIGCONT: %s", ftmw_proc_verdict_name(v));
  finish(pid);
}

Test(localproc, dead_or_replaced_process_is_gone, .timeout = 10) {
  ftmw_place at;
  pid_t pid = child(1, SLEEP, &at);
  cr_assert_eq(becomes(pid, at.start, FTMW_PROC_ASLEEP), FTMW_PROC_ASLEEP);
  /* Its pid, but another start time: another process. */
  cr_expect_eq(becomes(pid, at.start + 1, FTMW_PROC_GONE), FTMW_PROC_GONE);
  cr_expect_eq(becomes(pid, 0, FTMW_PROC_ASLEEP), FTMW_PROC_ASLEEP, "0: not checked");
  kill(pid, SIGKILL);
  /* A zombie until reaped, then no process at all. */
  cr_expect_eq(becomes(pid, at.start, FTMW_PROC_GONE), FTMW_PROC_GONE);
  waitpid(pid, NULL, 0);
  cr_expect_eq(becomes(pid, at.start, FTMW_PROC_GONE), FTMW_PROC_GONE);
}

Test(localproc, place_is_local_to_a_child, .timeout = 10) {
  ftmw_place mine, theirs, zero = {0};
  ftmw_proc_self(&mine, "here");
  cr_assert_neq(memcmp(mine.kernel, zero.kernel, sizeof(mine.kernel)), 0,
                "no boot id or pid namespace");
  cr_assert_neq(mine.start, 0);
  pid_t pid = child(0, SLEEP, &theirs);
  finish(pid);
  cr_expect_eq(theirs.pid, (uint32_t)pid);
  cr_expect(ftmw_proc_is_local(&theirs, &mine));
  cr_expect(!ftmw_proc_is_local(&mine, &mine), "itself is not looked up");
  ftmw_place other = theirs;
  other.kernel[20] ^= 1; /* another pid namespace */
  cr_expect(!ftmw_proc_is_local(&other, &mine));
  other = theirs;
  other.kernel[3] ^= 1; /* another boot: another machine */
  cr_expect(!ftmw_proc_is_local(&other, &mine));
  other = theirs;
  strcpy(other.host, "there"); /* a network namespace of this machine */
  cr_expect(ftmw_proc_is_local(&other, &mine),
            "the host name does not matter: the kernel does");
  other = theirs;
  memset(other.kernel, 0, sizeof(other.kernel));
  cr_expect(!ftmw_proc_is_local(&other, &zero), "unknown is never local");
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
  pid_t pid = child(0, SPIN, NULL); /* busy, but not an FTMW process */
  ftmw_proc_sample s = {0};
  cr_expect_eq(ftmw_proc_look("/proc", pid, 0, now_ms(), &s), FTMW_PROC_UNKNOWN);
  finish(pid);
  cr_expect_eq(ftmw_proc_look("/proc", 0, 0, now_ms(), &s), FTMW_PROC_UNKNOWN);
  cr_expect_eq(ftmw_proc_look("/proc", -5, 0, now_ms(), &s), FTMW_PROC_UNKNOWN);
}

/* A fake /proc: FAKE_ROOT/PID/task/TID/{stat,comm,schedstat}. */
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

/* A task of pid: command, state letter, kernel flags, start time, and
 * nanoseconds on a CPU so far. */
static void fake_task(int pid, int tid, const char *comm, char state,
                      unsigned flags, unsigned start, unsigned long long cpu) {
  char line[256];
  fake_dirs(pid, tid);
  snprintf(line, sizeof(line),
           "%d (%s) %c 1 2 3 4 5 %u 0 0 0 0 0 0 0 0 20 0 2 0 %u 1000 50\n", tid,
           comm, state, flags, start);
  fake_file(pid, tid, "stat", line);
  snprintf(line, sizeof(line), "%s\n", comm);
  fake_file(pid, tid, "comm", line);
  snprintf(line, sizeof(line), "%llu 0 1\n", cpu);
  fake_file(pid, tid, "schedstat", line);
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

#define PF_EXITING 0x4u
#define PF_DUMPCORE 0x200u
#define START 4711u

Test(localproc, fake_proc_states, .init = fake_setup, .fini = fake_teardown,
     .timeout = 10) {
  /* Each process: its leader (command, state, flags) and its I/O thread's
   * state and flags, at one look. */
  static const struct {
    const char *leader;
    char leader_state;
    unsigned leader_flags;
    char io_state;
    unsigned io_flags;
    int want;
  } cases[] = {
      /* A command with spaces and parentheses does not shift the fields. */
      {"odd) R (name", 'S', 0, 'S', 0, FTMW_PROC_ASLEEP},
      {"app", 'D', 0, 'S', 0, FTMW_PROC_STARVED},
      {"app", 'R', 0, 't', 0, FTMW_PROC_STOPPED},
      /* A leader that called pthread_exit is a zombie; the process lives. */
      {"app", 'Z', 0, 'R', 0, FTMW_PROC_BUSY},
      {"app", 'Z', 0, 'X', 0, FTMW_PROC_GONE},
      /* Dying: every thread exiting, or one dumping core. */
      {"app", 'R', PF_EXITING, 'S', PF_EXITING, FTMW_PROC_GONE},
      {"app", 'D', PF_DUMPCORE, 'S', PF_EXITING, FTMW_PROC_GONE},
      {"app", 'S', 0, 'R', PF_EXITING, FTMW_PROC_ASLEEP},
  };
  for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
    int pid = 100 + 2 * i;
    ftmw_proc_sample s = {0};
    fake_task(pid, pid, cases[i].leader, cases[i].leader_state,
              cases[i].leader_flags, START, 0);
    fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, cases[i].io_state,
              cases[i].io_flags, START, 0);
    int v = ftmw_proc_look(fake_root, pid, START, 1000, &s);
    cr_expect_eq(v, cases[i].want, "case %d: %s", i, ftmw_proc_verdict_name(v));
  }
  /* Another process with the pid: another start time. */
  ftmw_proc_sample s = {0};
  cr_expect_eq(ftmw_proc_look(fake_root, 100, START + 1, 1000, &s), FTMW_PROC_GONE);
  fake_dirs(14, 0);
  cr_expect_eq(ftmw_proc_look(fake_root, 14, 0, 1000, &s), FTMW_PROC_GONE); /* no tasks */
  cr_expect_eq(ftmw_proc_look(fake_root, 15, 0, 1000, &s), FTMW_PROC_GONE);
  /* A /proc that does not show this process shows nothing to go by. */
  cr_expect_eq(ftmw_proc_look("/nonexistent", 15, 0, 1000, &s), FTMW_PROC_UNKNOWN);
  cr_expect_str_eq(ftmw_proc_verdict_name(FTMW_PROC_STARVED), "starved");
  cr_expect_str_eq(ftmw_proc_verdict_name(99), "?");
}

/* Runnable at two looks: on a CPU half the time or more is running (its
 * loop hung, if it is silent), less is waiting for one. */
Test(localproc, fake_proc_running_or_starved, .init = fake_setup,
     .fini = fake_teardown, .timeout = 10) {
  const int pid = 300;
  ftmw_proc_sample s = {0};
  fake_task(pid, pid, "app", 'S', 0, START, 0);
  fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, 'R', 0, START, 1000000000ull);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1000, &s), FTMW_PROC_BUSY,
               "first look: nothing to compare with");
  /* 20 ms later, 30 ms more on a CPU: too soon (the older look is kept). */
  fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, 'R', 0, START, 1030000000ull);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1020, &s), FTMW_PROC_BUSY);
  cr_expect_eq(s.at_ms, 1000);
  /* At 1200 ms: 30 of 200 ms on a CPU. */
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1200, &s), FTMW_PROC_STARVED);
  /* At 1400 ms: 150 more of 200. */
  fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, 'R', 0, START, 1180000000ull);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1400, &s), FTMW_PROC_RUNNING);
  /* A thread runnable now that was not before: nothing to compare. */
  fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, 'S', 0, START, 1180000000ull);
  fake_task(pid, pid, "app", 'R', 0, START, 5);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1600, &s), FTMW_PROC_BUSY);
  /* Asleep: the next runnable look starts afresh. */
  fake_task(pid, pid, "app", 'S', 0, START, 5);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 1800, &s), FTMW_PROC_ASLEEP);
  cr_expect_eq(s.at_ms, 0);
  /* A runnable thread whose time on a CPU cannot be read (a kernel
   * without schedstat) may be the one waiting: never asleep, never
   * running. */
  char path[256];
  fake_task(pid, pid + 1, FTMW_IO_THREAD_NAME, 'R', 0, START, 0);
  snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", fake_root, pid, pid + 1);
  cr_assert_eq(unlink(path), 0);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 2000, &s), FTMW_PROC_BUSY);
  cr_expect_eq(ftmw_proc_look(fake_root, pid, START, 2200, &s), FTMW_PROC_BUSY);
}
