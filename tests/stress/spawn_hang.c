/* Open MPI 4.1's spawn hang (docs/known-problems.md), with plain MPI.
 *
 * Each round spawns a "victim" that kills itself after a random 0-400 ms,
 * then at once spawns a "fresh" process that exits after 1 s: the victim
 * usually dies during the second spawn. Without --bounded a hang stops the
 * program for good in MPI_Comm_spawn. With --bounded every spawn runs on a
 * helper thread (MPI_THREAD_MULTIPLE) and one not done in 5 s is abandoned
 * and made again, as FTMW does; spawned processes stuck in MPI_Init are
 * then left behind, so end the run with a bounded wait.
 *
 *   mpicc.openmpi -O2 -pthread -o spawn_hang tests/stress/spawn_hang.c
 *   timeout -s KILL 300 mpirun.openmpi --enable-recovery --oversubscribe \
 *       -n 1 ./spawn_hang 80 --bounded
 */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct {
  char *exe, **argv;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
} spawn_t;

static void spawn_now(char *exe, char **argv) {
  MPI_Comm c;
  MPI_Comm_spawn(exe, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c,
                 MPI_ERRCODES_IGNORE);
}

static void *spawner(void *arg) {
  spawn_t *s = arg;
  spawn_now(s->exe, s->argv);
  pthread_mutex_lock(&s->lock);
  s->done = 1;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
  return NULL; /* an abandoned spawn_t is never freed: a test program */
}

/* Returns how many times the spawn was abandoned. */
static int spawn_bounded(char *exe, char **argv) {
  for (int abandoned = 0;; abandoned++) {
    spawn_t *s = calloc(1, sizeof(*s));
    s->exe = exe;
    s->argv = argv;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    pthread_t t;
    pthread_create(&t, NULL, spawner, s);
    pthread_detach(t);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&s->lock);
    while (!s->done && pthread_cond_timedwait(&s->cond, &s->lock, &deadline) == 0)
      ;
    int done = s->done;
    pthread_mutex_unlock(&s->lock);
    if (done)
      return abandoned;
  }
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    if (argc > 2 && strcmp(argv[1], "victim") == 0) {
      usleep((useconds_t)atoi(argv[2]));
      raise(SIGKILL);
    }
    sleep(1);
    _exit(0);
  }
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  int bounded = argc > 2 && strcmp(argv[2], "--bounded") == 0;
  if (bounded && provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "no MPI_THREAD_MULTIPLE\n");
    return 1;
  }
  srand((unsigned)getpid());
  int hangs = 0;
  for (int i = 0; i < rounds; i++) {
    char delay[16];
    snprintf(delay, sizeof(delay), "%d", rand() % 400000);
    char *victim[] = {"victim", delay, NULL};
    double t0 = now();
    int h = 0;
    if (bounded) {
      h += spawn_bounded(argv[0], victim);
      h += spawn_bounded(argv[0], MPI_ARGV_NULL);
    } else {
      spawn_now(argv[0], victim);
      spawn_now(argv[0], MPI_ARGV_NULL);
    }
    hangs += h;
    printf("round %d: victim dies after %s us; spawns took %.0f ms, %d abandoned\n",
           i, delay, (now() - t0) * 1e3, h);
    fflush(stdout);
  }
  printf("done: %d spawns abandoned in %d rounds\n", hangs, rounds);
  fflush(stdout);
  _exit(0);
}
