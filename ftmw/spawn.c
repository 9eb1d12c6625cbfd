/* Spawning over MPI (see spawn.h). */

#include "ftmw_impl.h"
#include "peer.h"
#include "spawn.h"
#include "death.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open MPI 4.1's mpirun can lose a new child's PMIx_Init when the spawn
 * races with its handling of another child's death: the child then waits
 * in MPI_Init, and MPI_Comm_spawn in PMIx_Lookup, both for ever (see
 * docs/known-problems.md). No death can be ruled out during a spawn, so
 * every spawn is bounded: MPI_Comm_spawn_multiple runs on a helper thread
 * (MPI_THREAD_MULTIPLE), and a spawn not done by its deadline is abandoned
 * (the thread is left blocked in MPI) and made again. Its processes are
 * told the deadline in their environment: one that has not received its
 * set-up record by then exits (setup_watchdog), so none is left waiting in
 * MPI_Init to keep mpirun from ending. */
_Static_assert(sizeof(((ftmw_peer *)0)->notice) == FTMW_DEATH_NAME_MAX,
               "a peer holds a notice name whole");
enum { SPAWN_OK = 0, SPAWN_ERROR = -1, SPAWN_ABANDONED = 1 };

static char exe_path[FTMW_PATH_MAX];
static char worker_path[FTMW_PATH_MAX]; /* FT_WORKER_PROGRAM, resolved */
static char **spawn_args;
static MPI_Comm replica_comm[FTMW_MAX_MASTERS]; /* to each replica */
static int thread_multiple;   /* a spawn may run on a helper thread */
static int spawns_abandoned;  /* atomic: a helper thread may still be
                                 inside MPI */

int ftmw_spawn_prepare(int *argc, char ***argv, int multiple) {
  thread_multiple = multiple;
  ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
  if (n <= 0) {
    ftmw_log("cannot find this program's executable");
    return -1;
  }
  exe_path[n] = '\0';
  spawn_args = (argc && argv && *argc > 1) ? *argv + 1 : MPI_ARGV_NULL;
  return 0;
}

int ftmw_spawn_wait_ms(ftmw_ctx *cx, int n) {
  int64_t t = cx->job.cfg.spawn_timeout_ms;
  return (int)(t + t * n / 16);
}

typedef struct {
  int n;
  char **cmds, ***argvs;
  char **shim_argv; /* program and its arguments, under ftmw-shim */
  char (*notices)[FTMW_DEATH_NAME_MAX]; /* each process's, "" if none */
  int *one, *errcodes;
  MPI_Info *infos;
  MPI_Comm inter;
  int mrc;
  uv_mutex_t lock;
  uv_cond_t cond;
  int done, abandoned; /* under lock */
} spawn_call;

static void spawn_call_free(spawn_call *c) {
  if (c == NULL)
    return;
  for (int i = 0; c->infos && i < c->n; i++)
    if (c->infos[i] != MPI_INFO_NULL)
      PMPI_Info_free(&c->infos[i]);
  free(c->cmds);
  free(c->argvs);
  free(c->shim_argv);
  free(c->notices);
  free(c->one);
  free(c->errcodes);
  free(c->infos);
  free(c);
}

/* The program a process of role runs: this one, or for a worker of an
 * MPMD job (a master program and a worker program, as with mpiexec's
 * "prog1 : prog2"), FT_WORKER_PROGRAM. NULL, after saying why, if that is
 * not an executable file. */
static const char *program_of(int role) {
  const char *w = getenv("FT_WORKER_PROGRAM");
  if (role != FTMW_ROLE_WORKER || w == NULL || *w == '\0')
    return exe_path;
  if (worker_path[0] == '\0') {
    char resolved[PATH_MAX];
    if (realpath(w, resolved) == NULL || access(resolved, X_OK) != 0 ||
        strlen(resolved) >= sizeof(worker_path)) {
      ftmw_log("FT_WORKER_PROGRAM=\"%s\" is invalid: not an executable file",
               w);
      return NULL;
    }
    strcpy(worker_path, resolved);
  }
  return worker_path;
}

