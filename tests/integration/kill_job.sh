#!/bin/sh
# A program run with FT_FAULT=$FAULT must print the same result lines as a
# fault-free run of a reference program, exit 0, and (from FT_TRACE) have
# restored workers RESTORES times. FAULT "none" runs without a fault. Unless
# CALLS is "any", the master must have reported FAILURES failures (a
# number, or a range LO-HI),
# each from an API call matching that extended regex. EXPECT, if set in
# the environment, holds regexes (separated by " && ") that lines of the
# faulted run's output (standard output or error) must also match;
# REF_OPTS, if set, replaces FTMWRUN-OPTIONS for the reference run.
# TRACE_WANT, if set, holds extended regexes (" && "-separated) that lines
# of the faulted run's trace must match; no trace line may match
# TRACE_NONE, if set.
# Usage: kill_job.sh FTMWRUN "FTMWRUN-OPTIONS" FAULT FAILURES RESTORES CALLS
#                    RESULT-REGEX REFERENCE-PROGRAM PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 fault=$3 want_fail=$4 want_rest=$5 calls=$6 result=$7 ref_prog=$8 prog=$9
shift 9
. "$(dirname "$0")/workdir.sh"
trace=$tmp/trace
# Each run's output is shown as it comes, so that a run that hangs until
# run_job.sh's limit still shows how far it got. Its standard output (the
# result lines) and error (the library's messages) are kept apart: mpiexec
# forwards them separately, and merged, a message could land in the middle
# of a result line.
run() { # LABEL OPTIONS PROGRAM ARGS...: sets $out (stdout), $all and $rc
  label=$1 o=$2 program=$3; shift 3
  echo "== $label: $(basename "$program") ($o)"
  # fd 3: the program's stdout, on to $tmp/out; fd 4: this script's stdout.
  # shellcheck disable=SC2086
  { { { "$ftmwrun" $o "$program" "$@" 2>&1 >&3 3>&- 4>&-; echo $? > "$tmp/rc"; } |
      tee "$tmp/err" | grep --line-buffered -v PMIX >&4; } 3>&1 |
      tee "$tmp/out" | grep --line-buffered -v PMIX; } 4>&1
  out=$(cat "$tmp/out") all=$(cat "$tmp/out" "$tmp/err") rc=$(cat "$tmp/rc")
}
unset FT_FAULT FT_TRACE
echo "== reference: $(basename "$ref_prog") (${REF_OPTS:-$opts})"
"$(dirname "$0")/reference.sh" "$tmp/ref" "$ftmwrun" "${REF_OPTS:-$opts}" "$ref_prog" "$@" || exit 1
ref=$(cat "$tmp/ref")
echo "$ref"
[ "$fault" = none ] || export FT_FAULT="$fault"
export FT_TRACE="$trace"
. "$(dirname "$0")/spawn_hangs.sh"
# A fault fires at a process's Nth call of a kind; a process the machine
# starved may not get that far before the others finish the work, and then
# nothing was tested: run again (at most 3 runs), saying so; the same
# when Open MPI's spawn hang left a worker unrestored (spawn_hangs.sh).
for attempt in 1 2 3; do
  rm -f "$trace"
  run "FT_FAULT=$fault" "$opts" "$prog" "$@"
  [ "$fault" = none ] || grep -q '"event":"fault_injected"' "$trace" 2> /dev/null || {
    [ $attempt -lt 3 ] && { echo "== the fault did not fire (its process never got that far): again"; continue; }
    echo "FAIL: the fault did not fire in 3 runs"; exit 1; }
  spawn_wedged "$trace" $attempt && continue
  break
done
master() { grep '"role":"master"' "$trace" | grep "\"event\":\"$1\""; }
spawn_hangs "$trace"
[ "$hangs" -gt 0 ] && [ -n "${EXPECT:-}" ] && EXPECT=$(widen "$EXPECT")
want=$(echo "$ref" | grep -E "$result")
got=$(echo "$out" | grep -E "$result")
[ -n "$want" ] && [ "$want" = "$got" ] || { echo "FAIL: result '$got', want '$want' (from $(basename "$ref_prog"))"; exit 1; }
if [ -n "${EXPECT:-}" ]; then
  echo "$EXPECT" | sed 's/ && /\n/g' | while read -r re; do
    echo "$all" | grep -q -E "$re" || { echo "FAIL: no line matching '$re'"; exit 1; }
  done || exit 1
fi
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
if [ -n "${TRACE_WANT:-}" ]; then
  echo "$TRACE_WANT" | sed 's/ && /\n/g' | while read -r re; do
    grep -q -E "$re" "$trace" || { echo "FAIL: no trace line matching '$re'"; exit 1; }
  done || exit 1
fi
if [ -n "${TRACE_NONE:-}" ] && grep -E "$TRACE_NONE" "$trace"; then
  echo "FAIL: trace lines above match '$TRACE_NONE'"; exit 1
fi
"$(dirname "$0")/no_protocol_errors.sh" "$trace" || exit 1
n=$(master restore_finished | grep -c .)
[ "$n" -eq "$want_rest" ] || { echo "FAIL: $n restores in the trace, want $want_rest"; exit 1; }
if [ "$calls" != any ]; then
  reported=$(master failure_reported | sed 's/.*"call":"\([a-z_]*\)".*/\1/')
  n=$(echo "$reported" | grep -c .)
  lo=${want_fail%-*} hi=${want_fail#*-} # FAILURES may be a range, LO-HI
  [ "$hangs" -le 0 ] || hi=$((hi + hangs))
  [ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ] ||
    { echo "FAIL: $n failure reports in the trace, want $want_fail"; exit 1; }
  if echo "$reported" | grep -v -x -E "$calls" | grep -q .; then
    echo "FAIL: failure reported by '$(echo $reported)', want calls matching '$calls'"; exit 1
  fi
  echo "reported by: $(echo $reported)"
fi
echo "PASS"
