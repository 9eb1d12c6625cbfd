/* The one way the library ends a process (leave.h). */
#include "leave.h"
#include "coverage.h"

#include "identity.h"
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const ftmw_leave_info ftmw_leave_reasons[FTMW_LEAVE_REASONS] = {
    [FTMW_LEAVE_FENCED] = {"fenced", 3, 0, 0, 0, 0, "`transport.c` `fenced`",
                           "any process",
                           "a master declared it failed (FENCE): the job "
                           "went on without it; it leaves as if it had "
                           "crashed"},
    [FTMW_LEAVE_ORPHANED] = {"orphaned", 3, 0, 0, 0, 0,
                             "`transport.c` `on_tick`", "worker or spare",
                             "every master is gone, for a timeout"},
    [FTMW_LEAVE_CUT_OFF] = {"cut_off", 4, 0, 0, 0, 0, "`partition.c`", "master",
                            "it reaches no majority of the "
                            "masters, or no other host: it steps down for "
                            "those that can go on"},
    [FTMW_LEAVE_DIVERGED] = {"diverged", 70, 0, 0, 0, 1,
                             "`replica.c` `diverged`, `replica_takeover.c` "
                             "`ftmw_rep_abandon`",
                             "replica master",
                             "its program made another call than the "
                             "primary decided, or, having taken over, it "
                             "lacks a message only the dead primary took "
                             "and another live process saw what that one "
                             "did next: it cannot follow"},
    [FTMW_LEAVE_NO_MEMORY] = {"no_memory", 70, 0, 0, 0, 1,
                              "`replica_outcomes.c` `ftmw_rep_keep_outcome`, "
                              "`farm_task.c` `ftmw_farm_must`",
                              "master",
                              "out of memory for what every "
                              "master must hold alike (an exchange's "
                              "outcome for the replicas, the farm's "
                              "state): its death is a failover, or the "
                              "end of a job without replicas"},
    [FTMW_LEAVE_FARM_BROKEN] = {"farm_broken", 70, 0, 0, 0, 1,
                                "`farm_worker.c` `leave`", "farm worker",
                                "a TASK it cannot take (malformed, or no "
                                "memory for it): the master restores it "
                                "and hands its copies out again"},
    [FTMW_LEAVE_TERMINATED] = {"terminated", 143, 1, 1, 0, 1,
                               "`term.c` `leave`", "any process after SIGTERM",
                               "a worker computing when the primary's "
                               "`ft_finalize` ends the job (at its BYE); "
                               "any process still running "
                               "`FT_TERM_GRACE_MS` after its SIGTERM"},
    [FTMW_LEAVE_JOB_ENDED] = {"job_ended", -1, 1, 0, 0, 1,
                              "`abort.c` `ftmw_abort_poll`", "every process",
                              "the job is ended (`ft_abort`, an ABORT heard, "
                              "a failure the program ignored): once every "
                              "peer has closed, or after "
                              "`FTMW_ABORT_WAIT_MS`; the status is "
                              "`ft_abort`'s"},
    [FTMW_LEAVE_ABORT_NO_JOB] = {"abort_no_job", -1, 0, 1, 0, 1,
                                 "`api.c` `ft_abort`", "any process",
                                 "`ft_abort` before `ft_init` or after "
                                 "`ft_finalize`: this process only"},
    [FTMW_LEAVE_ABANDONED] = {"abandoned", 1, 0, 0, 0, 1,
                              "`launch.c` set-up watchdog",
                              "a spawned process, before it is part of "
                              "the job",
                              "the master abandoned its spawn (no set-up "
                              "record: no trace file yet)"},
    [FTMW_LEAVE_INIT_FAILED] = {"init_failed", 1, 0, 1, 1, 1,
                                "`error.c` `ftmw_fail`, `mpi/init.c` "
                                "`start`",
                                "any process",
                                "its program called FTMW after `ft_init` "
                                "failed (the reason was said then), or "
                                "`MPI_Init` under the MPI layer failed"},
    [FTMW_LEAVE_REFUSED] = {"refused", 3, 0, 0, 0, 1, "`mpi/init.c`",
                            "any process under the MPI layer, before "
                            "`main`",
                            "the program is built for the other MPI, or "
                            "is a Fortran program"},
    [FTMW_LEAVE_SPARE_UNUSED] = {"spare_unused", 0, 0, 1, 1, 1,
                                 "`launch.c` `spare_wait`",
                                 "spare never activated",
                                 "the job ended (after `MPI_Finalize`): a "
                                 "normal end, with no line on stderr"},
};

void ftmw_write_exit_status(int status) {
  const char *path = getenv("FTMW_STATUS_FILE");
  ftmw_identity self;
  ftmw_identity_get(&self);
  if (!path || !*path || !self.primary)
    return;
  FILE *f = fopen(path, "w");
  if (f) {
    fprintf(f, "%d\n", status);
    fclose(f);
  }
}

static void (*last_step)(void); /* atomic */

void ftmw_leave_set_last_step(void (*step)(void)) {
  __atomic_store_n(&last_step, step, __ATOMIC_RELEASE);
}

void ftmw_leave(int reason, int code, const char *fmt, ...) {
  const ftmw_leave_info *r = &ftmw_leave_reasons[reason];
  int status = (r->status >= 0 ? r->status : code) & 0xff;
  if (fmt != NULL) {
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    ftmw_identity self;
    ftmw_identity_get(&self);
    if (strcmp(self.role, "none") != 0)
      ftmw_log("%s %d: %s; exiting (%d)", self.role, self.id, why, status);
    else
      ftmw_log("process %d: %s; exiting (%d)", (int)getpid(), why, status);
  }
  if (r->record)
    ftmw_write_exit_status(status);
  if (r->flush) {
    fflush(stdout);
    fflush(stderr);
  }
  void (*step)(void) =
      r->end_mpi ? __atomic_exchange_n(&last_step, NULL, __ATOMIC_ACQ_REL)
                 : NULL;
  if (step)
    step();
  ftmw_trace("exit", "\"reason\":\"%s\",\"status\":%d", r->name, status);
  if (r->handlers)
    exit(status);
  ftmw_coverage_dump();
  _exit(status);
}
