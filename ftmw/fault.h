/* Deterministic fault injection for tests: named points in the library
 * where a process may die, and FT_FAULT saying "die the Nth time you reach
 * point P" (SQLite's test_syscall, Redis' DEBUG, ULFM's failure inject).
 *
 * FT_FAULT is a comma-separated list of POINT[:N][@WHO[/EPOCH]]:
 *   POINT  one of the names below;
 *   N      die on the Nth hit (default 1);
 *   WHO    worker rank ("3"), master index ("m0" is the primary), or "*"
 *          (default "*");
 *   EPOCH  incarnation that dies (default 0: the process started at launch,
 *          so that a restored worker does not die again; "*" for any).
 * Death is SIGKILL: no handler, no flush, no goodbye, like a real crash. */
#ifndef FTMW_FAULT_H
#define FTMW_FAULT_H

#include <stddef.h>
#include <stdint.h>

/* The longest FT_FAULT, a NUL included. */
#define FTMW_FAULT_MAX 256

#define FTMW_FAULT_POINTS(XX)                                                  \
  XX(RECV_ENTER, "recv.enter")     /* ft_recv called, nothing received */      \
  XX(RECV_ACK, "recv.ack")         /* DATA queued, before its ACK */           \
  XX(RECV_EXIT, "recv.exit")       /* ft_recv returns data: computing next */  \
  XX(SEND_ENTER, "send.enter")     /* ft_send called, nothing sent */          \
  XX(SEND_WRITTEN, "send.written") /* DATA written, ACK not yet seen */        \
  XX(SEND_EXIT, "send.exit")       /* ft_send acknowledged, returning */       \
  XX(INIT, "init")                 /* ft_init, before connecting */            \
  XX(FINALIZE, "finalize")         /* ft_finalize entered */                 \
  XX(RECV_ACKED, "recv.acked")     /* worker: ACKed the primary's             \
                                      DATA; hit before each replica's ACKED */ \
  XX(SEND_COPY, "send.copy")       /* worker with replicas: before each      \
                                      replica's COPY (the DATA goes after) */ \
  XX(SEND_CONFIRM, "send.confirm") /* worker: the primary ACKed its DATA;     \
                                      hit before each replica's CONFIRM */    \
  XX(SPAWN_STALL, "spawn.stall")   /* master, each ft_restore spawn: the new   \
                                      process stalls before MPI_Init instead   \
                                      of this one dying (ftmw_fault_fires) */  \
  XX(SETUP, "setup")               /* spawned process, set-up record received \
                                      (a replica: before it sends its address;\
                                      not traced: FT_TRACE is not open yet) */ \
  XX(TICK_STARVE, "tick.starve")   /* the loop's thread, at its Nth heartbeat \
                                      tick: made to wait for a CPU for 4 x     \
                                      FT_TIMEOUT_MS without running the loop  \
                                      (three threads spinning beside it on    \
                                      its CPU), as on an overloaded machine,   \
                                      instead of dying (ftmw_fault_fires) */   \
  XX(TICK_SLEEP, "tick.sleep")     /* the same, asleep instead (a loop       \
                                      blocked, a deadlock) until a master     \
                                      closes its connection */               \
  XX(TICK_SPIN, "tick.spin")       /* the same, on a CPU instead (a loop     \
                                      livelocked) until a master closes its   \
                                      connection */

enum ftmw_fault_point {
#define FTMW_FP_GEN(id, name) FTMW_FAULT_##id,
  FTMW_FAULT_POINTS(FTMW_FP_GEN)
#undef FTMW_FP_GEN
  FTMW_FAULT_NPOINTS
};

#define FTMW_FAULT_MAX_RULES 8
#define FTMW_FAULT_ANY (-1)

typedef struct {
  int point;
  long nth;
  int master; /* 1: who is a master index */
  long who;   /* rank / master index / FTMW_FAULT_ANY */
  long epoch; /* FTMW_FAULT_ANY for any */
} ftmw_fault_rule;

typedef struct {
  ftmw_fault_rule rule[FTMW_FAULT_MAX_RULES];
  int n;
} ftmw_fault_spec;

int ftmw_fault_parse(const char *s, ftmw_fault_spec *out, char *err,
                     size_t errlen);

/* Arms the rules that apply to this process (thread-safe after this). */
void ftmw_fault_arm(const char *spec, int is_master, int id, uint32_t epoch);

/* A point was reached: dies here if a rule says so. Cheap when unarmed. */
void ftmw_fault_hit(int point);

/* A point was reached: 1 if a rule says the fault happens now (traced as
 * fault_injected), for points whose fault is not this process's death. */
int ftmw_fault_fires(int point);

/* The tick.starve fault: the calling thread waits for a CPU for ms
 * without running anything else, as on an overloaded machine (runnable
 * all along, on its CPU a quarter of the time at most). */
void ftmw_fault_starve(uint64_t ms);

#endif
