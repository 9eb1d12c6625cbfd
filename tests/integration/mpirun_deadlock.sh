#!/bin/sh
# ftmwrun ends an mpirun that outlives its job. A stand-in mpirun.openmpi
# runs one process for 5 s, then waits for ever with none:
#  - having written the primary's status (7): ftmwrun ends it 10 s after
#    the status (the job's end, whatever runs where), and exits 7;
#  - having written none (Open MPI's PMIx deadlock after a death,
#    docs/known-problems.md): ftmwrun ends it about 10 s after its last
#    process (60 s if a loaded machine kept it from seeing the process),
#    and exits non-zero.
# Usage: mpirun_deadlock.sh FTMWRUN
set -u
ftmwrun=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { # STATUS-LINE WANT-RC WANT-MESSAGE MIN-SECONDS
  printf '%s\nsleep 5\nexec sleep 1000\n' "$1" > "$tmp/mpirun.openmpi"
  chmod +x "$tmp/mpirun.openmpi"
  start=$(date +%s)
  PATH=$tmp:$PATH "$ftmwrun" --mpi openmpi -w 1 /bin/true > "$tmp/out" 2>&1
  rc=$? took=$(($(date +%s) - start))
  cat "$tmp/out"
  case $2 in
    nonzero) [ "$rc" -ne 0 ] || { echo "FAIL: exit status 0"; exit 1; } ;;
    *) [ "$rc" -eq "$2" ] || { echo "FAIL: exit status $rc, want $2"; exit 1; } ;;
  esac
  grep -q -E "$3" "$tmp/out" || { echo "FAIL: no message matching '$3'"; exit 1; }
  [ "$took" -ge "$4" ] || { echo "FAIL: ended after $took s, before the limit"; exit 1; }
  echo "PASS (ended after $took s)"
}
check 'echo 7 > "$FTMW_STATUS_FILE"' 7 "the primary master exited 10 s ago, and mpirun.openmpi has not" 10
check ':' nonzero "has not exited in [16]0 s" 12
