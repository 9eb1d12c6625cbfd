#!/bin/sh
# Master replicas agree: with FT_FAULT killing processes at points of the
# protocol, every live master (primary and M replicas, each printing: the
# program does not guard its output) prints the same result lines, and
# reports the workers' failures from the same API calls, in the same order
# (from the FT_TRACE failure_reported events).
# WANT holds extended regexes separated by " && ": each must match exactly
# one line of every live master, the same line. With REF_OPTS set, the
# line matching the first one must also equal that of a fault-free run
# with those ftmwrun options. With DEAD=N in the environment, N masters
# are killed by FAULT: the survivors must agree. FAULT "none": no fault.
# EXPECT_ERR, if set: extended regexes separated by " && ", each of which
# must match a line of the library's messages (standard error).
# Usage: replica_agree.sh FTMWRUN "FTMWRUN-OPTIONS" M FAULT WANT PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 m=$3 fault=$4 want=$5 prog=$6
if [ "$fault" = none ]; then unset FT_FAULT; else export FT_FAULT="$fault"; fi
shift 6
. "$(dirname "$0")/workdir.sh"
if [ -n "${REF_OPTS:-}" ]; then
  "$(dirname "$0")/reference.sh" "$tmp/ref" "$ftmwrun" "$REF_OPTS" "$prog" "$@" || exit 1
fi
# Standard output (the results) apart from error (the library's messages):
# merged, a message could land in the middle of a result line.
# shellcheck disable=SC2086
FT_TRACE=$tmp/trace "$ftmwrun" $opts -m "$m" "$prog" "$@" > "$tmp/out" 2> "$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err" | grep -v PMIX
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
if [ -n "${EXPECT_ERR:-}" ]; then
  echo "$EXPECT_ERR" | sed 's/ && /\n/g' | while read -r re; do
    grep -q -E "$re" "$tmp/err" || { echo "FAIL: no message matching '$re'"; exit 1; }
  done || exit 1
fi
"$(dirname "$0")/no_protocol_errors.sh" "$tmp/trace" || exit 1
# A master asked for an outcome it had dropped (replica.c, tell_verdict_to).
if grep -q "is no longer kept" "$tmp/err"; then
  echo "FAIL: a master lacked the outcome of an exchange it was asked about"; exit 1
fi
live=$((m + 1 - ${DEAD:-0}))
first=1
echo "$want" | sed 's/ && /\n/g' > "$tmp/want"
while read -r re; do
  n=$(grep -c -x -E "$re" "$tmp/out")
  [ "$n" -eq "$live" ] || { echo "FAIL: '$re' printed $n times, want $live"; exit 1; }
  [ "$(grep -x -E "$re" "$tmp/out" | sort -u | grep -c .)" -eq 1 ] ||
    { echo "FAIL: the masters printed different results"; exit 1; }
  word=${re%% *}
  [ "$(grep "^$word " "$tmp/out" | grep -v -x -c -E "$re")" -eq 0 ] ||
    { echo "FAIL: a master printed another '$word' line"; exit 1; }
  if [ -n "${REF_OPTS:-}" ] && [ $first = 1 ]; then
    ref=$(grep -x -E "$re" "$tmp/ref")
    [ "$(grep -x -E "$re" "$tmp/out" | head -1)" = "$ref" ] ||
      { echo "FAIL: not the fault-free result '$ref'"; exit 1; }
  fi
  first=0
done < "$tmp/want" || exit 1
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
