/* Launch over MPI: start-up and shut-down (see launch.h). */

#include "launch.h"

#include "ftmw_impl.h"
#include "transport.h"
#include "replica.h"
#include "abort.h"
#include "death.h"
#include "partition.h"
#include "spawn.h"
#include "leave.h"
#include "pmi.h"

#include <mpi.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_get(const char *name) { return getenv(name); }

/* --- the application's exit status, for ftmwrun ---------------------- */

/* ftmwrun cannot trust mpiexec's status (hydra reports a killed worker's
 * signal, a deadlocked mpirun is killed), so the primary records the
 * status main() returned: every process registers before its launch (a
 * failed ft_init's status counts too), and whichever master is primary
 * when it exits writes (abort.h). */
static void write_status(int status, void *arg) {
  (void)arg;
  ftmw_write_exit_status(status);
}

static void register_status_file(void) {
  const char *p = getenv("FTMW_STATUS_FILE");
  if (p && *p)
    on_exit(write_status, NULL);
}

/* --- identity and peers -------------------------------------------------- */

static void init_peers(ftmw_peer *v, int from, int to, int kind,
                       uint32_t (*pid)(int)) {
  for (int i = from; i <= to; i++) {
    v[i].kind = kind;
    v[i].id = i;
    v[i].pid_wire = pid(i);
    ftmw_q_init(&v[i].inbox);
    ftmw_q_init(&v[i].held);
    ftmw_q_init(&v[i].unconfirmed);
    ftmw_q_init(&v[i].pending);
  }
}

static uint32_t worker_pid(int r) { return (uint32_t)r; }
static uint32_t master_pid(int k) { return FTMW_PID_MASTER(k); }
static uint32_t spare_pid(int s) { return FTMW_PID_SPARE(s); }

static int alloc_peers(ftmw_ctx *cx) {
  cx->st.workers = calloc((size_t)cx->job.W + 1, sizeof(ftmw_peer));
  cx->st.masters = calloc((size_t)cx->job.M + 1, sizeof(ftmw_peer));
  cx->st.spares = calloc((size_t)cx->job.S + 1, sizeof(ftmw_peer));
  if (!cx->st.workers || !cx->st.masters || !cx->st.spares ||
      ftmw_rep_init(cx) != 0)
    return -1;
  init_peers(cx->st.workers, 0, cx->job.W, FTMW_ROLE_WORKER, worker_pid);
  init_peers(cx->st.masters, 0, cx->job.M, FTMW_ROLE_MASTER, master_pid);
  init_peers(cx->st.spares, 0, cx->job.S - 1, FTMW_ROLE_SPARE, spare_pid);
  return 0;
}

/* A master expects every worker and spare, and the masters from
 * first_master on, to connect to it. Takes st.lock: the listener may run
 * already. */
static void expect_peers(ftmw_ctx *cx, int first_master) {
  uv_mutex_lock(&cx->st.lock);
  for (int r = 1; r <= cx->job.W; r++)
    ftmw_peer_set_locked(cx, &cx->st.workers[r], FTMW_PEER_JOINING, "expected");
  for (int k = 0; k < cx->job.S; k++)
    ftmw_peer_set_locked(cx, &cx->st.spares[k], FTMW_PEER_JOINING, "expected");
  for (int k = first_master; k <= cx->job.M; k++)
    ftmw_peer_set_locked(cx, &cx->st.masters[k], FTMW_PEER_JOINING, "expected");
  uv_mutex_unlock(&cx->st.lock);
}

/* The job secret: without the kernel's randomness there is no job. */
static int make_secret(ftmw_ctx *cx) {
  int rc =
      uv_random(NULL, NULL, cx->job.secret, sizeof(cx->job.secret), 0, NULL);
  if (rc != 0)
    ftmw_log("cannot draw the job secret: %s", uv_strerror(rc));
  return rc;
}

/* Listeners bind to one address, never to every interface: FT_IFACE's
 * IPv4 address when it is set (the interface MPI is told to use), else the
 * one MPI's processor name resolves to. */
