/* The deterministic simulator (tools/ftmw-sim): the real library, one
 * loaded copy per simulated process, run in one OS thread.
 *
 * Each simulated process ("node") is a private copy of libftmw.so loaded
 * with dlopen, so that its globals are its own. Its threads (the
 * application's and the I/O thread libuv would run) are coroutines, and the
 * library's calls into libuv, MPI and a few libc functions resolve to this
 * executable's definitions (uv.c, mpi.c), which block a coroutine instead
 * of the OS thread. The scheduler (sched.c) picks which coroutine runs next
 * with one seeded generator, keeps a virtual clock that only moves when it
 * says, and so makes the same seed give the same run. Connections are real
 * socketpairs with the simulator in the middle (net.c), which delays,
 * drops or cuts what goes through them. */
#ifndef FTMW_SIM_H
#define FTMW_SIM_H

#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_NODES 14
#define SIM_NS_PER_MS 1000000ull

typedef struct sim_coro sim_coro;
typedef struct sim_node sim_node;

/* --- the scheduler (sched.c) --------------------------------------------- */

struct sim_node {
  int id;            /* index: the MPI rank */
  int alive;         /* not exited, not crashed */
  int exited;        /* ended through exit/_exit (status below) */
  int status;
  int crashed;       /* killed by the simulator */
  int silent;        /* ...as a host that lost power: nobody is told */
  uint64_t ended_ns; /* when it ended (0: it has not) */
  uint64_t cut_at;   /* when a partition cut it from the majority (0: never) */
  void *lib;         /* its copy of libftmw.so */
  char host[16];     /* "simK" */
  uint32_t ip;       /* 10.77.0.K+1, host order */
  uint32_t pid;      /* its pid as the library sees it */
  sim_coro *app;     /* the application's coroutine */
  void *user;        /* main.c's record of it */
};

extern sim_node sim_nodes[SIM_MAX_NODES];
extern int sim_nnodes;
extern uint64_t sim_now_ns;

/* The generator every choice comes from (xoshiro256**). */
uint64_t sim_rand(void);
/* Uniform in [0, n). */
uint64_t sim_below(uint64_t n);

/* Seeds the generator; splitmix64's next value of the stream z (a stream
 * of its own, apart from the generator's). */
void sim_seed(uint64_t seed);
uint64_t sim_splitmix(uint64_t *z);

/* The coroutine running now (NULL: the scheduler), and its node. */
sim_coro *sim_self(void);
sim_node *sim_node_self(void);

/* Starts fn(arg) as a new coroutine of node n. */
sim_coro *sim_spawn(sim_node *n, void (*fn)(void *), void *arg);

/* Blocks the running coroutine until ready(arg) holds or the virtual clock
 * reaches deadline (0: none). Returns 0 when ready, -1 on the deadline. A
 * choice point: the scheduler may run others first even when ready. */
int sim_block(int (*ready)(void *), void *arg, uint64_t deadline);

/* A choice point only. */
void sim_yield(void);

/* Whether coroutine c has ended. */
int sim_coro_done(const sim_coro *c);

/* Ends node n (its coroutines never run again; its connections close, or
 * with silent set go quiet as a host that lost power). The running
 * coroutine, if it is n's, does not return. */
void sim_kill_node(sim_node *n, int silent);

/* Ends the running node as exit(status) would. Does not return. */
void sim_exit_self(int status) __attribute__((noreturn));

/* Runs until every node has ended, or fails. Returns 0, or -1 with why
 * filled in. step_hook runs between steps (faults). */
int sim_run(void (*step_hook)(void), uint64_t max_ns, char *why, size_t n);

/* When step_hook next has something to do (0: nothing): the clock stops
 * there when it jumps. */
extern uint64_t sim_hook_due;

/* Steps taken so far. */
extern uint64_t sim_steps;

/* A line of the run's log (printed with --verbose, and hashed always:
 * the hash tells whether two runs of a seed were the same). */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern uint64_t sim_log_hash;
extern int sim_verbose;

/* --- the network (net.c) ------------------------------------------------- */

/* A connection from node a to node b's listener; returns a's end and puts
 * b's in *b_fd once it is accepted (net_accept_ready). */
typedef struct sim_conn sim_conn;

/* Opens a connection from node a to whoever listens on (ip, port): 0 and
 * *fd, a's end, or -ECONNREFUSED. Completion comes after a delay
 * (sim_connect_done). */
int sim_connect(sim_node *a, uint32_t ip, int port, int *fd, sim_conn **c);
int sim_connect_done(const sim_conn *c);

/* A listener of node n on (ip, port); port 0 picks one. */
int sim_listen(sim_node *n, uint32_t ip, int *port, void *owner);
void sim_unlisten(void *owner);
/* The next accepted connection's fd for listener owner, or -1; *ip, *port:
 * the connecting side's address. */
int sim_accept(void *owner, uint32_t *ip, int *port);
int sim_accept_pending(void *owner);

/* Moves bytes: reads what nodes wrote, delivers what is due. */
void sim_net_step(void);
/* The next delivery's time (0: none). */
uint64_t sim_net_next(void);

/* Closes every connection end node n holds (it ended); silent: its peers
 * see nothing, as when a host loses power. */
void sim_net_node_gone(sim_node *n, int silent);

/* Cuts every connection between a node in group and one out of it:
 * bytes are held, nothing is closed, until sim_net_heal, from which what
 * was held goes on, in order. */
void sim_net_partition(const int *group, int n);
void sim_net_heal(void);

/* A node wrote to, or closes, its end fd (the simulator reads it at the
 * next step); whether fd may have something to read (else it has not:
 * only the simulator's deliveries make it readable), and that it has not. */
void sim_net_wrote(int fd);
int sim_net_maybe_readable(int fd);
void sim_net_not_readable(int fd);

/* Delivery delays: uniform in [min, max] ns. */
extern uint64_t sim_net_min_ns, sim_net_max_ns;

/* --- uv.c ---------------------------------------------------------------- */

/* poll(2) as a node's coroutine sees it (mpi.c's poll calls it). */
struct pollfd;
int sim_poll(struct pollfd *fds, unsigned long n, int timeout);
/* The real poll(2) (mpi.c), for the simulator's own looks. */
int sim_real_poll(struct pollfd *fds, unsigned long n, int timeout);

#endif