/* ftmw-shim (FTMW_SHIM, set by ftmwrun with FTMW_DEATH_DIR), to run each
 * spawned process under: it writes a notice when its process ends, which
 * lets a master tell at once a process that died before it connected
 * (launch.c). NULL without it: the process is then found only at the
 * FTMW_LAUNCH_WAIT_MS bound. */
static const char *shim_of(void) {
  const char *shim = getenv("FTMW_SHIM"), *dir = getenv("FTMW_DEATH_DIR");
  if (!shim || !*shim || !dir || !*dir)
    return NULL;
  static int said; /* atomic: spawns run on more than one thread */
  if (access(shim, X_OK) != 0) {
    if (__atomic_fetch_add(&said, 1, __ATOMIC_RELAXED) == 0)
      ftmw_log("FTMW_SHIM=\"%s\" is not executable: a process that dies "
               "before it connects is found only after %d s", shim,
               FTMW_LAUNCH_WAIT_MS / 1000);
    return NULL;
  }
  return shim;
}

/* shim's arguments: program, then this program's arguments. */
static char **shim_args(const char *program) {
  int n = 0;
  while (spawn_args != MPI_ARGV_NULL && spawn_args[n])
    n++;
  char **v = malloc((size_t)(n + 2) * sizeof(*v));
  if (v == NULL)
    return NULL;
  v[0] = (char *)program;
  for (int i = 0; i < n; i++)
    v[i + 1] = spawn_args[i];
  v[n + 1] = NULL;
  return v;
}

/* The arguments of one MPI_Comm_spawn_multiple: n copies of program,
 * process i for incarnation epochs[i] of peers[i], with this program's
 * arguments, on hostfile entry hosts[i] (-1: anywhere), each given the
 * environment env ("NAME=VALUE" lines) and, under the shim, a new name
 * for its notice (c->notices[i]). */
static spawn_call *spawn_call_new(ftmw_ctx *cx, const char *program,
                                  ftmw_peer **peers, const uint32_t *epochs,
                                  const int *hosts, int n, const char *env) {
  spawn_call *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->n = n;
  c->cmds = malloc((size_t)n * sizeof(*c->cmds));
  c->argvs = malloc((size_t)n * sizeof(*c->argvs));
  c->one = malloc((size_t)n * sizeof(*c->one));
  c->errcodes = malloc((size_t)n * sizeof(*c->errcodes));
  c->infos = malloc((size_t)n * sizeof(*c->infos));
  c->notices = calloc((size_t)n, sizeof(*c->notices));
  const char *shim = shim_of();
  if (shim)
    c->shim_argv = shim_args(program);
  if (!c->cmds || !c->argvs || !c->one || !c->errcodes || !c->infos ||
      !c->notices || (shim && !c->shim_argv)) {
    free(c->infos);
    c->infos = NULL;
    spawn_call_free(c);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    char penv[256];
    if (shim) {
      ftmw_death_name_spawn(cx, peers[i]->kind, peers[i]->id, epochs[i],
                            c->notices[i], sizeof(c->notices[i]));
      snprintf(penv, sizeof(penv), "%s\nFTMW_DEATH_NAME=%s", env, c->notices[i]);
      c->cmds[i] = (char *)shim;
      c->argvs[i] = c->shim_argv;
    } else {
      snprintf(penv, sizeof(penv), "%s", env);
      c->cmds[i] = (char *)program;
      c->argvs[i] = spawn_args;
    }
    c->one[i] = 1;
    c->errcodes[i] = MPI_SUCCESS;
    PMPI_Info_create(&c->infos[i]);
    PMPI_Info_set(c->infos[i], "env", penv); /* Open MPI's key */
    if (hosts[i] >= 0)
      PMPI_Info_set(c->infos[i], "host", cx->job.hosts.v[hosts[i]].name);
  }
  return c;
}

int ftmw_spawn_wait_flag_locked(uv_cond_t *cond, uv_mutex_t *lock,
                                const int *flag, uint64_t deadline) {
  while (!*flag) {
    uint64_t now = uv_hrtime();
    if (now >= deadline)
      break;
    uv_cond_timedwait(cond, lock, deadline - now);
  }
  return *flag;
}