static int iface_addr(ftmw_ctx *cx, const char *name) {
  uv_interface_address_t *v;
  int n, found = 0;
  int rc = uv_interface_addresses(&v, &n);
  if (rc != 0) {
    ftmw_log("FT_IFACE=%s: cannot list the network interfaces: %s", name,
             uv_strerror(rc));
    return -1;
  }
  char seen[256] = "";
  for (int k = 0; k < n && !found; k++) {
    if (v[k].address.address4.sin_family != AF_INET)
      continue;
    if (strcmp(v[k].name, name) == 0) {
      uv_ip4_name(&v[k].address.address4, cx->st.listen_ip,
                  sizeof(cx->st.listen_ip));
      found = 1;
    } else if (strlen(seen) + strlen(v[k].name) + 3 < sizeof(seen)) {
      strcat(strcat(seen, seen[0] ? ", " : ""), v[k].name);
    }
  }
  uv_free_interface_addresses(v, n);
  if (!found)
    ftmw_log("FT_IFACE=%s: no interface of that name with an IPv4 address on "
             "host %s (those with one: %s)",
             name, cx->job.host, seen[0] ? seen : "none");
  return found ? 0 : -1;
}

static int resolve_self(ftmw_ctx *cx) {
  if (cx->job.cfg.iface[0])
    return iface_addr(cx, cx->job.cfg.iface);
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  if (getaddrinfo(cx->job.host, NULL, &hints, &res) != 0 || res == NULL) {
    ftmw_log("cannot resolve this host's name \"%s\" (from MPI) to an IPv4 "
             "address for FTMW's listener: list it in /etc/hosts or DNS, or "
             "set FT_IFACE to the interface to listen on",
             cx->job.host);
    return -1;
  }
  uv_ip4_name((const struct sockaddr_in *)res->ai_addr, cx->st.listen_ip,
              sizeof(cx->st.listen_ip));
  freeaddrinfo(res);
  return 0;
}

/* Reads and validates the settings (the process that launches the job). */
static int read_config(ftmw_ctx *cx, int static_size) {
  char err[320];
  if (ftmw_config_parse(&cx->job.cfg, env_get, err, sizeof(err)) != 0) {
    ftmw_log("%s", err);
    return -1;
  }
  if (cx->job.cfg.hostfile[0] &&
      ftmw_hosts_load(cx->job.cfg.hostfile, &cx->job.hosts, err, sizeof(err)) !=
          0) {
    ftmw_log("FT_HOSTFILE: %s", err);
    return -1;
  }
  cx->job.M = cx->job.cfg.masters;
  if (static_size == 0) {
    if (cx->job.cfg.workers < 0) {
      ftmw_log("FT_NUM_SLAVES is not set: in spawn mode (mpiexec -n 1) it "
               "gives the number of workers to start");
      return -1;
    }
    if (cx->job.cfg.spares > 0) {
      ftmw_log("FT_SPARES=%d is invalid in spawn mode: spares exist only in "
               "static mode (mpiexec -n 1+W+M+S)",
               cx->job.cfg.spares);
      return -1;
    }
    cx->job.W = cx->job.cfg.workers;
    cx->job.S = 0;
    return 0;
  }
  int rest = static_size - 1 - cx->job.M;
  cx->job.W = cx->job.cfg.workers >= 0 ? cx->job.cfg.workers : rest;
  cx->job.S = rest - cx->job.W;
  if (cx->job.W < 1 || cx->job.S < 0) {
    ftmw_log("FT_NUM_SLAVES=%d does not fit: MPI_COMM_WORLD has %d processes "
             "for 1 master, %d replicas and the workers",
             cx->job.W, static_size, cx->job.M);
    return -1;
  }
  if (cx->job.cfg.spares >= 0 && cx->job.cfg.spares != cx->job.S) {
    ftmw_log("FT_SPARES=%d does not match MPI_COMM_WORLD: %d processes give "
             "%d workers, %d replicas and %d spares",
             cx->job.cfg.spares, static_size, cx->job.W, cx->job.M, cx->job.S);
    return -1;
  }
  return 0;
}

/* --- waiting for processes to join --------------------------------------- */

