/* The one way the library ends a process.
 *
 * ftmw_leave(reason, code, fmt, ...) says why on stderr ("ftmw: ROLE ID:
 * WHY; exiting (STATUS)"), traces "exit" (reason, status), records the
 * job's exit status for ftmwrun where the reason says so (the primary
 * master only), flushes the program's output where the reason says so,
 * and ends the process with the reason's status (or code, for the
 * reasons whose status is the caller's). The table of reasons
 * (ftmw_leave_reasons) is what docs/architecture.md's table "Where the
 * library ends the process" is generated from (tests/exit_table.c; the
 * test docs.exit_table checks it). A site that has more to say traces
 * its own event first (fenced, diverged, stepped_down, ...). Before it
 * ends the process, it runs the last step set by
 * ftmw_leave_set_last_step (the end of MPI's session, launch.c), where
 * the reason says so.
 *
 * Any thread; no lock held (it takes none). */
#ifndef FTMW_LEAVE_H
#define FTMW_LEAVE_H

enum ftmw_leave_reason {
  FTMW_LEAVE_FENCED,        /* a master declared this process failed */
  FTMW_LEAVE_ORPHANED,      /* every master is gone */
  FTMW_LEAVE_CUT_OFF,       /* a master without a majority steps down */
  FTMW_LEAVE_DIVERGED,      /* a replica cannot follow the primary */
  FTMW_LEAVE_NO_MEMORY,     /* a master cannot hold what every master must */
  FTMW_LEAVE_FARM_BROKEN,   /* a farm worker cannot go on with the farm */
  FTMW_LEAVE_TERMINATED,    /* SIGTERM: stopped, or its grace ran out */
  FTMW_LEAVE_JOB_ENDED,     /* the job was ended (ft_abort, ABORT) */
  FTMW_LEAVE_ABORT_NO_JOB,  /* ft_abort before ft_init or after finalize */
  FTMW_LEAVE_ABANDONED,     /* spawned, and never given its set-up */
  FTMW_LEAVE_INIT_FAILED,   /* the program went on after ft_init failed */
  FTMW_LEAVE_REFUSED,       /* the MPI layer cannot run this program */
  FTMW_LEAVE_SPARE_UNUSED,  /* a spare never activated: the job ended */
  FTMW_LEAVE_REASONS
};

typedef struct ftmw_leave_info {
  const char *name;   /* in the trace's "exit" event */
  int status;         /* the exit status; -1: the caller's code */
  int record;         /* the primary master records it for ftmwrun */
  int flush;          /* the program's buffered output is written first */
  int handlers;       /* exit() (the exit handlers run: a normal end),
                         not _exit() */
  int end_mpi;        /* the MPI session is ended first (the last step,
                         below); not for a process the job went on
                         without, which stops at once, as if it crashed */
  const char *where;  /* the source of the call, for the documentation */
  const char *who;    /* which processes */
  const char *why;    /* when */
} ftmw_leave_info;

extern const ftmw_leave_info ftmw_leave_reasons[FTMW_LEAVE_REASONS];

/* Ends the process (see above). fmt: why, as the line on stderr says it
 * after "ROLE ID: " (NULL: no line, a normal end). */
void ftmw_leave(int reason, int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

/* Records status as the job's exit status for ftmwrun (the file named by
 * FTMW_STATUS_FILE), if this process is the primary master: at its exit,
 * and when the job ends otherwise (ft_abort, SIGTERM). */
void ftmw_write_exit_status(int status);

/* step runs once, in ftmw_leave for a reason whose end_mpi is set, after
 * the line on stderr, the status and the flush, before the "exit" event
 * and the end: launch.c ends the MPI session there (under MPICH PMI's
 * finalize, which may wait up to FTMW_PMI_WAIT_MS: else hydra counts a
 * death, pmi.h). Set once MPI is initialized; NULL: none. */
void ftmw_leave_set_last_step(void (*step)(void));

#endif
