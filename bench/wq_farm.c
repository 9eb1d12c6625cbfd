/* The task farm of bench/tasks.c and examples/farm, on CCTools Work Queue
 * (Debian: coop-computing-tools, coop-computing-tools-dev), to compare
 * with FTMW in throughput and in kill-to-result time.
 *
 * The manager listens on 127.0.0.1 only, starts W local work_queue_worker
 * processes itself (1 core each, so each runs one task at a time), waits
 * until all W have connected and reported their resources, then starts
 * the clock and submits the N tasks at once; Work Queue dispatches them,
 * in id order (priorities). Task i is the shell command "sleep US/1e6;
 * echo i" ("echo i" for US = 0, the cheapest command that is still a real
 * task: the worker forks a /bin/sh for every task, in a fresh sandbox
 * directory). The manager checks that every id comes back exactly once,
 * printed by its own task. It prints "tasks N", "time S" (clock start to
 * last result), "tasks_per_s R", "duplicates D", "missing M" (a failed
 * task counts as missing) and exits 1 if D or M is not 0.
 * With -q DEPTH it keeps only DEPTH tasks submitted, one more as each
 * result comes in: Work Queue's manager spends time on every ready task
 * at every dispatch (seen, one worker: 45 tasks/s with 2000 queued, 150
 * with 100 left), so a long queue slows it down.
 *
 * Kill mode (-m ID -f FILE): task ID, when it starts, writes the pid of
 * the work_queue_worker running it to FILE (FILE.tmp, then mv), unless
 * FILE exists already (so the re-run is not killed again; a FILE there
 * before the run is refused). The worker forks "/bin/sh -c COMMAND" itself, so the
 * pid is the shell's $PPID; the manager checks that it is one of its
 * workers', and reports the worker killed. bench/kill_when kills that
 * worker; Work Queue sees the connection close and runs the task again on
 * another worker, and the manager prints "mark_result_mono T", the
 * CLOCK_MONOTONIC time when ID's result came out of work_queue_wait. The
 * killed worker is not restarted: the farm goes on with W-1 workers.
 * The killed worker's task lives on, orphaned, to its end; it holds the
 * worker's connection (the task inherits the socket), so Work Queue sees
 * the worker gone only when that task ends, not at the kill.
 *
 * Every worker is stopped before the manager exits, also on a timeout
 * (-T, default 300 s) or SIGINT/SIGTERM/SIGHUP; their directories (under
 * a fresh /tmp/wq_farm.XXXXXX) are removed.
 * With -L FILE, Work Queue writes its transactions log (worker
 * connections and disconnections, task states, in microseconds of
 * CLOCK_REALTIME) to FILE, and the manager prints on stderr the offset
 * from CLOCK_MONOTONIC to CLOCK_REALTIME to read it against kill_when.
 * Run: wq_farm -w W -n N -u US [-m ID -f PIDFILE] [-q DEPTH] [-p PORT] [-T S]
 *              [-L LOG] [-v] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "link.h"
#include "unlink_recursive.h"
#include "work_queue.h"

#include "bench_util.h"

/* work_queue_create() listens with link_serve(), on every interface. The
 * benchmark must stay on loopback, and the library has no option for it:
 * the build links with -Wl,--wrap=link_serve, which sends the library's
 * call here instead. */
struct link *__wrap_link_serve(int port);
struct link *__wrap_link_serve(int port) { return link_serve_address("127.0.0.1", port); }

/* The workers, for the cleanup; the signal handlers read them too. */
static pid_t *workers;
static int nworkers;
static volatile sig_atomic_t stop_sig, child_exited;
static char workdir[64];

static void on_stop(int sig) {
  /* The main loop sees the flag within a second (work_queue_wait's
   * timeout) and cleans up; a second signal does not wait for that. */
  if (stop_sig) {
    for (int i = 0; i < nworkers; i++)
      if (workers[i] > 0)
        kill(workers[i], SIGKILL);
    _exit(1);
  }
  stop_sig = sig;
}

static void on_child(int sig) {
  (void)sig;
  child_exited = 1;
}

/* Reaps the workers that have exited, telling how (a worker killed in
 * kill mode shows here, which confirms that the pid written was its). */
static void reap(int verbose) {
  child_exited = 0;
  for (int i = 0; i < nworkers; i++) {
    int st;
    if (workers[i] > 0 && waitpid(workers[i], &st, WNOHANG) == workers[i]) {
      if (WIFSIGNALED(st))
        fprintf(stderr, "wq_farm: worker %d (pid %ld) killed by signal %d\n", i,
                (long)workers[i], WTERMSIG(st));
      else if (verbose || WEXITSTATUS(st) != 0)
        fprintf(stderr, "wq_farm: worker %d (pid %ld) exited with status %d\n", i,
                (long)workers[i], WEXITSTATUS(st));
      workers[i] = -workers[i]; /* gone; keeps the pid for check_pidfile */
    }
  }
}

