/* Telling MPICH's launcher that a process ends on purpose.
 *
 * After a failure in the job, ft_finalize does not call MPI_Finalize
 * (launch.c): MPICH's would wait in a PMI barrier for the dead. Hydra's
 * proxy then sees the process's PMI socket close while still in use and
 * reports a death (PROCESS_TERMINATED); mpiexec answers each with a
 * SIGUSR1 to every other proxy. At the end of such a job every process
 * ends at once, and a SIGUSR1 written to a proxy that has just exited
 * kills mpiexec with SIGPIPE (MPICH 4.0.2, -disable-auto-cleanup): the
 * other proxies then kill their processes, and the primary's output not
 * yet forwarded is lost (seen on the namespace cluster: the answer of a
 * job whose primary's host was cut off, missing).
 *
 * PMI-1's "finalize" is MPI_Finalize's last step, without its barrier:
 * the proxy acknowledges it and forgets the socket, so the process's end
 * is an end, not a death. */
#ifndef FTMW_PMI_H
#define FTMW_PMI_H

/* How long a process waits for the proxy's acknowledgement. */
#define FTMW_PMI_WAIT_MS 2000

/* Sends PMI-1's finalize on the socket fd and waits up to timeout_ms for
 * its acknowledgement. Returns 1 once acknowledged; -1 if fd is not a
 * socket, the proxy is gone, does not answer in time, or answers
 * something else. Never raises SIGPIPE. */
int ftmw_pmi_finalize_fd(int fd, int timeout_ms);

/* The same on the socket named by PMI_FD (hydra's, in every process it
 * starts, inherited through ftmw-shim). Returns 0 without PMI_FD, or
 * when it is not a descriptor number. */
int ftmw_pmi_finalize(int timeout_ms);

#endif
