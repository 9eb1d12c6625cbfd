/* The local process oracle (see localproc.h). */
#include "localproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads path into buf (NUL-terminated); returns the length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n;
  do
    n = read(fd, buf, cap - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return n;
}

/* A task's stat line, from the field after the command (which is in
 * parentheses and may itself hold spaces or ')'): the state letter, the
 * kernel's flags and the start time. 0 if it cannot be read. */
typedef struct {
  char state;
  unsigned long flags;
  uint64_t start;
} task_stat;

static int parse_stat(const char *line, task_stat *t) {
  const char *close = strrchr(line, ')');
  unsigned long long start;
  /* Fields 3 (state) to 22 (starttime) of proc(5). */
  if (close == NULL ||
      sscanf(close + 1, " %c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u "
             "%*d %*d %*d %*d %*d %*d %llu", &t->state, &t->flags, &start) != 3)
    return 0;
  t->start = start;
  return 1;
}

/* The kernel's flags of a task (linux/sched.h): exiting, dumping core. */
#define PF_EXITING_ 0x00000004ul
#define PF_DUMPCORE_ 0x00000200ul

/* PROC/PID/task/TID/NAME into path; -1 if it does not fit. */
static int task_file(char *path, size_t cap, const char *proc, int pid,
                     const char *tid, const char *name) {
  int n = snprintf(path, cap, "%s/%d/task/%.32s/%s", proc, pid, tid, name);
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* What one pass over a process's threads found. */
typedef struct {
  int listed, seen, live, ours, stopped, disk, dumping;
  uint64_t start; /* the leader's start time; 0: not read */
  int runnable;        /* runnable threads... */
  ftmw_proc_sample run; /* ...of which these were sampled */
} threads_seen;

/* Reads one thread (tid, a directory name) of pid into ts. */
static void see_thread(const char *proc, int pid, const char *tid,
                       threads_seen *ts) {
  char path[256], buf[512];
  task_stat t;
  ts->listed++;
  if (task_file(path, sizeof(path), proc, pid, tid, "stat") != 0 ||
      read_small(path, buf, sizeof(buf)) <= 0 || !parse_stat(buf, &t))
    return; /* the thread ended meanwhile */
  ts->seen++;
  if (atoi(tid) == pid)
    ts->start = t.start;
  ts->dumping |= (t.flags & PF_DUMPCORE_) != 0;
  if (task_file(path, sizeof(path), proc, pid, tid, "comm") == 0 &&
      read_small(path, buf, sizeof(buf)) > 0) {
    buf[strcspn(buf, "\n")] = '\0';
    ts->ours |= strcmp(buf, FTMW_IO_THREAD_NAME) == 0;
  }
  /* Z, X: a thread that ended (the leader too, after pthread_exit), as
   * is one exiting; R: running or runnable; D: disk wait; T, t: stopped,
   * traced; the others wait for something. */
  if (t.state == 'Z' || t.state == 'X' || t.state == 'x' ||
      (t.flags & PF_EXITING_))
    return;
  ts->live++;
  ts->disk |= t.state == 'D';
  ts->stopped |= t.state == 'T' || t.state == 't';
  unsigned long long cpu;
  ts->runnable += t.state == 'R';
  if (t.state != 'R' || ts->run.n == FTMW_PROC_THREADS_MAX ||
      task_file(path, sizeof(path), proc, pid, tid, "schedstat") != 0 ||
      read_small(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%llu", &cpu) != 1)
    return;
  ts->run.t[ts->run.n].tid = atoi(tid);
  ts->run.t[ts->run.n++].cpu_ns = cpu;
}

/* Runnable threads against the previous look s (then replaced by this
 * one, if old enough): STARVED if one of them was on a CPU less than half
 * of the time between the looks, RUNNING if each was on one more (every
 * runnable thread sampled), BUSY if there is nothing to compare with or a
 * runnable thread could not be sampled (no schedstat, too many threads):
 * it may be the one that waits. */
static int compare_runnable(const threads_seen *ts, uint64_t now_ms,
                            ftmw_proc_sample *s) {
  if (s->at_ms != 0 && now_ms < s->at_ms + FTMW_PROC_LOOK_MIN_MS)
    return FTMW_PROC_BUSY; /* too soon to tell: keep the older look */
  int matched = 0, waited = 0;
  uint64_t half_ns = (now_ms - s->at_ms) * 1000000u / 2;
  for (int i = 0; s->at_ms != 0 && i < ts->run.n; i++)
    for (int j = 0; j < s->n; j++)
      if (s->t[j].tid == ts->run.t[i].tid) {
        matched++;
        waited |= ts->run.t[i].cpu_ns - s->t[j].cpu_ns < half_ns;
        break;
      }
  *s = ts->run;
  s->at_ms = now_ms;
  if (waited)
    return FTMW_PROC_STARVED;
  return matched == ts->runnable ? FTMW_PROC_RUNNING : FTMW_PROC_BUSY;
}

int ftmw_proc_look(const char *proc, int pid, uint64_t start, uint64_t now_ms,
                   ftmw_proc_sample *s) {
  if (pid <= 0)
    return FTMW_PROC_UNKNOWN;
  char path[256];
  int n = snprintf(path, sizeof(path), "%s/%d/task", proc, pid);
  if (n <= 0 || (size_t)n >= sizeof(path))
    return FTMW_PROC_UNKNOWN;
  DIR *d = opendir(path);
  if (d == NULL) {
    /* Gone, if this /proc shows processes at all (it shows this one). */
    int missing = errno == ENOENT;
    snprintf(path, sizeof(path), "%s/%d", proc, (int)getpid());
    return missing && access(path, F_OK) == 0 ? FTMW_PROC_GONE
                                              : FTMW_PROC_UNKNOWN;
  }
  threads_seen ts;
  memset(&ts, 0, sizeof(ts));
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
      see_thread(proc, pid, e->d_name, &ts);
  closedir(d);
  if (ts.listed == 0)
    return FTMW_PROC_GONE;
  if (ts.seen == 0)
    return FTMW_PROC_UNKNOWN; /* not ours to read */
  if ((start != 0 && ts.start != 0 && ts.start != start) || ts.dumping ||
      ts.live == 0)
    return FTMW_PROC_GONE; /* its pid taken by another, or dying */
  if (!ts.ours)
    return FTMW_PROC_UNKNOWN;
  if (ts.stopped)
    return FTMW_PROC_STOPPED;
  if (ts.disk)
    return FTMW_PROC_STARVED;
  if (ts.runnable == 0) {
    s->at_ms = 0; /* runnable threads seen later have no earlier look */
    return FTMW_PROC_ASLEEP;
  }
  return compare_runnable(&ts, now_ms, s);
}

/* This process's start time (clock ticks after boot); 0 if unknown. */
static uint64_t self_start(void) {
  char buf[1024];
  task_stat t;
  return read_small("/proc/self/stat", buf, sizeof(buf)) > 0 &&
                 parse_stat(buf, &t)
             ? t.start
             : 0;
}

/* This process's kernel id (wire.h): where its pid means this process.
 * All zeros where /proc cannot tell. */
static void kernel_id(uint8_t out[FTMW_KERNEL_ID_SIZE]) {
  memset(out, 0, FTMW_KERNEL_ID_SIZE);
  char buf[64];
  struct stat ns;
  /* A /proc mounted for another pid namespace (unshare --pid without a
   * new mount) names other processes: then nothing is known. */
  char self[32], want[32];
  ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
  snprintf(want, sizeof(want), "%d", (int)getpid());
  if (n <= 0 || (self[n] = '\0', strcmp(self, want) != 0))
    return;
  if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) <= 0 ||
      stat("/proc/self/ns/pid", &ns) != 0)
    return;
  /* The boot id is a UUID: 32 hex digits, with dashes. */
  int nibbles = 0;
  for (const char *s = buf; *s && nibbles < 32; s++) {
    int v = *s >= '0' && *s <= '9'   ? *s - '0'
            : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
            : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                     : -1;
    if (v < 0)
      continue;
    out[nibbles / 2] |= (uint8_t)(nibbles % 2 ? v : v << 4);
    nibbles++;
  }
  if (nibbles != 32) {
    memset(out, 0, FTMW_KERNEL_ID_SIZE);
    return;
  }
  uint64_t ino = (uint64_t)ns.st_ino;
  for (int i = 0; i < 8; i++)
    out[16 + i] = (uint8_t)(ino >> (8 * i));
}

void ftmw_proc_self(ftmw_place *out, const char *host) {
  memset(out, 0, sizeof(*out));
  out->pid = (uint32_t)getpid();
  snprintf(out->host, sizeof(out->host), "%s", host);
  kernel_id(out->kernel);
  out->start = self_start();
}

int ftmw_proc_is_local(const ftmw_place *peer, const ftmw_place *self) {
  static const uint8_t zero[FTMW_KERNEL_ID_SIZE];
  return peer->pid != 0 && peer->pid != self->pid &&
         memcmp(self->kernel, zero, FTMW_KERNEL_ID_SIZE) != 0 &&
         memcmp(peer->kernel, self->kernel, FTMW_KERNEL_ID_SIZE) == 0;
}

int ftmw_proc_thread_sched(uint64_t *cpu_ns, uint64_t *runq_ns) {
  char buf[96];
  unsigned long long cpu, runq;
  if (read_small("/proc/thread-self/schedstat", buf, sizeof(buf)) <= 0 ||
      sscanf(buf, "%llu %llu", &cpu, &runq) != 2)
    return 0;
  *cpu_ns = cpu;
  *runq_ns = runq;
  return 1;
}

const char *ftmw_proc_verdict_name(int verdict) {
  static const char *const names[] = {"unknown", "gone",    "stopped", "asleep",
                                      "busy",    "running", "starved"};
  return verdict >= 0 && verdict <= FTMW_PROC_STARVED ? names[verdict] : "?";
}
