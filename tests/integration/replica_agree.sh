#!/bin/sh
# Master replicas agree: with FT_FAULT killing a worker at one point of the
# protocol, every master (primary and M replicas, each printing, as the
# program does not guard its output) prints the same result line, which
# must match the extended regex WANT, and reports the worker's failure from the same API calls,
# in the same order (from the FT_TRACE failure_reported events).
# With DEAD=N in the environment, N masters are killed by FAULT: the
# survivors must agree.
# Usage: replica_agree.sh FTMWRUN "FTMWRUN-OPTIONS" M FAULT WANT PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 m=$3 fault=$4 want=$5 prog=$6
shift 6
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
FT_TRACE=$tmp/trace FT_FAULT=$fault "$ftmwrun" $opts -m "$m" "$prog" "$@" > "$tmp/out" 2>&1
rc=$?
grep -v PMIX "$tmp/out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
live=$((m + 1 - ${DEAD:-0}))
n=$(grep -c -x -E "$want" "$tmp/out")
[ "$n" -eq "$live" ] || { echo "FAIL: '$want' printed $n times, want $live"; exit 1; }
[ "$(grep -x -E "$want" "$tmp/out" | sort -u | grep -c .)" -eq 1 ] ||
  { echo "FAIL: the masters printed different results"; exit 1; }
other=$(grep -v -x -E "$want" "$tmp/out" | grep -c '^sum')
[ "$other" -eq 0 ] || { echo "FAIL: a master printed another result"; exit 1; }
pids=$(grep '"role":"master"' "$tmp/trace" | grep '"event":"finalize"' |
       sed 's/.*"pid":\([0-9]*\).*/\1/' | sort -u)
[ "$(echo "$pids" | grep -c .)" -eq "$live" ] || { echo "FAIL: want $live masters finalizing in the trace"; exit 1; }
first=
for p in $pids; do
  calls=$(grep "\"pid\":$p,\"event\":\"failure_reported\"" "$tmp/trace" |
          sed 's/.*"peer":"\([^"]*\)","call":"\([a-z_]*\)".*/\1 \2/' | tr '\n' ';')
  echo "master pid $p reported: ${calls:-nothing}"
  if [ -z "$first" ]; then first="x$calls"; elif [ "$first" != "x$calls" ]; then
    echo "FAIL: the masters reported the failure at different calls"; exit 1; fi
done
echo PASS