int ftmw_launch_wait_joined_locked(ftmw_ctx *cx, ftmw_peer *p,
                                   uint64_t deadline, int notices) {
  const char *dir = getenv("FTMW_DEATH_DIR");
  char name[FTMW_DEATH_NAME_MAX] = "";
  if (cx->job.mode == FTMW_MODE_SPAWN)
    snprintf(name, sizeof(name), "%s", p->notice);
  else
    ftmw_death_name_static(cx, p->kind, p->id, p->epoch, name, sizeof(name));
  notices = notices && dir && *dir && name[0];
  while (p->state == FTMW_PEER_JOINING) {
    uint64_t now = ftmw_now_ms();
    char why[200], notice[128];
    if (now >= deadline) {
      snprintf(why, sizeof(why), "did not connect within %d s",
               FTMW_LAUNCH_WAIT_MS / 1000);
      ftmw_peer_failed_locked(cx, p, 1, why);
      ftmw_log("%s %d %s", ftmw_role_name(p->kind), p->id, why);
      break;
    }
    if (notices) {
      uv_mutex_unlock(&cx->st.lock);
      int dead = ftmw_death_notice(name, notice, sizeof(notice), NULL);
      uv_mutex_lock(&cx->st.lock);
      if (dead && p->state == FTMW_PEER_JOINING) {
        ftmw_death_declare_locked(cx, p, notice);
        break;
      }
    }
    int64_t left = (int64_t)(deadline - now);
    ftmw_wait_locked(
        cx, notices && left > FTMW_DEATH_POLL_MS ? FTMW_DEATH_POLL_MS : left);
  }
  return ftmw_peer_is_up(p);
}

/* --- spawn mode ---------------------------------------------------------- */

/* Spawn mode, a replica just spawned: listens, tells the primary where,
 * and learns every master's address (into *s). */
static int init_spawned_replica(ftmw_ctx *cx, MPI_Comm parent, ftmw_setup *s) {
  char err[320];
  ftmw_addr a = {.port = 0};
  if (cx->job.cfg.hostfile[0] &&
      ftmw_hosts_load(cx->job.cfg.hostfile, &cx->job.hosts, err, sizeof(err)) !=
          0)
    ftmw_log("FT_HOSTFILE: %s", err); /* then it restores on this host */
  expect_peers(cx, cx->job.id + 1);
  if (ftmw_spawn_place_workers(cx) == 0 && resolve_self(cx) == 0 &&
      ftmw_transport_start(cx, 1) == FT_SUCCESS)
    ftmw_setup_self_addr(cx, &a);
  if (PMPI_Send(&a, sizeof(a), MPI_BYTE, 0, FTMW_SETUP_TAG, parent) !=
          MPI_SUCCESS ||
      a.port <= 0)
    return -1;
  /* Every master's address comes once the primary has spawned all the
   * replicas; it never comes if the primary dies meanwhile. */
  ftmw_setup all;
  int wait_ms = cx->job.M * FTMW_SPAWN_ATTEMPTS * ftmw_spawn_wait_ms(cx, 1) +
                FTMW_LAUNCH_WAIT_MS;
  if (ftmw_spawn_recv_bounded(&all, sizeof(all), parent, wait_ms) != 0 ||
      all.magic != FTMW_SETUP_MAGIC)
    return -1;
  for (int k = 0; k < FTMW_MAX_MASTERS; k++)
    ftmw_setup_masters(cx)[k] = ftmw_addr_ended(all.masters[k]);
  ftmw_setup_put_masters(cx, s);
  return 0;
}

static int init_spawn_primary(ftmw_ctx *cx) {
  /* The primary from the start: a failed set-up's status is the job's. */
  cx->job.role = FTMW_ROLE_MASTER;
  cx->job.id = 0;
  if (read_config(cx, 0) != 0 || resolve_self(cx) != 0 || alloc_peers(cx) != 0)
    return -1;
  if (make_secret(cx) != 0 || ftmw_transport_start(cx, 1) != FT_SUCCESS)
    return -1;
  if (ftmw_spawn_place_workers(cx) != 0 ||
      ftmw_spawn_replicas(cx, ftmw_setup_masters(cx)) != 0)
    return -1;
  return ftmw_spawn_workers(cx);
}

/* --- static mode ---------------------------------------------------------- */

static int gather_masters(ftmw_ctx *cx, int rank, int size, ftmw_setup *s);