/* Stops the workers still running: SIGTERM, and SIGKILL for any still
 * there after 5 s. A worker takes about 2 s to act on SIGTERM (seen:
 * 2.03 s), but then kills its task and deletes its directory; SIGKILL
 * would leave the task running. */
static void stop_workers(int verbose) {
  for (int i = 0; i < nworkers; i++)
    if (workers[i] > 0)
      kill(workers[i], SIGTERM);
  double t0 = bench_now();
  for (;;) {
    reap(verbose);
    int left = 0;
    for (int i = 0; i < nworkers; i++)
      left += workers[i] > 0;
    if (left == 0)
      break;
    if (bench_now() - t0 > 5) {
      for (int i = 0; i < nworkers; i++)
        if (workers[i] > 0) {
          kill(workers[i], SIGKILL);
          waitpid(workers[i], NULL, 0);
          workers[i] = -workers[i];
        }
      break;
    }
    usleep(10000);
  }
}

/* Starts a worker: one core, so one task at a time. It exits when this
 * manager disconnects (--single-shot), and after 60 s without work or
 * without a manager anyway. If the manager is SIGKILLed, the worker's
 * own --parent-death took 4 to 8 s to notice (tried); the kernel's
 * parent-death signal (SIGTERM) stops it within about 2 s, and it kills
 * its task. */
static pid_t start_worker(int port, int verbose) {
  char portstr[16];
  snprintf(portstr, sizeof(portstr), "%d", port);
  pid_t parent = getpid(), pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
      _exit(127);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(verbose ? 2 : null, 1); /* our stdout carries the results only */
      if (!verbose)
        dup2(null, 2);
    }
    signal(SIGINT, SIG_IGN); /* ^C goes to the manager, which stops them */
    execlp("work_queue_worker", "work_queue_worker", "--single-shot", "--parent-death",
           "--cores=1", "--gpus=0", "--timeout=60", "--workdir", workdir, "127.0.0.1", portstr,
           (char *)NULL);
    fprintf(stderr, "wq_farm: exec work_queue_worker: %s\n", strerror(errno));
    _exit(127);
  }
  return pid;
}

/* Tells (stderr) which worker the pid file names: it must be one of ours. */
static int check_pidfile(const char *file) {
  FILE *f = fopen(file, "r");
  long pid = 0;
  if (f == NULL || fscanf(f, "%ld", &pid) != 1) {
    if (f)
      fclose(f);
    fprintf(stderr, "wq_farm: no pid in %s\n", file);
    return 0;
  }
  fclose(f);
  for (int i = 0; i < nworkers; i++)
    if (workers[i] == pid || -workers[i] == pid) {
      fprintf(stderr, "wq_farm: %s names worker %d (pid %ld)\n", file, i, pid);
      return 1;
    }
  fprintf(stderr, "wq_farm: %s holds pid %ld, not a worker's\n", file, pid);
  return 0;
}

/* Submits task i: built whole here, the sleep, then the id; the marked
 * task first writes its worker's pid, the shell's parent. */
static int submit(struct work_queue *q, long i, long N, long US, long mark,
                  const char *pidpath) {
  char cmd[9000], tag[24];
  int len = 0;
  if (i == mark)
    len += snprintf(cmd + len, sizeof(cmd) - len,
                    "[ -e '%s' ] || { echo $PPID > '%s.tmp' && mv -f '%s.tmp' '%s'; }; ", pidpath,
                    pidpath, pidpath, pidpath);
  if (US > 0)
    len += snprintf(cmd + len, sizeof(cmd) - len, "sleep %ld.%06ld; ", US / 1000000,
                    US % 1000000);
  snprintf(cmd + len, sizeof(cmd) - len, "echo %ld", i);
  snprintf(tag, sizeof(tag), "%ld", i);
  struct work_queue_task *t = work_queue_task_create(cmd);
  if (t == NULL) {
    fprintf(stderr, "wq_farm: cannot create task %ld\n", i);
    return 0;
  }
  work_queue_task_specify_tag(t, tag);
  work_queue_task_specify_cores(t, 1);
  /* Among tasks of equal priority Work Queue dispatched the last
   * submitted first (seen in its log). The farms compared hand tasks out
   * in id order, and task ID must start as early in the run as there, so
   * the earlier the id, the higher the priority. A task lost with its
   * worker keeps its priority: it goes back ahead of the later ones. */
  work_queue_task_specify_priority(t, (double)(N - i));
  work_queue_submit(q, t);
  return 1;
}