static void spawn_call_run(spawn_call *c) {
  c->mrc = PMPI_Comm_spawn_multiple(c->n, c->cmds, c->argvs, c->one, c->infos,
                                   0, MPI_COMM_SELF, &c->inter, c->errcodes);
}

static void spawn_thread(void *arg) {
  spawn_call *c = arg;
  spawn_call_run(c);
  uv_mutex_lock(&c->lock);
  c->done = 1;
  int abandoned = c->abandoned;
  uv_cond_signal(&c->cond);
  uv_mutex_unlock(&c->lock);
  if (abandoned) /* its processes, never sent a set-up record, exit */
    spawn_call_free(c);
}

/* Makes the call c, waiting for it at most wait_ms. SPAWN_ABANDONED hands
 * c over to the helper thread, which frees it when MPI returns. */
static int spawn_call_bounded(spawn_call *c, int wait_ms) {
  if (!thread_multiple) {
    spawn_call_run(c);
    return SPAWN_OK;
  }
  uv_thread_t tid;
  int started = 0;
  if (uv_mutex_init(&c->lock) == 0) {
    if (uv_cond_init(&c->cond) == 0) {
      started = uv_thread_create(&tid, spawn_thread, c) == 0;
      if (!started)
        uv_cond_destroy(&c->cond);
    }
    if (!started)
      uv_mutex_destroy(&c->lock);
  }
  if (!started) {
    ftmw_log("cannot start a thread to spawn on");
    return SPAWN_ERROR;
  }
  uint64_t deadline = uv_hrtime() + (uint64_t)wait_ms * 1000000u;
  uv_mutex_lock(&c->lock);
  int done =
      ftmw_spawn_wait_flag_locked(&c->cond, &c->lock, &c->done, deadline);
  c->abandoned = !done;
  uv_mutex_unlock(&c->lock);
  if (!done) {
    __atomic_store_n(&spawns_abandoned, 1, __ATOMIC_RELAXED);
    return SPAWN_ABANDONED;
  }
  uv_thread_join(&tid);
  uv_cond_destroy(&c->cond);
  uv_mutex_destroy(&c->lock);
  return SPAWN_OK;
}

/* Spawns n processes, process i for peers[i] (workers, or with role
 * FTMW_ROLE_MASTER replicas) on hostfile entry hosts[i] (-1: anywhere), in
 * one MPI_Comm_spawn_multiple, and sends each its set-up record. One call
 * for all the workers at launch: no worker can start, and so die, while
 * another is being spawned, and the launch takes one spawn's time instead
 * of n. A replica's intercommunicator goes to *inter_out (n == 1).
 * Returns SPAWN_OK, SPAWN_ERROR, or SPAWN_ABANDONED (see above). */
