/* ftmw-shim: runs one MPI process (a rank, or a process spawned in spawn
 * mode) as its child and exits with the child's status, turning a death
 * by signal into exit status 128 + signal. ftmwrun puts it under every
 * process a master waits for, on both MPIs.
 *
 * Why: MPICH 4.0's hydra proxy kills every other rank of the job when it
 * reaps a rank that was killed by a signal, even with -disable-auto-cleanup
 * (a rank that exits with a status is left alone). FTMW survives deaths, so
 * ftmwrun puts this shim between hydra and each rank on MPICH.
 * The shim ignores hydra's SIGUSR1 failure notice (the rank has its own
 * handler) and passes the usual termination signals on to the rank.
 *
 * Under Open MPI it also turns ftmwrun's stop into the rank's SIGTERM:
 * a SIGTERM to mpirun reaches the ranks only odls_base_sigkill_timeout
 * seconds later, followed by SIGKILL within milliseconds (Open MPI 4.1:
 * SIGCONT, the wait, SIGTERM, SIGKILL), which leaves a master no time to
 * end; mpirun passes FTMW_STOP_SIGNAL on at once to every process of the
 * job (ftmwrun: ess_base_forward_signals), the shim gives its rank
 * SIGTERM, and FTMW's grace applies (FT_TERM_GRACE_MS). The rank itself
 * ignores FTMW_STOP_SIGNAL, which may reach its process group too.
 *
 * It also tells the masters of a rank that dies before it has connected to
 * them (in MPI_Init, or in ft_init: there is no connection yet whose loss
 * they could see). With FTMW_DEATH_DIR set (ftmwrun sets it, in the
 * directory the primary writes its status to, which every host shares),
 * the shim writes there, when its rank ends, a file saying how it ended,
 * named FTMW_DEATH_NAME (a spawned process: the master that spawns it
 * under the shim names it) or after the rank (rank.N, from
 * OMPI_COMM_WORLD_RANK or PMI_RANK); a
 * master waiting for that rank to connect reads it (launch.c) and fails
 * the rank at once, instead of at the 60 s bound. A rank already
 * connected is judged by its connection; the file is then ignored.
 * Usage: ftmw-shim PROG [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FTMW_STOP_SIGNAL /* the build's, shared with ftmwrun */
#error "FTMW_STOP_SIGNAL: set by CMakeLists.txt"
#endif

static volatile pid_t child;

static void forward(int sig) {
  if (child > 0)
    kill(child, sig == FTMW_STOP_SIGNAL ? SIGTERM : sig);
}

/* The death notice: written whole under a temporary name, then renamed,
 * so that a master never reads half of one. Best effort: a notice that
 * cannot be written leaves the 60 s bound. */
static void tell_death(int status) {
  const char *dir = getenv("FTMW_DEATH_DIR");
  const char *name = getenv("FTMW_DEATH_NAME"), *rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank)
    rank = getenv("PMI_RANK");
  if (!dir || !*dir || !((name && *name) || (rank && *rank)))
    return;
  char path[4096], tmp[4200];
  int n = name && *name ? snprintf(path, sizeof(path), "%s/%s", dir, name)
                        : snprintf(path, sizeof(path), "%s/rank.%s", dir, rank);
  if (n >= (int)sizeof(path) ||
      snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp))
    return;
  FILE *f = fopen(tmp, "w");
  if (!f)
    return;
  if (WIFSIGNALED(status))
    fprintf(f, "pid %d killed by signal %d (%s)\n", (int)child,
            WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    fprintf(f, "pid %d exited with status %d\n", (int)child, WEXITSTATUS(status));
  /* The launcher started this shim, not its child: a master that respawns
   * waits for this pid to be gone too (restore.c, wait_reaped). */
  fprintf(f, "shim %d\n", (int)getpid());
  if (fclose(f) != 0 || rename(tmp, path) != 0)
    unlink(tmp);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ftmw-shim PROG [ARGS...]\n");
    return 2;
  }
  /* The handlers are in place before the child exists, and the signals
   * held until it does: none sent meanwhile is lost, or kills the shim
   * and leaves the child behind. The child gets back the defaults. */
  const int fwd[] = {SIGTERM, SIGINT,  SIGHUP,          SIGQUIT,
                     SIGUSR2, SIGCONT, FTMW_STOP_SIGNAL};
  const size_t nfwd = sizeof(fwd) / sizeof(fwd[0]);
  sigset_t hold, was;
  sigemptyset(&hold);
  for (size_t i = 0; i < nfwd; i++)
    sigaddset(&hold, fwd[i]);
  sigaddset(&hold, SIGUSR1);
  sigprocmask(SIG_BLOCK, &hold, &was);
  struct sigaction sa = {.sa_handler = forward};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < nfwd; i++)
    sigaction(fwd[i], &sa, NULL);
  signal(SIGUSR1, SIG_IGN);
  child = fork();
  if (child < 0) {
    perror("ftmw-shim: fork");
    return 127;
  }
  if (child == 0) {
    for (size_t i = 0; i < nfwd; i++)
      signal(fwd[i], fwd[i] == FTMW_STOP_SIGNAL ? SIG_IGN : SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
    sigprocmask(SIG_SETMASK, &was, NULL);
    execvp(argv[1], argv + 1);
    fprintf(stderr, "ftmw-shim: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  sigprocmask(SIG_SETMASK, &was, NULL);
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  tell_death(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
