/* The local process oracle (see localproc.h). */
#include "localproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* The state letter of a task's stat line: the field after the command,
 * which is in parentheses and may itself hold spaces or ')'. 0 if none. */
static char stat_state(const char *line) {
  const char *close = strrchr(line, ')');
  return close && close[1] == ' ' && close[2] ? close[2] : 0;
}

/* PROC/PID/task/TID/NAME into path; -1 if it does not fit. */
static int task_file(char *path, size_t cap, const char *proc, int pid,
                     const char *tid, const char *name) {
  int n = snprintf(path, cap, "%s/%d/task/%.32s/%s", proc, pid, tid, name);
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

int ftmw_proc_look(const char *proc, int pid) {
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
  int listed = 0, seen = 0, ours = 0, stopped = 0, live = 0, busy = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    listed++;
    char buf[512];
    if (task_file(path, sizeof(path), proc, pid, e->d_name, "stat") != 0 ||
        read_small(path, buf, sizeof(buf)) <= 0)
      continue; /* the thread ended meanwhile */
    seen++;
    char state = stat_state(buf);
    /* Z, X: a thread that ended (the leader too, after pthread_exit);
     * R: running or runnable; D: disk wait; T, t: stopped, traced; the
     * others wait for something. */
    live += state != 'Z' && state != 'X' && state != 'x';
    busy |= state == 'R' || state == 'D';
    stopped |= state == 'T' || state == 't';
    if (task_file(path, sizeof(path), proc, pid, e->d_name, "comm") == 0 &&
        read_small(path, buf, sizeof(buf)) > 0) {
      buf[strcspn(buf, "\n")] = '\0';
      ours |= strcmp(buf, FTMW_IO_THREAD_NAME) == 0;
    }
  }
  closedir(d);
  if (listed == 0)
    return FTMW_PROC_GONE;
  if (seen == 0)
    return FTMW_PROC_UNKNOWN; /* not ours to read */
  if (live == 0)
    return FTMW_PROC_GONE;
  if (!ours)
    return FTMW_PROC_UNKNOWN;
  if (stopped)
    return FTMW_PROC_STOPPED;
  return busy ? FTMW_PROC_STARVED : FTMW_PROC_ASLEEP;
}

void ftmw_proc_kernel_id(uint8_t out[FTMW_KERNEL_ID_SIZE]) {
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

int ftmw_proc_same_kernel(const uint8_t k[FTMW_KERNEL_ID_SIZE],
                          const uint8_t mine[FTMW_KERNEL_ID_SIZE]) {
  static const uint8_t zero[FTMW_KERNEL_ID_SIZE];
  return memcmp(mine, zero, FTMW_KERNEL_ID_SIZE) != 0 &&
         memcmp(k, mine, FTMW_KERNEL_ID_SIZE) == 0;
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
  static const char *const names[] = {"unknown", "gone", "stopped", "asleep",
                                      "starved"};
  return verdict >= 0 && verdict <= FTMW_PROC_STARVED ? names[verdict] : "?";
}
