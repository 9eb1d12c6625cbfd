/* ftmw-shim: runs one MPI rank as its child and exits with the child's
 * status, turning a death by signal into exit status 128 + signal.
 *
 * Why: MPICH 4.0's hydra proxy kills every other rank of the job when it
 * reaps a rank that was killed by a signal, even with -disable-auto-cleanup
 * (a rank that exits with a status is left alone). FTMW survives deaths, so
 * ftmwrun puts this shim between hydra and each rank on MPICH.
 * The shim ignores hydra's SIGUSR1 failure notice (the rank has its own
 * handler) and passes the usual termination signals on to the rank.
 * Usage: ftmw-shim PROG [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void forward(int sig) {
  if (child > 0)
    kill(child, sig);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ftmw-shim PROG [ARGS...]\n");
    return 2;
  }
  child = fork();
  if (child < 0) {
    perror("ftmw-shim: fork");
    return 127;
  }
  if (child == 0) {
    execvp(argv[1], argv + 1);
    fprintf(stderr, "ftmw-shim: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  signal(SIGUSR1, SIG_IGN);
  struct sigaction sa = {.sa_handler = forward};
  sigemptyset(&sa.sa_mask);
  const int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR2, SIGCONT};
  for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
    sigaction(fwd[i], &sa, NULL);
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
