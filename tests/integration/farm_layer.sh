#!/bin/sh
# A job of the farm layer (examples/taskfarm) with faults: it must exit 0,
# print the checksum of a fault-free run of the same tasks (SAME) or
# another one (DIFF: a task could not be done), every line matching the
# regexes of EXPECT (" && "-separated), and no protocol error in its trace.
# With replicas (-m in OPTIONS) every live master prints its result
# (--every-master): all must print the same lines.
# Usage: farm_layer.sh FTMWRUN "OPTIONS" PROGRAM "TASK-ARGS" "FAULT-ARGS"
#                      FT_FAULT|none SAME|DIFF   (FAULT-ARGS "-": none)
set -u
ftmwrun=$1 opts=$2 prog=$3 args=$4 faults=$5 fault=$6 same=$7
[ "$faults" = - ] && faults=
. "$(dirname "$0")/workdir.sh"
# shellcheck disable=SC2086
"$(dirname "$0")/reference.sh" "$tmp/ref" "$ftmwrun" "$opts" "$prog" $args || exit 1
want=$(grep '^checksum' "$tmp/ref")
echo "== reference: $want"
[ "$fault" = none ] || export FT_FAULT="$fault"
export FT_TRACE="$tmp/trace"
. "$(dirname "$0")/spawn_hangs.sh"
echo "== $(basename "$prog") $args $faults (FT_FAULT=$fault; $opts)"
for attempt in 1 2 3; do
  rm -f "$tmp/trace"
  # shellcheck disable=SC2086
  "$ftmwrun" $opts "$prog" $args $faults --every-master > "$tmp/out" 2> "$tmp/err"
  rc=$?
  grep -v PMIX "$tmp/err"
  spawn_wedged "$tmp/trace" $attempt && continue
  break
done
cat "$tmp/out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
got=$(grep '^checksum' "$tmp/out" | sort -u)
[ "$(echo "$got" | grep -c .)" -eq 1 ] || { echo "FAIL: the masters printed '$got'"; exit 1; }
for line in tasks failures backups duplicated; do # every master: the same
  n=$(grep "^$line " "$tmp/out" | sort -u | grep -c .)
  [ "$n" -eq 1 ] || { echo "FAIL: the masters disagree on '$line'"; exit 1; }
done
if [ "$same" = SAME ]; then
  [ "$got" = "$want" ] || { echo "FAIL: $got, want the fault-free $want"; exit 1; }
else
  [ "$got" != "$want" ] || { echo "FAIL: $got, the fault-free checksum, want another"; exit 1; }
fi
spawn_hangs "$tmp/trace"
[ "$hangs" -gt 0 ] && [ -n "${EXPECT:-}" ] && EXPECT=$(widen "$EXPECT")
if [ -n "${EXPECT:-}" ]; then
  echo "$EXPECT" | sed 's/ && /\n/g' | while read -r re; do
    cat "$tmp/out" "$tmp/err" | grep -q -E "$re" || { echo "FAIL: no line matching '$re'"; exit 1; }
  done || exit 1
fi
"$(dirname "$0")/no_protocol_errors.sh" "$tmp/trace" || exit 1
echo "PASS"
