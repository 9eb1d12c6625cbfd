/* The job's exit status, and the loop's side of ending the job
 * (abort.h). */
#include "abort.h"

#include "ftmw_impl.h"
#include "leave.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define st ftmw_st
#define job ftmw_job

static int abort_code; /* the loop's owner: the status, once st.aborting */
static uint64_t abort_until;

/* Calls fn on every peer slot of this process: masters, workers, spares. */
static void each_peer(void (*fn)(ftmw_peer *p, int *arg), int *arg) {
  for (int k = 0; k <= job.M && st.masters; k++)
    fn(&st.masters[k], arg);
  for (int r = 1; r <= job.W && st.workers; r++)
    fn(&st.workers[r], arg);
  for (int s = 0; s < job.S && st.spares; s++)
    fn(&st.spares[s], arg);
}

static void tell(ftmw_peer *p, int *code) {
  if (p->conn && !p->abort_heard)
    ftmw_link_send(p->conn, FTMW_FRAME_ABORT, *code, 0, 0, NULL, 0);
}

static void count_waited(ftmw_peer *p, int *n) {
  if (p->conn && !p->abort_heard)
    ++*n;
}

void ftmw_abort_start(int code, const ftmw_peer *from) {
  if (__atomic_load_n(&st.aborting, __ATOMIC_RELAXED))
    return;
  abort_code = code;
  __atomic_store_n(&st.aborting, 1, __ATOMIC_RELAXED);
  if (from)
    ftmw_log("%s %d ended the job (ft_abort(%d)); %s %d exits",
             ftmw_role_name(from->kind), from->id, code,
             ftmw_role_name(job.role), job.id);
  ftmw_trace("abort", "\"code\":%d,\"from\":%d", code,
             from ? (int)from->pid_wire : -1);
  each_peer(tell, &code);
  abort_until = ftmw_now_ms() + FTMW_ABORT_WAIT_MS;
  ftmw_abort_poll();
}

void ftmw_abort_poll(void) {
  if (!__atomic_load_n(&st.aborting, __ATOMIC_RELAXED))
    return;
  int waited = 0;
  each_peer(count_waited, &waited);
  if (waited > 0 && ftmw_now_ms() < abort_until)
    return;
  if (waited > 0)
    ftmw_leave(FTMW_LEAVE_JOB_ENDED, abort_code,
               "the job is ended; %d process(es) did not close within %d ms",
               waited, FTMW_ABORT_WAIT_MS);
  ftmw_leave(FTMW_LEAVE_JOB_ENDED, abort_code, "the job is ended");
}
