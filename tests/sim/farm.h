/* The programs the simulator runs in each node (farm.c): the thesis'
 * farm and its two-part variant, each taking its results in one of three
 * ways, two programs of ms_* calls (the logged farm and rounds), and one
 * of the farm layer, and what they record for the checks (main.c). */
#ifndef FTMW_SIM_FARM_H
#define FTMW_SIM_FARM_H

#include <stdint.h>

#include "ftmw.h"
#include "ftmw_farm.h"
#include "sim.h"

#define MAX_TASKS 64
#define FTMW_SIM_MAX_W 4
#define MAX_OUTCOMES 4096
#define TAG_TASK 1
#define TAG_STOP 2
#define TAG_RESULT 3
#define TAG_FIRST 4 /* the two-part program: sent first, received second */
#define TAG_TASK_B 5  /* the ms_* programs' other task tag (they alternate) */
#define TAG_PROBLEM 6 /* the ms_* programs' problem, by ms_send */

/* The library of one node, as its program calls it. */
typedef struct {
  int (*init)(int *, char ***, int *, int *);
  int (*finalize)(void);
  int (*send)(const void *, int, FT_Datatype, int, int);
  int (*recv)(void *, int, FT_Datatype, int, int, FT_Status *);
  int (*irecv)(void *, int, FT_Datatype, int, int);
  int (*waitany)(int *);
  int (*probe)(int, int, FT_Status *);
  int (*restore)(int);
  int (*test)(int);
  int (*testany)(void);
  int (*is_primary)(void);
  int (*error)(void);
  const char *(*errname)(int);
  int (*bcast)(void *, int, FT_Datatype, int);
  int (*ms_send)(const void *, int, FT_Datatype, int, int);
  int (*ms_recv)(void *, int, FT_Datatype, int, int, FT_Status *);
  int (*ms_irecv)(void *, int, FT_Datatype, int, int);
  int (*ms_restore)(int);
  int (*ms_irestore)(int);
  int (*ms_bcast)(void *, int, FT_Datatype, int);
  /* the farm layer (ftmw_farm.h) */
  void (*farm_options_init)(ft_farm_options *);
  ft_farm *(*farm_create)(const ft_farm_options *);
  int64_t (*farm_submit)(ft_farm *, const void *, size_t);
  int (*farm_next)(ft_farm *, ft_farm_result *);
  int (*farm_destroy)(ft_farm *);
  int (*farm_work)(ft_farm_fn, void *);
  int64_t (*farm_task_id)(const ft_farm_task *);
  const void *(*farm_input)(const ft_farm_task *, size_t *);
  const void *(*farm_resumed)(const ft_farm_task *, size_t *);
  int (*farm_reply)(ft_farm_task *, const void *, size_t);
  int (*farm_checkpoint)(ft_farm_task *, const void *, size_t);
} api;

/* What a master's program saw: one entry per call. */
enum {
  CALL_SEND = 1,
  CALL_RECV,
  CALL_RESTORE,
  CALL_STOP,
  CALL_POST,
  CALL_PROBE,
  CALL_TEST,
  CALL_TESTANY,
  CALL_BCAST,
  CALL_NEXT /* the farm layer's ft_farm_next */
};
extern const char *const sim_call_names[];

typedef struct {
  int call, rc, err, source;
  int64_t task, value;
  uint64_t at; /* when the call returned (not compared) */
} outcome;

typedef struct {
  api f;
  int role_master;
  outcome *seen;
  int nseen;
  int ended_primary, in_last_call, finalized;
  int init_failed_cut; /* ft_init failed once a partition had cut it off */
  uint64_t primary_at;
  int64_t results[MAX_TASKS];
  int got[MAX_TASKS];
  char failure[256];
} program;

/* What a schedule asks of the programs, and what they tell it. */
/* Which program: the thesis' farm with ft_* calls, or one with ms_*
 * calls, whose failures are recovered from by ms_restore/ms_irestore
 * alone (docs/logging.md): multistart's shape (the logged farm), or the
 * thesis' figure 4.6 (the logged rounds: each round gives every worker a
 * task, then receives every answer by name, in one or two parts, the
 * replay receiving what the failed call should have). Both first send
 * the problem, by ms_send to each worker or by ms_bcast; a worker's result
 * depends on it, so a replay that lost it is seen. Or the farm layer
 * (ftmw_farm.h), which recovers by itself: its master submits the tasks
 * and takes every result by ft_farm_next, its workers run ft_farm_work. */
enum { PROG_FT, PROG_MS_FARM, PROG_MS_ROUNDS, PROG_LAYER, PROG_KINDS };
extern const char *const sim_prog_names[];

/* How the master takes its results: ft_recv(FT_ANY_SOURCE); a receive
 * posted for each worker given a task (ft_irecv), completed by
 * ft_waitany; or ft_probe(FT_ANY_SOURCE), then ft_recv from the worker it
 * found. The logged farm: ms_recv(FT_ANY_SOURCE), or ms_irecv with its
 * task's tag, completed by ft_waitany and restored by ms_irestore
 * (multistart's way); never ft_probe. */
enum { TAKE_RECV, TAKE_WAITANY, TAKE_PROBE, TAKE_KINDS };
extern const char *const sim_take_names[];

typedef struct {
  int tasks;
  int prog;        /* PROG_*: which program */
  int two_parts;   /* two messages per answer: PROG_FT, PROG_MS_ROUNDS */
  int by_bcast;    /* the ms_* programs' problem: by ms_bcast (else ms_send) */
  int64_t problem; /* the ms_* programs' problem: added to each result */
  int depth;       /* the farm layer's tasks in flight per worker */
  int duplicate;   /* ... a quarter of its tasks run twice and compared */
  int checkpoints; /* ... each task saves a checkpoint halfway */
  int take;      /* TAKE_*: how the master takes results */
  int tests;     /* the master asks ft_testany before it takes each
                    result, and ft_test before each task it gives: a
                    failure it finds is recovered from at once */
  int launched;  /* processes out of ft_init (spares never are) */
} sim_farm_job;

extern sim_farm_job sim_farm;
extern program sim_progs[SIM_MAX_NODES];

/* Binds f to the calls of one copy of the library (exits if one lacks). */
void sim_farm_bind(api *f, void *lib);

/* A node's application: ft_init, then the master's or the worker's part,
 * then exit; its program is sim_progs[node->id]. */
void sim_farm_app(void *node);

#endif
