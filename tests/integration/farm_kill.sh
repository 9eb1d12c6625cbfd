#!/bin/sh
# A farm run with FT_FAULT=$FAULT must print the fault-free checksum, with
# the expected failures and restores. FAULT "none" runs without a fault.
# CALLS, when given, is an extended regex that every API call at which the
# master heard of a failure must match (from FT_TRACE's failure_reported).
# Usage: farm_kill.sh FTMWRUN FARM "FTMWRUN-OPTIONS" FAULT FAILURES RESTORES [CALLS]
set -u
ftmwrun=$1 farm=$2 opts=$3 fault=$4 want_fail=$5 want_rest=$6 calls=${7:-}
trace=$(mktemp); trap 'rm -f "$trace"' EXIT
args="--tasks 60 --work-us 2000"
# shellcheck disable=SC2086
ref=$(unset FT_FAULT; "$ftmwrun" $opts "$farm" $args 2>/dev/null) || { echo "reference run failed"; exit 1; }
# shellcheck disable=SC2086
if [ "$fault" = none ]; then
  out=$(unset FT_FAULT; "$ftmwrun" $opts "$farm" $args 2>&1)
else
  out=$(FT_TRACE=$trace FT_FAULT=$fault "$ftmwrun" $opts "$farm" $args 2>&1)
fi
rc=$?
echo "$out" | grep -v PMIX
want_sum=$(echo "$ref" | grep '^checksum')
got_sum=$(echo "$out" | grep '^checksum')
[ -n "$want_sum" ] && [ "$want_sum" = "$got_sum" ] || { echo "FAIL: checksum '$got_sum', want '$want_sum'"; exit 1; }
echo "$out" | grep -q "failures $want_fail restores $want_rest duplicates 0" ||
  { echo "FAIL: want failures $want_fail restores $want_rest duplicates 0"; exit 1; }
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
if [ -n "$calls" ]; then
  reported=$(grep '"role":"master"' "$trace" | grep '"event":"failure_reported"' |
             sed 's/.*"call":"\([a-z_]*\)".*/\1/')
  n=$(echo "$reported" | grep -c .)
  [ "$n" -eq "$want_fail" ] || { echo "FAIL: $n failure reports in the trace, want $want_fail"; exit 1; }
  if echo "$reported" | grep -v -x -E "$calls" | grep -q .; then
    echo "FAIL: failure reported by '$(echo $reported)', want calls matching '$calls'"; exit 1
  fi
  echo "reported by: $(echo $reported)"
fi
echo "PASS"