static void usage(void) {
  fprintf(stderr, "Usage: wq_farm -w W -n N -u US [-m ID -f PIDFILE] [-q DEPTH] [-p PORT] [-T S]\n"
                  "               [-L LOG] [-v]\n"
                  "  -w W        workers started (work_queue_worker, 1 core each)\n"
                  "  -n N        tasks\n"
                  "  -u US       each task sleeps US microseconds (0: empty task)\n"
                  "  -m ID -f F  task ID writes its worker's pid to F (kill benchmark)\n"
                  "  -q DEPTH    keep DEPTH tasks submitted (default 0: all N at once)\n"
                  "  -p PORT     manager port on 127.0.0.1 (default 0: any free one)\n"
                  "  -T S        overall timeout in seconds (default 300)\n"
                  "  -L LOG      Work Queue's transactions log to LOG\n"
                  "  -v          workers' messages on stderr\n");
}

int main(int argc, char **argv) {
  long W = 0, N = -1, US = -1, mark = -1, port = 0, depth = 0;
  double limit = 300;
  const char *pidfile = NULL, *txlog = NULL;
  int verbose = 0, opt;
  char *end;
  while ((opt = getopt(argc, argv, "w:n:u:m:f:q:p:T:L:v")) != -1) {
    switch (opt) {
    case 'w': W = strtol(optarg, &end, 10); break;
    case 'n': N = strtol(optarg, &end, 10); break;
    case 'u': US = strtol(optarg, &end, 10); break;
    case 'm': mark = strtol(optarg, &end, 10); break;
    case 'q': depth = strtol(optarg, &end, 10); break;
    case 'p': port = strtol(optarg, &end, 10); break;
    case 'T': limit = strtod(optarg, &end); break;
    case 'f': pidfile = optarg; end = ""; break;
    case 'L': txlog = optarg; end = ""; break;
    case 'v': verbose = 1; end = ""; break;
    default: usage(); return 2;
    }
    if (*end) {
      fprintf(stderr, "wq_farm: -%c wants a number, not '%s'\n", opt, optarg);
      return 2;
    }
  }
  if (optind != argc || W < 1 || W > 1000 || N < 1 || N > 10000000 || US < 0 || depth < 0 ||
      limit <= 0 || port < 0 || port > 65535 || (mark >= 0) != (pidfile != NULL) || mark >= N) {
    usage();
    return 2;
  }
  /* The task runs in the worker's sandbox directory: it needs the pid
   * file's absolute path, single-quoted in its command. */
  char pidpath[4096] = "";
  if (pidfile) {
    char cwd[2048];
    int len = pidfile[0] == '/' ? snprintf(pidpath, sizeof(pidpath), "%s", pidfile)
              : getcwd(cwd, sizeof(cwd))
                  ? snprintf(pidpath, sizeof(pidpath), "%s/%s", cwd, pidfile)
                  : -1;
    if (len < 0 || len >= (int)sizeof(pidpath) - 8 || strchr(pidpath, '\'')) {
      fprintf(stderr, "wq_farm: unusable pid file path '%s'\n", pidfile);
      return 2;
    }
    /* A file left from an earlier run would have the killer kill whatever
     * process has its pid now, and keep task ID from writing its own. */
    if (access(pidpath, F_OK) == 0) {
      fprintf(stderr, "wq_farm: %s exists already; remove it first\n", pidpath);
      return 2;
    }
  }
  double t_start = bench_now();

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop; /* no SA_RESTART: the wait returns early */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sa.sa_handler = on_child; /* restarts: the library's calls see no EINTR */
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);

  strcpy(workdir, "/tmp/wq_farm.XXXXXX");
  if (mkdtemp(workdir) == NULL) {
    fprintf(stderr, "wq_farm: mkdtemp: %s\n", strerror(errno));
    return 1;
  }
  struct work_queue *q = work_queue_create((int)port);
  if (q == NULL) {
    fprintf(stderr, "wq_farm: cannot listen on 127.0.0.1:%ld: %s\n", port, strerror(errno));
    rmdir(workdir);
    return 1;
  }
  port = work_queue_port(q);
  fprintf(stderr, "wq_farm: manager on 127.0.0.1:%ld\n", port);
  if (txlog) {
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    double mono = bench_now();
    if (!work_queue_specify_transactions_log(q, txlog))
      fprintf(stderr, "wq_farm: cannot write %s\n", txlog);
    fprintf(stderr, "wq_farm: realtime_minus_mono %.6f\n", rt.tv_sec + rt.tv_nsec / 1e9 - mono);
  }

  int rc = 1;
  long *seen = calloc((size_t)N, sizeof(long));
  workers = calloc((size_t)W, sizeof(pid_t));
  if (seen == NULL || workers == NULL) {
    fprintf(stderr, "wq_farm: out of memory\n");
    goto out;
  }
  for (nworkers = 0; nworkers < W; nworkers++)
    if ((workers[nworkers] = start_worker((int)port, verbose)) < 0) {
      fprintf(stderr, "wq_farm: fork: %s\n", strerror(errno));
      goto out;
    }

  /* The clock starts once every worker is connected and has reported its
   * resources (workers_init counts those that have not yet). The wait
   * accepts the connections as it polls. */
  struct work_queue_stats st;
  long restarts = 0;
  for (;;) {
    work_queue_get_stats(q, &st);
    if (st.workers_connected >= W && st.workers_init == 0)
      break;
    if (stop_sig || bench_now() - t_start > limit) {
      fprintf(stderr, "wq_farm: %d of %ld workers connected, giving up\n", st.workers_connected,
              W);
      goto out;
    }
    /* A worker quits for good on its first disconnection (--single-shot).
     * In one of our first runs with 16 workers on a loaded machine one
     * exited before the start (status 0; cause not found, not seen
     * again). Such a worker is replaced, W times at most. */
    if (child_exited) {
      reap(1);
      for (int i = 0; i < nworkers; i++)
        if (workers[i] < 0) {
          if (restarts++ == W) {
            fprintf(stderr, "wq_farm: workers keep exiting before the start\n");
            goto out;
          }
          fprintf(stderr, "wq_farm: worker %d exited before the start, started again\n", i);
          if ((workers[i] = start_worker((int)port, verbose)) < 0) {
            fprintf(stderr, "wq_farm: fork: %s\n", strerror(errno));
            goto out;
          }
        }
    }
    work_queue_wait(q, 1);
  }

  double t0 = bench_now(), t_last = t0, mark_mono = 0;
  long next = 0;
  for (; next < N && (depth == 0 || next < depth); next++)
    if (!submit(q, next, N, US, mark, pidpath))
      goto out;

  long done = 0, bad = 0;
  while (done < N) {
    if (stop_sig) {
      fprintf(stderr, "wq_farm: signal %d, stopping\n", (int)stop_sig);
      goto out;
    }
    if (bench_now() - t_start > limit) {
      fprintf(stderr, "wq_farm: timeout (%.0f s), %ld of %ld tasks done\n", limit, done, N);
      goto out;
    }
    if (child_exited)
      reap(verbose);
    struct work_queue_task *t = work_queue_wait(q, 1);
    if (t == NULL)
      continue;
    double now = bench_now();
    long want = strtol(t->tag, NULL, 10), got = -1;
    if (want == mark) {
      mark_mono = now;
      fprintf(stderr, "wq_farm: task %ld done after %d tries, last on %s\n", want, t->try_count,
              t->host ? t->host : "?");
    }
    if (t->result == WORK_QUEUE_RESULT_SUCCESS && t->return_status == 0 && t->output) {
      got = strtol(t->output, &end, 10);
      if (end == t->output || (*end && strcmp(end, "\n") != 0) || got < 0 || got >= N)
        got = -1;
    }
    if (got >= 0 && got != want)
      fprintf(stderr, "wq_farm: task %ld printed %ld\n", want, got);
    if (got >= 0)
      seen[got]++;
    else if (bad++ < 5)
      fprintf(stderr, "wq_farm: task %ld failed: %s, status %d, output '%s'\n", want,
              work_queue_result_str(t->result), t->return_status, t->output ? t->output : "");
    work_queue_task_delete(t);
    done++;
    t_last = now;
    if (next < N && !submit(q, next++, N, US, mark, pidpath))
      goto out;
  }

  long dup = 0, missing = 0;
  for (long i = 0; i < N; i++) {
    dup += seen[i] > 1 ? seen[i] - 1 : 0;
    missing += seen[i] == 0;
  }
  double secs = t_last - t0;
  printf("tasks %ld\n", N);
  printf("time %.6f\n", secs);
  printf("tasks_per_s %.1f\n", secs > 0 ? N / secs : 0);
  printf("duplicates %ld\n", dup);
  printf("missing %ld\n", missing);
  if (mark >= 0) {
    printf("mark_result_mono %.6f\n", mark_mono);
    check_pidfile(pidpath);
  }
  fflush(stdout);
  rc = dup || missing ? 1 : 0;

out:
  /* Asked first, the workers leave on their own (and delete their
   * directories); stop_workers then signals only the ones still there. */
  if (nworkers > 0) {
    work_queue_shut_down_workers(q, 0);
    work_queue_delete(q);
    stop_workers(verbose);
  } else {
    work_queue_delete(q);
  }
  unlink_recursive(workdir);
  free(seen);
  free(workers);
  return rc;
}
