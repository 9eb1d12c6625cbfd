#!/bin/sh
# Runs one job test: a command in its own session, bounded in time, every
# process it started killed (by process group and session) when it ends.
# Usage: run_job.sh SECONDS COMMAND [ARGS...]
limit=$1; shift
setsid "$@" &
pid=$!
# The watchdog ends its own sleep when told to stop, so that nothing keeps
# the test's output open after the job.
(
  trap 'kill "$s" 2>/dev/null; exit 0' TERM
  sleep "$limit" & s=$!
  wait "$s"
  echo "run_job: timed out after ${limit}s: $*" >&2
  # TERM first, so that the test removes what it made (a cluster and its
  # Slurm, integration/workdir.sh); 5 s later, KILL whatever is left.
  kill -TERM -"$pid" 2>/dev/null
  i=0
  while [ $i -lt 10 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
  kill -KILL -"$pid" 2>/dev/null
  pkill -KILL -s "$pid" 2>/dev/null
) &
watchdog=$!
wait "$pid"
rc=$?
kill -TERM "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
kill -KILL -"$pid" 2>/dev/null
# mpirun puts its children in process groups of their own, in the session.
pkill -KILL -s "$pid" 2>/dev/null
exit $rc
