#!/bin/sh
# A port that ignores what its ft_* calls return (ignore_failure.c), with
# worker 2 killed before it answers: FT_ERRORS=checked (the default) stops
# the job with status 5 and one line naming the call that told of the
# failure and the call that ignored it; FT_ERRORS=return lets it run to its
# end (the thesis' convention: the failure was only a return value); a
# program that checks the failure (ft_test) and goes on without the worker
# is not stopped, nor one that reads it in the primary only (a replica
# beside it); a bad FT_ERRORS stops ft_init.
# Usage: ignore_failure.sh FTMWRUN "FTMWRUN-OPTIONS" PROGRAM
set -u
ftmwrun=$1 opts=$2 prog=$3
. "$(dirname "$0")/workdir.sh"
fails=0
# case NAME STATUS REGEX ENV... -- ARGS: runs the program with ENV set, and
# its exit status must be STATUS and its output (both streams) match REGEX.
case_() {
  name=$1 want=$2 re=$3; shift 3
  envs=
  while [ "$1" != -- ]; do envs="$envs $1"; shift; done
  shift
  # shellcheck disable=SC2086 # options and assignments, split
  env FT_FAULT=recv.exit:1@2 $envs "$ftmwrun" $opts "$prog" "$@" > "$tmp/$name" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -q -E "$re" "$tmp/$name"; then
    echo "FAIL $name: status $rc (want $want), output:"; grep -v PMIX "$tmp/$name"
    echo "(wanted a line matching: $re)"
    fails=$((fails + 1))
  else
    echo "ok $name: status $rc; $(grep -E "$re" "$tmp/$name" | head -1 | cut -c1-150)"
  fi
}
case_ farm_sent_again 5 \
  '^ftmw: ft_send: worker 2 failed \(ft_recv returned it\), and the program sent to it again without looking at the failure' \
  -- farm
case_ static_ended 5 \
  '^ftmw: ft_finalize: worker 2 failed \(ft_recv returned it\), and the program ended without looking at the failure' \
  -- static
case_ static_return 0 '^results 3 sum ' FT_ERRORS=return -- static
case_ static_heeded 0 '^results 2 sum 10$' -- static-heeded
# With a master replica, the primary judges: the failure read (and
# printed) in the primary only is heeded.
opts0=$opts opts="$opts -m 1"
case_ replicas1_logged 0 '^results 2 sum 10$' -- static-logged
case_ replicas1_static_ended 5 \
  '^ftmw: ft_finalize: worker 2 failed \(ft_recv returned it\), and the program ended without looking at the failure' \
  -- static
opts=$opts0
case_ bad_value 1 'FT_ERRORS="fatal" is invalid: expected "checked"' FT_ERRORS=fatal -- static
# The job's trace says who ignored what (tracing.md).
FT_TRACE=$tmp/trace FT_FAULT=recv.exit:1@2 "$ftmwrun" $opts "$prog" farm > /dev/null 2>&1
grep -q '"event":"failure_ignored","peer":2,"call":"ft_send","told_by":"ft_recv"' "$tmp/trace" ||
  { echo "FAIL: no failure_ignored event in the trace"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] || exit 1
echo PASS
