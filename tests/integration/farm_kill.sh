#!/bin/sh
# A farm run with FT_FAULT=$FAULT prints the fault-free checksum, and
# counts the expected failures and restores itself, with no task counted
# twice. See kill_job.sh for FAULT and CALLS. FARM_ARGS, if set, adds
# options to the farm's (e.g. --pipeline 4).
# Usage: farm_kill.sh FTMWRUN FARM "FTMWRUN-OPTIONS" FAULT FAILURES RESTORES [CALLS]
set -u
ftmwrun=$1 farm=$2 opts=$3 fault=$4 want_fail=$5 want_rest=$6 calls=${7:-any}
# shellcheck disable=SC2086 # FARM_ARGS: options, split
EXPECT="failures $want_fail restores $want_rest duplicates 0" exec \
  "$(dirname "$0")/kill_job.sh" "$ftmwrun" "$opts" "$fault" "$want_fail" "$want_rest" \
  "$calls" '^checksum' "$farm" "$farm" --tasks 300 --work-us 2000 ${FARM_ARGS:-}