static int init_static(ftmw_ctx *cx, int rank, int size, ftmw_setup *out) {
  ftmw_setup s;
  memset(&s, 0, sizeof(s));
  if (rank == 0) {
    cx->job.role = FTMW_ROLE_MASTER;
    if (read_config(cx, size) != 0)
      s.status = 1;
    else if (resolve_self(cx) != 0 || alloc_peers(cx) != 0 ||
             make_secret(cx) != 0 || ftmw_transport_start(cx, 1) != FT_SUCCESS)
      s.status = 1;
    else {
      expect_peers(cx, 1); /* the listener runs already */
      ftmw_setup_fill(cx, &s, FTMW_ROLE_MASTER, 0, 0);
    }
    s.magic = FTMW_SETUP_MAGIC;
  }
  PMPI_Bcast(&s, sizeof(s), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (s.magic != FTMW_SETUP_MAGIC || s.status != 0)
    return -1; /* rank 0 printed why */
  int rc = 1;
  if (rank != 0) {
    ftmw_setup_apply(cx, &s);
    if (rank <= cx->job.W) {
      cx->job.role = FTMW_ROLE_WORKER;
      cx->job.id = rank;
    } else if (rank <= cx->job.W + cx->job.M) {
      cx->job.role = FTMW_ROLE_MASTER; /* replica k = rank - W, listening too */
      cx->job.id = rank - cx->job.W;
    } else {
      cx->job.role = FTMW_ROLE_SPARE;
      cx->job.id = rank - 1 - cx->job.W - cx->job.M;
    }
    cx->job.epoch = 0;
    if (alloc_peers(cx) != 0)
      rc = -1;
    else if (cx->job.role == FTMW_ROLE_MASTER) {
      /* Who will connect to this replica: every worker and spare, and the
       * replicas after it; it connects to the masters before it. */
      expect_peers(cx, cx->job.id + 1);
      if (resolve_self(cx) != 0 || ftmw_transport_start(cx, 1) != FT_SUCCESS)
        rc = -1;
    }
  }
  if (cx->job.M > 0 && gather_masters(cx, rank, size, &s) != 0)
    rc = -1;
  if (rc > 0)
    *out = s;
  return rank == 0 ? (rc > 0 ? 0 : -1) : rc;
}

/* Static mode with replicas: every rank learns every master's listening
 * address (one MPI_Allgather; a replica that could not listen sends port
 * 0 and the job stops). Fills s and the masters' addresses (setup.c). */
static int gather_masters(ftmw_ctx *cx, int rank, int size, ftmw_setup *s) {
  ftmw_addr mine, *all = calloc((size_t)size, sizeof(*all));
  memset(&mine, 0, sizeof(mine));
  if (cx->job.role == FTMW_ROLE_MASTER)
    ftmw_setup_self_addr(cx, &mine);
  int ok = all != NULL;
  if (PMPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all ? all : &mine,
                    sizeof(mine), MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
    ok = 0;
  for (int k = 0; ok && k <= cx->job.M; k++) {
    int r = k == 0 ? 0 : cx->job.W + k;
    if (r >= size || all[r].port <= 0) {
      if (rank == 0)
        ftmw_log("master replica %d could not start listening", k);
      ok = 0;
      break;
    }
    ftmw_setup_masters(cx)[k] = ftmw_addr_ended(all[r]);
  }
  ftmw_setup_put_masters(cx, s);
  free(all);
  return ok ? 0 : -1;
}

/* --- joining (workers and spares) ---------------------------------------- */

/* Connects to masters[0..last] (a worker or spare: every master; replica
 * k: the masters before it, its transport already listening). */
static int connect_masters(ftmw_ctx *cx, const ftmw_addr *m) {
  int last = cx->job.role == FTMW_ROLE_MASTER ? cx->job.id - 1 : cx->job.M;
  if (cx->job.role != FTMW_ROLE_MASTER &&
      ftmw_transport_start(cx, 0) != FT_SUCCESS)
    return -1;
  ftmw_fault_hit(FTMW_FAULT_INIT);
  uv_mutex_lock(&cx->st.lock);
  /* Last master first, each joined before the next: the primary, which
   * waits for everyone's HELLO before the job starts, is reached only once
   * the replicas are, so that no ACKED or COPY for them can be dropped. */
  uint64_t deadline = ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS;
  int alive = 0;
  for (int k = last; k >= 0; k--) {
    ftmw_addr mk = ftmw_addr_ended(m[k]);
    if (mk.port <= 0) { /* dead when this process was launched */
      ftmw_peer_failed_locked(cx, &cx->st.masters[k], 1,
                              "dead before this process");
      continue;
    }
    ftmw_op op = {.kind = FTMW_OP_CONNECT, .peer = &cx->st.masters[k]};
    struct sockaddr_in *a = (struct sockaddr_in *)&op.addr;
    if (uv_ip4_addr(mk.ip, mk.port, a) != 0) {
      uv_mutex_unlock(&cx->st.lock);
      ftmw_log("bad master address %s:%d", mk.ip, (int)mk.port);
      return -1;
    }
    ftmw_peer_set_locked(cx, &cx->st.masters[k], FTMW_PEER_JOINING,
                         "connecting");
    /* Where it runs, so that a silent master is judged by the usual
     * rules (its kernel's answer too) even before its WELCOME. */
    ftmw_peer_place_locked(&cx->st.masters[k], &mk.at);
    ftmw_transport_submit(cx, &op, 1);
    ftmw_op_wait_locked(cx, &op);
    /* A master that already said BYE was reached: the job ended before
     * this process woke up (an idle spare), and it must now shut down
     * cleanly, or the others would wait for it in MPI_Finalize. */
    alive +=
        ftmw_launch_wait_joined_locked(cx, &cx->st.masters[k], deadline, 0) ||
        cx->st.masters[k].bye;
    /* One that accepted us and died at once was reached too: a replica
     * then takes over from it, a worker joins the one that does. */
    alive +=
        cx->st.masters[k].welcomed && ftmw_peer_is_failed(&cx->st.masters[k]);
  }
  int first = ftmw_first_live_master_locked(cx); /* a replica: perhaps itself */
  if (first >= 0)
    __atomic_store_n(&cx->st.primary, first, __ATOMIC_RELAXED); /* peer_of */
  /* A worker whose primary is not master 0 (it died before this process
   * or while it connected, without ftmw_peer_down) marks it (down.h). */
  if (cx->job.role == FTMW_ROLE_WORKER && cx->job.M > 0 && first > 0 &&
      ftmw_peer_is_up(&cx->st.masters[first])) {
    ftmw_op op = {.out = {.seq = 0}};
    ftmw_op_frame(cx, &op, &cx->st.masters[first], FTMW_FRAME_MARK, 0, 0, NULL,
                  0);
    ftmw_transport_submit(cx, &op, 1);
    ftmw_op_wait_locked(cx, &op);
  }
  uv_mutex_unlock(&cx->st.lock);
  if (alive == 0) {
    ftmw_log("%s %d: cannot reach any master", ftmw_role_name(cx->job.role),
             cx->job.id);
    return -1;
  }
  return 0;
}

/* A spare waits, connected, until ft_restore activates it or the job ends;
 * then it never returns to the application. */
static int spare_wait(ftmw_ctx *cx) {
  uv_mutex_lock(&cx->st.lock);
  while (!cx->st.activated && !cx->st.masters[cx->st.primary].bye &&
         ftmw_peer_is_up(&cx->st.masters[cx->st.primary]))
    ftmw_wait_locked(cx, -1); /* the primary may change meanwhile */
  int activated = cx->st.activated,
      clean = cx->st.masters[cx->st.primary].bye_clean;
  uv_mutex_unlock(&cx->st.lock);
  if (activated) {
    cx->job.restored = 1;
    ftmw_trace("launch", "\"restored\":1");
    return 0;
  }
  ftmw_transport_stop(cx);
  ftmw_launch_finalize(cx, clean);
  ftmw_leave(FTMW_LEAVE_SPARE_UNUSED, 0, NULL);
}

/* A process spawned by a master (FTMW_SPAWN_WAIT_ENV set) that has not
 * received its set-up record within that many ms was abandoned by the
 * master (see spawn.c), perhaps while it waits in MPI_Init: it exits. */
static struct {
  uv_mutex_t lock;
  uv_cond_t cond;
  uv_thread_t thread;
  int wait_ms, running, setup_received;
} watchdog;

static void setup_watchdog(void *arg) {
  (void)arg;
  uint64_t deadline = uv_hrtime() + (uint64_t)watchdog.wait_ms * 1000000u;
  uv_mutex_lock(&watchdog.lock);
  if (!ftmw_spawn_wait_flag_locked(&watchdog.cond, &watchdog.lock,
                                   &watchdog.setup_received, deadline)) {
    ftmw_leave(FTMW_LEAVE_ABANDONED, 0,
               "spawned, and no set-up record from the master in %d ms",
               watchdog.wait_ms);
  }
  uv_mutex_unlock(&watchdog.lock);
}

static void watchdog_start(void) {
  long ms;
  if (ftmw_parse_int(getenv(FTMW_SPAWN_WAIT_ENV), 1, INT32_MAX, &ms) != 0)
    return; /* not spawned by FTMW (or by an MPI without the "env" key) */
  watchdog.wait_ms = (int)ms;
  if (uv_mutex_init(&watchdog.lock) != 0 || uv_cond_init(&watchdog.cond) != 0 ||
      uv_thread_create(&watchdog.thread, setup_watchdog, NULL) != 0)
    return;
  watchdog.running = 1;
  if (getenv(FTMW_SPAWN_STALL_ENV)) /* spawn.stall: as Open MPI's hang */
    for (;;)
      pause();
}

static void watchdog_stop(void) {
  if (!watchdog.running)
    return;
  uv_mutex_lock(&watchdog.lock);
  watchdog.setup_received = 1;
  uv_cond_signal(&watchdog.cond);
  uv_mutex_unlock(&watchdog.lock);
  uv_thread_join(&watchdog.thread);
  watchdog.running = 0;
}

/* Ends this process's MPI session, once: at the end of ft_finalize, or,
 * for a process the library ends meanwhile (ftmw_leave: ft_abort, a
 * SIGTERM; not one the job went on without, leave.c's end_mpi), on its
 * way out. Any thread; the first caller wins,
 * so a leave on the I/O thread never touches an MPI the application
 * thread is finalizing. */
static int mpi_ended; /* atomic */

static void end_mpi(ftmw_ctx *cx, int clean) {
  if (__atomic_exchange_n(&mpi_ended, 1, __ATOMIC_ACQ_REL))
    return;
  /* After a death MPI_Finalize may wait forever for the dead (MPICH does),
   * so it is called only when every process is known to reach it. */
  if (!cx->st.mpi_owned) {
    ftmw_trace("mpi_end", "\"by\":\"the program\"");
  } else if (clean && !ftmw_spawn_abandoned()) {
    ftmw_trace("mpi_end", "\"by\":\"MPI_Finalize\"");
    PMPI_Finalize();
  } else {
#if defined(MPICH) /* its last step, so that hydra sees an end (pmi.h) */
    int acked = ftmw_pmi_finalize(FTMW_PMI_WAIT_MS) == 1;
    ftmw_trace("mpi_end", "\"by\":\"PMI finalize\",\"acknowledged\":%d",
               acked);
#else
    ftmw_trace("mpi_end", "\"by\":\"nothing\"");
#endif
  }
}

/* ftmw_leave's last step before the process ends (leave.h). */
static void end_mpi_on_leave(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  end_mpi(cx, 0);
}

int ftmw_launch_init(ftmw_ctx *cx, int *argc, char ***argv) {
  int inited = 0, provided = MPI_THREAD_SINGLE;
  PMPI_Initialized(&inited);
  if (!inited) {
    watchdog_start();
    if (PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
        MPI_SUCCESS) {
      ftmw_log("MPI_Init failed");
      return -1;
    }
    cx->st.mpi_owned = 1;
  } else {
    PMPI_Query_thread(&provided);
  }
  ftmw_leave_set_last_step(end_mpi_on_leave);
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  len = len < (int)sizeof(cx->job.host) ? len : (int)sizeof(cx->job.host) - 1;
  memcpy(cx->job.host, name, (size_t)len);
  cx->job.host[len] = '\0';
  if (ftmw_spawn_prepare(argc, argv, provided == MPI_THREAD_MULTIPLE) != 0)
    return -1;

  register_status_file();
  MPI_Comm parent;
  PMPI_Comm_get_parent(&parent);
  ftmw_setup s;
  int rc;
  if (parent != MPI_COMM_NULL) {
    cx->job.mode = FTMW_MODE_SPAWN;
    int got = PMPI_Recv(&s, sizeof(s), MPI_BYTE, 0, FTMW_SETUP_TAG, parent,
                       MPI_STATUS_IGNORE);
    watchdog_stop();
    if (got != MPI_SUCCESS || s.magic != FTMW_SETUP_MAGIC) {
      ftmw_log("spawned process: no valid set-up record from the master");
      return -1;
    }
    ftmw_setup_apply(cx, &s);
    /* Armed as soon as the identity is known, for the setup point. */
    ftmw_fault_arm(cx->job.cfg.fault, cx->job.role == FTMW_ROLE_MASTER,
                   cx->job.id, cx->job.epoch);
    ftmw_fault_hit(FTMW_FAULT_SETUP);
    if (alloc_peers(cx) != 0)
      return -1;
    if (cx->job.role == FTMW_ROLE_MASTER &&
        init_spawned_replica(cx, parent, &s) != 0) {
      ftmw_log("master replica %d: cannot start", cx->job.id);
      return -1;
    }
    rc = s.epoch > 0 ? 0 : 1;
  } else {
    int size, rank;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size == 1) {
      cx->job.mode = FTMW_MODE_SPAWN;
      rc = init_spawn_primary(cx) == 0 ? 1 : -1;
    } else {
      cx->job.mode = FTMW_MODE_STATIC;
      rc = init_static(cx, rank, size, &s);
      if (rc == 0)
        rc = 1;
    }
  }
  if (rc < 0)
    return -1;
  ftmw_trace_open(cx->job.cfg.trace); /* if the transport has not opened it */
  /* A spawned process is armed already; a spare is armed when activated. */
  if (parent == MPI_COMM_NULL && cx->job.role != FTMW_ROLE_SPARE)
    ftmw_fault_arm(cx->job.cfg.fault, cx->job.role == FTMW_ROLE_MASTER,
                   cx->job.id, cx->job.epoch);
  cx->job.restored = rc == 0;
  if (cx->job.role == FTMW_ROLE_MASTER) {
    if (cx->job.id > 0 && connect_masters(cx, s.masters) != 0)
      return -1;
    uv_mutex_lock(&cx->st.lock);
    uint64_t deadline = ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS;
    for (int r = 1; r <= cx->job.W; r++)
      ftmw_launch_wait_joined_locked(cx, &cx->st.workers[r], deadline, 1);
    for (int k = 0; k < cx->job.S; k++)
      ftmw_launch_wait_joined_locked(cx, &cx->st.spares[k], deadline, 1);
    for (int k = cx->job.id + 1; k <= cx->job.M; k++)
      ftmw_launch_wait_joined_locked(cx, &cx->st.masters[k], deadline, 1);
    uv_mutex_unlock(&cx->st.lock);
    if (cx->job.id == 0)
      ftmw_partition_warn_placement(cx);
    ftmw_trace("launch",
               "\"mode\":\"%s\",\"workers\":%d,\"spares\":%d,"
               "\"replicas\":%d",
               cx->job.mode == FTMW_MODE_SPAWN ? "spawn" : "static", cx->job.W,
               cx->job.S, cx->job.M);
    return 1;
  }
  /* A spare's role may change while it connects: the primary can
   * activate it as soon as it has joined, and then job.role says worker
   * (transport.c). It is still a spare's start: spare_wait sees the
   * activation, and ft_init returns 0, a restored worker's value. */
  int spare = cx->job.role == FTMW_ROLE_SPARE;
  if (connect_masters(cx, s.masters) != 0)
    return -1;
  if (spare)
    return spare_wait(cx);
  ftmw_trace("launch", "\"restored\":%d", rc == 0);
  return rc;
}

void ftmw_launch_finalize(ftmw_ctx *cx, int clean) {
  end_mpi(cx, clean);
  /* The status is written first at exit, before the exit handlers MPI
   * registered since ft_init (run in reverse order), which may wait for
   * a launcher that is stopping the job (after SIGTERM: mpirun SIGKILLs
   * what is left 2 s later). Written twice, the same. */
  register_status_file();
}
