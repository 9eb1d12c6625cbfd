/* The job's exit status, and the loop's side of ending the job
 * (abort.h). */
#include "abort.h"

#include "ftmw_impl.h"
#include "leave.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Calls fn on every peer slot of this process: masters, workers, spares. */
static void each_peer(ftmw_ctx *cx, void (*fn)(ftmw_peer *p, int *arg),
                      int *arg) {
  for (int k = 0; k <= cx->job.M && cx->st.masters; k++)
    fn(&cx->st.masters[k], arg);
  for (int r = 1; r <= cx->job.W && cx->st.workers; r++)
    fn(&cx->st.workers[r], arg);
  for (int s = 0; s < cx->job.S && cx->st.spares; s++)
    fn(&cx->st.spares[s], arg);
}

static void tell(ftmw_peer *p, int *code) {
  if (p->conn && !p->abort_heard)
    ftmw_link_send(p->conn, FTMW_FRAME_ABORT, *code, 0, 0, NULL, 0);
}

static void count_waited(ftmw_peer *p, int *n) {
  if (p->conn && !p->abort_heard)
    ++*n;
}

void ftmw_abort_start(ftmw_ctx *cx, int code, const ftmw_peer *from) {
  if (__atomic_load_n(&cx->st.aborting, __ATOMIC_RELAXED))
    return;
  cx->abort_code = code;
  __atomic_store_n(&cx->st.aborting, 1, __ATOMIC_RELAXED);
  if (from)
    ftmw_log("%s %d ended the job (ft_abort(%d)); %s %d exits",
             ftmw_role_name(from->kind), from->id, code,
             ftmw_role_name(cx->job.role), cx->job.id);
  ftmw_trace("abort", "\"code\":%d,\"from\":%d", code,
             from ? (int)from->pid_wire : -1);
  each_peer(cx, tell, &code);
  cx->abort_until = ftmw_now_ms() + FTMW_ABORT_WAIT_MS;
  ftmw_abort_poll(cx);
}

void ftmw_abort_poll(ftmw_ctx *cx) {
  if (!__atomic_load_n(&cx->st.aborting, __ATOMIC_RELAXED))
    return;
  int waited = 0;
  each_peer(cx, count_waited, &waited);
  if (waited > 0 && ftmw_now_ms() < cx->abort_until)
    return;
  if (waited > 0)
    ftmw_leave(FTMW_LEAVE_JOB_ENDED, cx->abort_code,
               "the job is ended; %d process(es) did not close within %d ms",
               waited, FTMW_ABORT_WAIT_MS);
  ftmw_leave(FTMW_LEAVE_JOB_ENDED, cx->abort_code, "the job is ended");
}
