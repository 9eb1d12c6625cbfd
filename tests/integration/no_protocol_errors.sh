#!/bin/sh
# Fails when the FT_TRACE file TRACE shows a process that gave up on a peer
# for a protocol error (between processes of one job, whatever dies around
# them, every frame is one the receiver expects), or a peer state change
# that the lifecycle forbids (peer.h: a bug in the library), or a restored
# incarnation (epoch 1 and up) whose ft_init said it started with the job
# (a spare activated while it was still connecting once did), or a process
# that left ft_finalize, or that the library ended, without ending MPI
# (MPI_Finalize, or PMI's own).
# Usage: no_protocol_errors.sh TRACE
bad=$(grep '"event":"failure_detected"' "$1" | grep '"reason":"protocol error')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a protocol error between processes of the job"; exit 1; }
bad=$(grep '"event":"peer_state_refused"' "$1")
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a peer state change the lifecycle forbids"; exit 1; }
bad=$(grep '"event":"launch","restored":0' "$1" | grep -v '"epoch":0,')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a restored worker told it started with the job"; exit 1; }
# Every process at the end of ft_finalize ends MPI (mpi_end), under MPICH
# after a failure by PMI's finalize, which hydra's proxy must acknowledge
# (ftmw/pmi.h: else hydra counts a death, and may lose the job's output).
# So does a process the library ends (an exit event: ft_abort, SIGTERM,
# ...), on its way out (leave.h), but one the job went on without
# (fenced, orphaned, cut off), which stops at once as if it crashed.
bad=$(grep '"event":"mpi_end"' "$1" | grep -v '"by":"MPI_Finalize"\|"by":"the program"\|"by":"PMI finalize","acknowledged":1\|"by":"nothing"')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: hydra's proxy did not acknowledge PMI's finalize"; exit 1; }
if [ "${FTMW_MPI:-}" = mpich ] && grep '"event":"mpi_end","by":"nothing"' "$1"; then
  echo "FAIL: under MPICH, a process ended without telling hydra"; exit 1
fi
bad=$(sed -n 's/.*"pid":\([0-9]*\),"event":"\(finalize\|mpi_end\|exit\)"\(,"reason":"\(fenced\|orphaned\|cut_off\)"\)\{0,1\}.*/\1 \2\4/p' "$1" |
  awk '{ s[$1] = s[$1] " " $2 } END { for (p in s) if (s[p] ~ / finalize| exit/ && s[p] !~ / mpi_end| exit(fenced|orphaned|cut_off)/) print "pid " p ":" s[p] }')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a process left ft_finalize, or was ended, without ending MPI"; exit 1; }
