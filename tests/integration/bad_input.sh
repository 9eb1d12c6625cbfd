#!/bin/sh
# ftmwrun's options and ft_init's environment checks: each bad input fails
# with a message naming what is wrong, and exits non-zero.
# Usage: bad_input.sh FTMWRUN FARM MPI IGNORE-INIT
set -u
ftmwrun=$1 farm=$2 mpi=$3 ignore_init=$4
fail=0
expect() { # expect STATUS PATTERN COMMAND...
  want=$1 pat=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! echo "$out" | grep -q -- "$pat"; then
    echo "FAIL: '$*' exited $rc (want $want), output lacks '$pat':"; echo "$out" | head -5; fail=1
  else
    echo "ok: $*"
  fi
}
expect 2 "required" "$ftmwrun" "$farm"
expect 2 "expected a whole number" "$ftmwrun" -w x "$farm"
expect 2 "expected a whole number" "$ftmwrun" -w 0 "$farm"
expect 2 "unknown option" "$ftmwrun" -w 2 --bogus "$farm"
expect 2 "expected openmpi or mpich" "$ftmwrun" -w 2 --mpi lam "$farm"
expect 2 "cannot read" "$ftmwrun" -w 2 --hostfile /nonexistent "$farm"
expect 2 "not found" "$ftmwrun" -w 2 ./no-such-program
expect 2 "--agent: './no-such-agent' not found" "$ftmwrun" -w 2 --agent ./no-such-agent "$farm"
expect 2 "not an interface name" "$ftmwrun" -w 2 --iface 'eth0 x' "$farm"
expect 1 "FT_IFACE=nosuch9: no interface of that name" env FT_IFACE=nosuch9 "$ftmwrun" -w 2 "$farm"
expect 1 "FT_IFACE" env FT_IFACE='bad name' "$ftmwrun" -w 2 "$farm"
expect 0 "SYNOPSIS" "$ftmwrun" --help
expect 1 "FT_HEARTBEAT_MS" env FT_HEARTBEAT_MS=abc "$ftmwrun" -w 2 "$farm"
expect 1 "FT_TIMEOUT_MS" env FT_TIMEOUT_MS=10 FT_HEARTBEAT_MS=100 "$ftmwrun" -w 2 "$farm"
expect 1 "FT_SPAWN_TIMEOUT_MS" env FT_SPAWN_TIMEOUT_MS=1s "$ftmwrun" -w 2 "$farm"
expect 1 "FT_FAULT" env FT_FAULT=nowhere "$ftmwrun" -w 2 "$farm"
expect 1 "FT_NUM_MASTERS" "$ftmwrun" -w 2 -m 9 "$farm"
# A program that ignores ft_init's -1 stops at its next call, saying so,
# and prints nothing as rank -1.
expect 1 "after ft_init failed" env FT_HEARTBEAT_MS=abc "$ftmwrun" -w 2 "$ignore_init"
printed=$(env FT_HEARTBEAT_MS=abc "$ftmwrun" -w 2 "$ignore_init" 2>/dev/null | grep -v "PMIX ERROR")
[ -z "$printed" ] || { echo "FAIL: a program past a failed ft_init printed: $(echo "$printed" | head -2)"; fail=1; }
# A killed master with no replica: one line says so, status 125 (not
# the launcher's: hydra's 139 looked like a segfault).
expect 125 "the primary master died" env FT_FAULT=recv.exit:2@m0 "$ftmwrun" -w 2 "$farm"
printf 'good\nbad host name!\n' > "${TMPDIR:-/tmp}/ftmw-bad-hosts.$$"
expect 1 "line 2" env FT_HOSTFILE="${TMPDIR:-/tmp}/ftmw-bad-hosts.$$" "$ftmwrun" -w 2 "$farm"
rm -f "${TMPDIR:-/tmp}/ftmw-bad-hosts.$$"
expect 2 "Usage" "$ftmwrun" -w 2 "$farm" --tasks zero
expect 2 "--worker: '/nonexistent' is not an executable file" "$ftmwrun" -w 2 --worker /nonexistent "$farm"
expect 2 "--worker: '/nonexistent' is not an executable file" \
  env FT_WORKER_PROGRAM=/nonexistent "$ftmwrun" -w 2 "$farm"
if [ "$mpi" = openmpi ]; then
  # Without ftmwrun (its own check comes first): the master checks what it
  # spawns, on the mpirun line ftmwrun would write.
  # shellcheck disable=SC2046
  set -- $("$ftmwrun" --dry-run -w 2 "$farm")
  launcher=$1; shift
  # mpirun --enable-recovery exits 0 whatever the program's status: the
  # status is the one the master wrote.
  status=${TMPDIR:-/tmp}/ftmw-bad-status.$$
  expect 0 'FT_WORKER_PROGRAM="/nonexistent" is invalid: not an executable file' \
    env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FT_NUM_SLAVES=2 \
    FT_NUM_MASTERS=0 FTMW_STATUS_FILE="$status" FT_WORKER_PROGRAM=/nonexistent \
    "$launcher" -x FT_WORKER_PROGRAM "$@"
  [ "$(cat "$status" 2>/dev/null)" = 1 ] || { echo "FAIL: the master's status: $(cat "$status" 2>/dev/null)"; fail=1; }
  rm -f "$status"
fi
# A spawn timeout shorter than a spawn: the workers' spawn is abandoned
# three times, ft_init fails saying so, and the job ends (the processes of
# the abandoned spawns exit on their own).
if [ "$mpi" = openmpi ]; then
  expect 1 "spawn of 3 workers did not complete in 118 ms" \
    env FT_SPAWN_TIMEOUT_MS=100 "$ftmwrun" -w 3 "$farm"
fi
exit $fail