static int spawn_peers(ftmw_ctx *cx, ftmw_peer **peers, const uint32_t *epochs,
                       const int *hosts, int n, int role, MPI_Comm *inter_out) {
  int wait_ms = ftmw_spawn_wait_ms(cx, n);
  char env[96];
  snprintf(env, sizeof(env), FTMW_SPAWN_WAIT_ENV "=%d%s", wait_ms,
           role == FTMW_ROLE_WORKER && ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL)
               ? "\n" FTMW_SPAWN_STALL_ENV "=1" : "");
  const char *program = program_of(role);
  if (program == NULL)
    return SPAWN_ERROR;
  spawn_call *c = spawn_call_new(cx, program, peers, epochs, hosts, n, env);
  if (c == NULL) {
    ftmw_log("out of memory spawning %d processes", n);
    return SPAWN_ERROR;
  }
  /* Whoever waits for an incarnation reads the notice of its last spawn
   * (launch.c, and watch below). */
  uv_mutex_lock(&cx->st.lock);
  for (int i = 0; i < n; i++)
    if (peers[i]->epoch == epochs[i])
      memcpy(peers[i]->notice, c->notices[i], sizeof(peers[i]->notice));
  uv_mutex_unlock(&cx->st.lock);
  uint64_t t0 = uv_hrtime();
  int rc = spawn_call_bounded(c, wait_ms);
  double ms = (uv_hrtime() - t0) / 1e6;
  if (rc == SPAWN_ABANDONED) {
    ftmw_log("a spawn of %d %s%s did not complete in %d ms; abandoned "
             "(FT_SPAWN_TIMEOUT_MS)", n, ftmw_role_name(role), n > 1 ? "s" : "",
             wait_ms);
    ftmw_trace("spawn_abandoned", "\"%s\":%d,\"processes\":%d,\"ms\":%.3f",
               ftmw_role_name(role), peers[0]->id, n, ms);
    return rc;
  }
  for (int i = 0; i < n && rc == SPAWN_OK; i++)
    if (c->mrc != MPI_SUCCESS || c->errcodes[i] != MPI_SUCCESS) {
      char msg[MPI_MAX_ERROR_STRING];
      int len = 0;
      PMPI_Error_string(c->mrc != MPI_SUCCESS ? c->mrc : c->errcodes[i], msg, &len);
      ftmw_log("cannot spawn %s %d%s%s: %s", ftmw_role_name(role), peers[i]->id,
               hosts[i] >= 0 ? " on " : "",
               hosts[i] >= 0 ? cx->job.hosts.v[hosts[i]].name : "", msg);
      rc = SPAWN_ERROR;
    }
  for (int i = 0; i < n && rc == SPAWN_OK; i++) {
    ftmw_setup s;
    ftmw_setup_fill(cx, &s, role, peers[i]->id, epochs[i]);
    if (PMPI_Send(&s, sizeof(s), MPI_BYTE, i, FTMW_SETUP_TAG, c->inter) !=
        MPI_SUCCESS)
      rc = SPAWN_ERROR;
    ftmw_trace(
        "spawned", "\"%s\":%d,\"peer_epoch\":%u,\"on\":\"%s\",\"ms\":%.3f",
        ftmw_role_name(role), peers[i]->id, epochs[i],
        hosts[i] >= 0 ? cx->job.hosts.v[hosts[i]].name : cx->job.host, ms);
  }
  /* A worker's intercommunicator is never used again, and freeing or
   * disconnecting it would involve the children: it is left alone. */
  if (inter_out && rc == SPAWN_OK)
    *inter_out = c->inter;
  spawn_call_free(c);
  return rc;
}

/* spawn_peers for the application's thread, which alone changes the
 * peers' incarnations: of their current ones. */
static int spawn_peers_current(ftmw_ctx *cx, ftmw_peer **peers,
                               const int *hosts, int n, int role,
                               MPI_Comm *inter_out) {
  uint32_t *epochs = malloc((size_t)n * sizeof(*epochs));
  if (epochs == NULL) {
    ftmw_log("out of memory spawning %d processes", n);
    return SPAWN_ERROR;
  }
  uv_mutex_lock(&cx->st.lock);
  for (int i = 0; i < n; i++)
    epochs[i] = peers[i]->epoch;
  uv_mutex_unlock(&cx->st.lock);
  int rc = spawn_peers(cx, peers, epochs, hosts, n, role, inter_out);
  free(epochs);
  return rc;
}

/* spawn_peers_current, made again while it is abandoned, up to
 * FTMW_SPAWN_ATTEMPTS times (the launch: nothing else would start these
 * processes). */
static int spawn_peers_retried(ftmw_ctx *cx, ftmw_peer **peers,
                               const int *hosts, int n, int role,
                               MPI_Comm *inter_out) {
  int rc = SPAWN_ABANDONED;
  for (int a = 0; a < FTMW_SPAWN_ATTEMPTS && rc == SPAWN_ABANDONED; a++)
    rc = spawn_peers_current(cx, peers, hosts, n, role, inter_out);
  if (rc == SPAWN_ABANDONED)
    ftmw_log("cannot start the job: %d spawns of the %s%s abandoned",
             FTMW_SPAWN_ATTEMPTS, ftmw_role_name(role), n > 1 ? "s" : "");
  return rc;
}

