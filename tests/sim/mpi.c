/* MPI and the few libc calls whose answer must be the simulated
 * process's, not this OS process's (see sim.h): static mode over MPICH's
 * ABI, one rank per node. Collectives meet every node; what only spawn
 * mode uses fails, saying so. Outside a node's coroutine every libc call
 * here is the real one. */
#define _GNU_SOURCE
#include "sim.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* --- MPI ------------------------------------------------------------------ */

static int inited[SIM_MAX_NODES];

int PMPI_Initialized(int *flag) {
  sim_node *n = sim_node_self();
  *flag = n ? inited[n->id] : 0;
  return MPI_SUCCESS;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)argc, (void)argv, (void)required;
  inited[sim_node_self()->id] = 1;
  *provided = MPI_THREAD_MULTIPLE;
  return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided) {
  *provided = MPI_THREAD_MULTIPLE;
  return MPI_SUCCESS;
}

int PMPI_Finalize(void) { return MPI_SUCCESS; }

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler e) {
  (void)comm, (void)e;
  return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char *name, int *len) {
  sim_node *n = sim_node_self();
  *len = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", n->host);
  return MPI_SUCCESS;
}

int PMPI_Comm_get_parent(MPI_Comm *parent) {
  *parent = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size) {
  (void)comm;
  *size = sim_nnodes;
  return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank) {
  (void)comm;
  *rank = sim_node_self()->id;
  return MPI_SUCCESS;
}

/* A collective: every node arrives, rank 0's or everyone's bytes are
 * copied, every node leaves. */
static struct {
  uint8_t data[SIM_MAX_NODES][8192];
  int arrived, left;
} coll;

static int all_arrived(void *arg) {
  (void)arg;
  return coll.arrived == sim_nnodes;
}

static int all_left(void *arg) {
  (void)arg;
  return coll.left == 0;
}

static int meet(const void *mine, size_t len) {
  if (len > sizeof(coll.data[0])) {
    fprintf(stderr, "ftmw-sim: a collective of %zu bytes\n", len);
    abort();
  }
  while (coll.left > 0) /* the last one is still being left */
    sim_block(all_left, NULL, 0);
  memcpy(coll.data[sim_node_self()->id], mine, len);
  coll.arrived++;
  sim_block(all_arrived, NULL, 0);
  return 0;
}

static void leave(void) {
  if (++coll.left == sim_nnodes)
    coll.arrived = coll.left = 0;
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
               MPI_Comm comm) {
  (void)type, (void)comm;
  meet(buf, (size_t)count);
  memcpy(buf, coll.data[root], (size_t)count);
  leave();
  return MPI_SUCCESS;
}

int PMPI_Allgather(const void *in, int incount, MPI_Datatype intype, void *out,
                   int outcount, MPI_Datatype outtype, MPI_Comm comm) {
  (void)intype, (void)outcount, (void)outtype, (void)comm;
  meet(in, (size_t)incount);
  for (int r = 0; r < sim_nnodes; r++)
    memcpy((uint8_t *)out + (size_t)r * (size_t)incount, coll.data[r],
           (size_t)incount);
  leave();
  return MPI_SUCCESS;
}

/* Spawn mode's calls: not simulated. */
static int unsupported(const char *call) {
  fprintf(stderr, "ftmw-sim: %s is not simulated (static mode only)\n", call);
  return MPI_ERR_OTHER;
}

int PMPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm m) {
  (void)b, (void)c, (void)t, (void)d, (void)tag, (void)m;
  return unsupported("MPI_Send");
}
int PMPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm m,
              MPI_Status *st) {
  (void)b, (void)c, (void)t, (void)s, (void)tag, (void)m, (void)st;
  return unsupported("MPI_Recv");
}
int PMPI_Irecv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm m,
               MPI_Request *r) {
  (void)b, (void)c, (void)t, (void)s, (void)tag, (void)m, (void)r;
  return unsupported("MPI_Irecv");
}
int PMPI_Test(MPI_Request *r, int *flag, MPI_Status *st) {
  (void)r, (void)st;
  *flag = 0;
  return unsupported("MPI_Test");
}
int PMPI_Cancel(MPI_Request *r) {
  (void)r;
  return MPI_SUCCESS;
}
int PMPI_Request_free(MPI_Request *r) {
  (void)r;
  return MPI_SUCCESS;
}
int PMPI_Comm_spawn_multiple(int count, char *cmds[], char **argvs[],
                             const int maxprocs[], const MPI_Info info[],
                             int root, MPI_Comm comm, MPI_Comm *inter,
                             int errcodes[]) {
  (void)count, (void)cmds, (void)argvs, (void)maxprocs, (void)info, (void)root;
  (void)comm, (void)inter, (void)errcodes;
  return unsupported("MPI_Comm_spawn_multiple");
}
int PMPI_Info_create(MPI_Info *i) {
  *i = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
int PMPI_Info_set(MPI_Info i, const char *k, const char *v) {
  (void)i, (void)k, (void)v;
  return MPI_SUCCESS;
}
int PMPI_Info_free(MPI_Info *i) {
  *i = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
int PMPI_Error_string(int code, char *s, int *len) {
  *len = snprintf(s, MPI_MAX_ERROR_STRING, "simulated MPI error %d", code);
  return MPI_SUCCESS;
}

/* --- libc ------------------------------------------------------------------ */

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

pid_t getpid(void) {
  sim_node *n = sim_node_self();
  return n ? (pid_t)n->pid : (pid_t)syscall(SYS_getpid);
}

int kill(pid_t pid, int sig) {
  if (sim_node_self() == NULL)
    return (int)syscall(SYS_kill, pid, sig);
  for (int i = 0; i < sim_nnodes; i++)
    if ((pid_t)sim_nodes[i].pid == pid) {
      if (sig != 0) {
        fprintf(stderr, "ftmw-sim: signal %d to node %d not simulated\n", sig, i);
        abort();
      }
      if (sim_nodes[i].alive)
        return 0;
    }
  errno = ESRCH;
  return -1;
}

int sim_real_poll(struct pollfd *fds, unsigned long n, int timeout) {
  return REAL(poll)(fds, n, timeout);
}

int poll(struct pollfd *fds, nfds_t n, int timeout) {
  if (sim_node_self() == NULL)
    return REAL(poll)(fds, n, timeout);
  return sim_poll(fds, n, timeout);
}

/* A node's writes: the simulator reads its socket at the next step. */
ssize_t send(int fd, const void *buf, size_t len, int flags) {
  static __typeof__(&send) real;
  if (real == NULL)
    real = REAL(send);
  ssize_t n = real(fd, buf, len, flags);
  sim_net_wrote(fd);
  return n;
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags) {
  static __typeof__(&sendmsg) real;
  if (real == NULL)
    real = REAL(sendmsg);
  ssize_t n = real(fd, m, flags);
  sim_net_wrote(fd);
  return n;
}

int sched_yield(void) {
  if (sim_node_self())
    sim_yield();
  return 0;
}

int pthread_setname_np(pthread_t t, const char *name) {
  if (sim_node_self())
    return 0; /* t is a coroutine */
  return REAL(pthread_setname_np)(t, name);
}

/* /proc tells of this OS process, not of a node: a node finds nothing
 * there, so the library's local-process checks stay out of the run. */
int open(const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  if (sim_node_self() && strncmp(path, "/proc/", 6) == 0) {
    errno = ENOENT;
    return -1;
  }
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int getaddrinfo(const char *node, const char *service,
                const struct addrinfo *hints, struct addrinfo **res) {
  for (int i = 0; node && i < sim_nnodes; i++)
    if (strcmp(node, sim_nodes[i].host) == 0) {
      struct addrinfo *a = calloc(1, sizeof(*a) + sizeof(struct sockaddr_in));
      if (a == NULL)
        return EAI_MEMORY;
      struct sockaddr_in *in = (struct sockaddr_in *)(a + 1);
      in->sin_family = AF_INET;
      in->sin_addr.s_addr = htonl(sim_nodes[i].ip);
      a->ai_family = AF_INET;
      a->ai_socktype = SOCK_STREAM;
      a->ai_addr = (struct sockaddr *)in;
      a->ai_addrlen = sizeof(*in);
      *res = a;
      return 0;
    }
  if (sim_node_self())
    return EAI_NONAME;
  return REAL(getaddrinfo)(node, service, hints, res);
}

void freeaddrinfo(struct addrinfo *a) {
  if (sim_node_self())
    free(a); /* one of ours: a single block */
  else
    REAL(freeaddrinfo)(a);
}

void exit(int status) {
  if (sim_node_self())
    sim_exit_self(status);
  REAL(exit)(status);
  __builtin_unreachable();
}

void _exit(int status) {
  if (sim_node_self())
    sim_exit_self(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