int ftmw_spawn_recv_bounded(void *buf, int bytes, MPI_Comm comm, int wait_ms) {
  MPI_Request req;
  if (PMPI_Irecv(buf, bytes, MPI_BYTE, 0, FTMW_SETUP_TAG, comm, &req) !=
      MPI_SUCCESS)
    return -1;
  uint64_t deadline = ftmw_now_ms() + (uint64_t)wait_ms;
  for (;;) {
    int done = 0;
    if (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return -1;
    if (done)
      return 0;
    if (ftmw_now_ms() >= deadline) {
      PMPI_Cancel(&req);
      PMPI_Request_free(&req);
      return -1;
    }
    uv_sleep(1);
  }
}

int ftmw_spawn_place_workers(ftmw_ctx *cx) {
  cx->placed_host = calloc((size_t)cx->job.W + 1, sizeof(int));
  if (cx->placed_host == NULL)
    return -1;
  for (int r = 1; r <= cx->job.W; r++)
    cx->placed_host[r] =
        cx->job.hosts.n ? ftmw_hosts_place(&cx->job.hosts, r - 1) : -1;
  return 0;
}

int ftmw_spawn_host_of(ftmw_ctx *cx, int r) { return cx->placed_host[r]; }

/* The replicas go on the hosts after the workers'. */
int ftmw_spawn_replicas(ftmw_ctx *cx, ftmw_addr *at) {
  for (int k = 1; k <= cx->job.M; k++) {
    ftmw_addr a;
    int host = cx->job.hosts.n
                   ? ftmw_hosts_place(&cx->job.hosts, cx->job.W + k - 1)
                   : -1;
    ftmw_peer *p = &cx->st.masters[k];
    uv_mutex_lock(&cx->st.lock); /* the listener runs */
    ftmw_peer_set_locked(cx, p, FTMW_PEER_JOINING, "spawning");
    uv_mutex_unlock(&cx->st.lock);
    if (spawn_peers_retried(cx, &p, &host, 1, FTMW_ROLE_MASTER,
                            &replica_comm[k]) != 0)
      return -1;
    if (ftmw_spawn_recv_bounded(&a, sizeof(a), replica_comm[k],
                                ftmw_spawn_wait_ms(cx, 1)) != 0) {
      ftmw_log("master replica %d died starting (no address in %d ms); the job "
               "goes on without it",
               k, ftmw_spawn_wait_ms(cx, 1));
      uv_mutex_lock(&cx->st.lock);
      ftmw_peer_failed_locked(cx, p, 1, "died starting");
      uv_mutex_unlock(&cx->st.lock);
      at[k].port = 0;
      continue;
    }
    if (a.port <= 0) {
      ftmw_log("master replica %d could not start listening", k);
      return -1;
    }
    at[k] = ftmw_addr_ended(a);
  }
  for (int k = 1; k <= cx->job.M; k++) {
    if (ftmw_peer_is_failed(&cx->st.masters[k]))
      continue;
    ftmw_setup s;
    ftmw_setup_fill(cx, &s, FTMW_ROLE_MASTER, k, 0);
    if (PMPI_Send(&s, sizeof(s), MPI_BYTE, 0, FTMW_SETUP_TAG, replica_comm[k]) !=
        MPI_SUCCESS)
      return -1;
  }
  return 0;
}

int ftmw_spawn_workers(ftmw_ctx *cx) {
  ftmw_peer **workers = malloc((size_t)cx->job.W * sizeof(*workers));
  if (workers == NULL)
    return -1;
  uv_mutex_lock(&cx->st.lock); /* the listener runs */
  for (int r = 1; r <= cx->job.W; r++) {
    ftmw_peer_set_locked(cx, &cx->st.workers[r], FTMW_PEER_JOINING, "spawning");
    workers[r - 1] = &cx->st.workers[r];
  }
  uv_mutex_unlock(&cx->st.lock);
  int rc = spawn_peers_retried(cx, workers, cx->placed_host + 1, cx->job.W,
                               FTMW_ROLE_WORKER, NULL);
  free(workers);
  return rc;
}

int ftmw_spawn_replacement(ftmw_ctx *cx, ftmw_peer *p, int host) {
  cx->placed_host[p->id] = host;
  return spawn_peers_current(cx, &p, &host, 1, FTMW_ROLE_WORKER, NULL);
}

/* --- restores that do not wait ------------------------------------------
 * One helper thread, the spawner, makes the spawns that
 * ftmw_spawn_replacement_async queues, one after the other (two
 * MPI_Comm_spawn at once are not known to be safe in Open MPI 4.1), each
 * bounded as every spawn is. */
typedef struct spawn_req {
  ftmw_qnode node;
  ftmw_peer *p;
  uint32_t epoch;
  int host;
  ftmw_spawn_before before;
  ftmw_place old;
  char old_notice[FTMW_DEATH_NAME_MAX];
} spawn_req;

static struct {
  uv_thread_t tid;
  uv_mutex_t lock;
  uv_cond_t cond;
  ftmw_qnode reqs; /* under lock */
  int started;
  int stop; /* under lock */
} spawner;

int ftmw_spawn_async_ok(void) { return thread_multiple; }

/* An incarnation the spawner has spawned and that has not joined yet: the
 * spawner reads its death notice (death.h) every FTMW_DEATH_POLL_MS,
 * between spawns and while it has none to make, so that a process that
 * died before it connected is declared failed at once rather than at its
 * deadline (restore.c), and a process that neither joins nor dies holds
 * up no other restore. The spawner's thread alone has them. */
typedef struct watched {
  ftmw_qnode node;
  ftmw_peer *p;
  uint32_t epoch;
  char name[FTMW_DEATH_NAME_MAX];
} watched;

static void watch(ftmw_ctx *cx, ftmw_qnode *list, ftmw_peer *p,
                  uint32_t epoch) {
  watched *w = calloc(1, sizeof(*w));
  if (w == NULL)
    return; /* then its deadline finds it */
  w->p = p;
  w->epoch = epoch;
  uv_mutex_lock(&cx->st.lock);
  if (p->epoch == epoch) /* its last spawn's, which is this one */
    memcpy(w->name, p->notice, sizeof(w->name));
  uv_mutex_unlock(&cx->st.lock);
  if (w->name[0] == '\0') {
    free(w);
    return;
  }
  ftmw_q_insert_tail(list, &w->node);
}

/* Reads the notice of every incarnation on list; forgets those that have
 * joined, been declared failed, or been replaced. */
static void poll_watched(ftmw_ctx *cx, ftmw_qnode *list) {
  ftmw_qnode *n = list->next;
  while (n != list) {
    watched *w = FTMW_CONTAINER_OF(n, watched, node);
    n = n->next;
    ftmw_peer *p = w->p;
    char notice[128];
    uv_mutex_lock(&cx->st.lock);
    int joining = p->epoch == w->epoch && p->state == FTMW_PEER_JOINING;
    uv_mutex_unlock(&cx->st.lock);
    if (joining && ftmw_death_notice(w->name, notice, sizeof(notice), NULL)) {
      uv_mutex_lock(&cx->st.lock);
      if (p->epoch == w->epoch && p->state == FTMW_PEER_JOINING)
        ftmw_death_declare_locked(cx, p, notice);
      uv_mutex_unlock(&cx->st.lock);
      joining = 0;
    }
    if (!joining) {
      ftmw_q_remove(&w->node);
      free(w);
    }
  }
}

/* Makes the spawn of r (the spawner's thread), and watches its process
 * (list): on failure, the new incarnation has failed, reported at the
 * next call that names it. */
static void spawn_one(ftmw_ctx *cx, spawn_req *r, ftmw_qnode *list) {
  ftmw_peer *p = r->p;
  if (r->before)
    r->before(cx, &r->old, r->old_notice);
  uv_mutex_lock(&cx->st.lock);
  int go = p->epoch == r->epoch && p->state == FTMW_PEER_JOINING;
  if (go) /* its deadline counts from now, not from the queue */
    p->join_by = ftmw_now_ms() + (uint64_t)ftmw_spawn_wait_ms(cx, 1) +
                 FTMW_LAUNCH_WAIT_MS;
  uv_mutex_unlock(&cx->st.lock);
  if (!go)
    return;
  int host = r->host;
  if (spawn_peers(cx, &p, &r->epoch, &host, 1, FTMW_ROLE_WORKER, NULL) ==
      SPAWN_OK) {
    watch(cx, list, p, r->epoch);
    return;
  }
  /* A waiting call sees it at the loop's next event, the heartbeat tick
   * at the latest: this thread does not touch the loop, which may be
   * closing by the time it gets here. */
  uv_mutex_lock(&cx->st.lock);
  if (p->epoch == r->epoch && p->state == FTMW_PEER_JOINING)
    ftmw_peer_failed_locked(cx, p, 1, "could not be spawned");
  uv_mutex_unlock(&cx->st.lock);
}

static void spawner_thread(void *arg) {
  ftmw_ctx *cx = arg;
  ftmw_qnode list;
  ftmw_q_init(&list);
  uv_mutex_lock(&spawner.lock);
  while (!spawner.stop) {
    if (ftmw_q_empty(&spawner.reqs)) {
      if (ftmw_q_empty(&list))
        uv_cond_wait(&spawner.cond, &spawner.lock);
      else
        uv_cond_timedwait(&spawner.cond, &spawner.lock,
                          (uint64_t)FTMW_DEATH_POLL_MS * 1000000u);
    }
    spawn_req *r = NULL;
    if (!spawner.stop && !ftmw_q_empty(&spawner.reqs)) {
      r = FTMW_CONTAINER_OF(ftmw_q_head(&spawner.reqs), spawn_req, node);
      ftmw_q_remove(&r->node);
    }
    uv_mutex_unlock(&spawner.lock);
    if (r != NULL) {
      spawn_one(cx, r, &list);
      free(r);
    }
    poll_watched(cx, &list);
    uv_mutex_lock(&spawner.lock);
  }
  uv_mutex_unlock(&spawner.lock);
  while (!ftmw_q_empty(&list)) {
    watched *w = FTMW_CONTAINER_OF(ftmw_q_head(&list), watched, node);
    ftmw_q_remove(&w->node);
    free(w);
  }
}

int ftmw_spawn_replacement_async(ftmw_ctx *cx, ftmw_peer *p, int host,
                                 ftmw_spawn_before before,
                                 const ftmw_place *old,
                                 const char *old_notice) {
  spawn_req *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return -1;
  if (!spawner.started) {
    ftmw_q_init(&spawner.reqs);
    spawner.stop = 0;
    int ok = uv_mutex_init(&spawner.lock) == 0;
    if (ok && uv_cond_init(&spawner.cond) != 0) {
      uv_mutex_destroy(&spawner.lock);
      ok = 0;
    }
    if (ok && uv_thread_create(&spawner.tid, spawner_thread, cx) != 0) {
      uv_cond_destroy(&spawner.cond);
      uv_mutex_destroy(&spawner.lock);
      ok = 0;
    }
    if (!ok) {
      ftmw_log("cannot start a thread to spawn on");
      free(r);
      return -1;
    }
    spawner.started = 1;
  }
  cx->placed_host[p->id] = host;
  r->p = p;
  r->epoch = p->epoch;
  r->host = host;
  r->before = before;
  r->old = *old;
  snprintf(r->old_notice, sizeof(r->old_notice), "%s", old_notice);
  uv_mutex_lock(&spawner.lock);
  ftmw_q_insert_tail(&spawner.reqs, &r->node);
  uv_cond_signal(&spawner.cond);
  uv_mutex_unlock(&spawner.lock);
  return 0;
}

void ftmw_spawn_stop(void) {
  if (!spawner.started)
    return;
  uv_mutex_lock(&spawner.lock);
  spawner.stop = 1;
  while (!ftmw_q_empty(&spawner.reqs)) {
    spawn_req *r = FTMW_CONTAINER_OF(ftmw_q_head(&spawner.reqs), spawn_req, node);
    ftmw_q_remove(&r->node);
    free(r);
  }
  uv_cond_signal(&spawner.cond);
  uv_mutex_unlock(&spawner.lock);
  /* A spawn it is making ends within its bound (abandoned, if MPI does
   * not return: spawns_abandoned then says so). */
  uv_thread_join(&spawner.tid);
  uv_cond_destroy(&spawner.cond);
  uv_mutex_destroy(&spawner.lock);
  spawner.started = 0;
}

int ftmw_spawn_abandoned(void) {
  return __atomic_load_n(&spawns_abandoned, __ATOMIC_RELAXED);
}
