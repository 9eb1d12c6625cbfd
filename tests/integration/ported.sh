#!/bin/sh
# A ported program (examples/ported/) against its original: the original,
# run as plain MPI (the mpiexec line of ftmwrun --dry-run REF-OPTIONS:
# give --static and as many workers),
# and the port, run with FT_FAULT=FAULT ("none": no fault), must print the
# same standard output and write the same output file, byte for byte; the
# port must exit 0 and have restored workers RESTORES times (from its
# trace). Each run has a working directory of its own; the output file is
# OUTFILE there (default "out"), and @OUT@ in ARGS stands for its path (in
# the standard output, the token replaces it again). SKIP="OFFSET:LENGTH"
# leaves those bytes of it out of the comparison. INPUT ("-": none) is
# both runs' standard input. With RESULT set (an extended regex), only the
# output lines that match it are compared (with SORTED=1, in any order); with TOLERANCE too, their
# numbers may differ by that much (a sum whose order MPI leaves open). No
# line of the port's trace may match TRACE_NONE, if set (an extended regex).
# Usage: ported.sh FTMWRUN "REF-OPTIONS" "FTMWRUN-OPTIONS" FAULT RESTORES INPUT
#                  ORIGINAL PORT [ARGS...]
set -u
ftmwrun=$1 ref_opts=$2 opts=$3 fault=$4 want_rest=$5 input=$6 orig=$7 port=$8
shift 8
. "$(dirname "$0")/workdir.sh"
. "$(dirname "$0")/spawn_hangs.sh"
[ "$input" = - ] && input=/dev/null
# The runs start in directories of their own: every path must hold there.
abs() { case $1 in /*) echo "$1";; *) echo "$(pwd)/$1";; esac; }
ftmwrun=$(abs "$ftmwrun") orig=$(abs "$orig") port=$(abs "$port") input=$(abs "$input")
# What ftmwrun sets for the line it runs: Open MPI refuses root without it.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
outfile=${OUTFILE:-out}
# run NAME COMMAND...: runs COMMAND (its words, with @OUT@ made the output
# file's path) in $tmp/NAME.d: $tmp/NAME.out, .err, .rc
run() {
  name=$1; shift
  rm -rf "$tmp/$name.d"; mkdir "$tmp/$name.d"
  cmd=
  for a in "$@"; do
    [ "$a" = @OUT@ ] && a=$tmp/$name.d/$outfile
    cmd="$cmd $a"
  done
  # shellcheck disable=SC2086
  (cd "$tmp/$name.d" && eval "$cmd") < "$input" > "$tmp/$name.out" 2> "$tmp/$name.err"
  echo $? > "$tmp/$name.rc"
  sed -i "s|$tmp/$name.d/$outfile|@OUT@|g" "$tmp/$name.out"
  # MPICH's mpiexec adds a banner when it saw a process end by a signal
  # (docs/known-problems.md): the launcher's words, not the program's.
  # Open MPI's PMIx server may print its harmless error on the standard
  # output after a death (docs/known-problems.md): mpirun's, not the
  # program's either.
  sed -i -e '/^YOUR APPLICATION TERMINATED WITH THE EXIT STRING: /d' -e '/PMIX ERROR: /d' \
    -e '/^This typically refers to a problem with your application\.$/d' \
    -e '/^Please see the FAQ page for debugging suggestions$/d' "$tmp/$name.out"
}
# The output file without the SKIP range: $tmp/NAME.file
kept() {
  f=$tmp/$1.d/$outfile
  [ -e "$f" ] || return 0
  if [ -n "${SKIP:-}" ]; then
    off=${SKIP%%:*} len=${SKIP#*:}
    { head -c "$off" "$f"; tail -c +$((off + len + 1)) "$f"; } > "$tmp/$1.file"
  else
    cp "$f" "$tmp/$1.file"
  fi
}
# shellcheck disable=SC2086
line=$("$ftmwrun" --dry-run $ref_opts "$orig" "$@") || exit 1
(unset FT_FAULT FT_TRACE; run ref $line)
[ "$(cat "$tmp/ref.rc")" = 0 ] || { cat "$tmp/ref.out" "$tmp/ref.err"; echo "FAIL: the original failed"; exit 1; }
echo "== original $(basename "$orig") ($ref_opts): $(wc -l < "$tmp/ref.out") lines"
[ "$fault" = none ] || export FT_FAULT="$fault"
export FT_TRACE=$tmp/trace
# A fault fires at a process's Nth call of a kind; one the machine starved
# may not get that far before the others finish: run again (3 runs at most).
for attempt in 1 2 3; do
  rm -f "$tmp/trace"
  # shellcheck disable=SC2086
  run port "$ftmwrun" $opts "$port" "$@"
  grep -v PMIX "$tmp/port.err"
  [ "$fault" = none ] || grep -q '"event":"fault_injected"' "$tmp/trace" || {
    [ $attempt -lt 3 ] && { echo "== the fault did not fire: again"; continue; }
    echo "FAIL: the fault did not fire in 3 runs"; exit 1; }
  spawn_wedged "$tmp/trace" $attempt && continue
  break
done
[ "$(cat "$tmp/port.rc")" = 0 ] || { cat "$tmp/port.out"; echo "FAIL: the port exited $(cat "$tmp/port.rc")"; exit 1; }
if [ -n "${RESULT:-}" ]; then
  for n in ref port; do grep -E "$RESULT" "$tmp/$n.out" > "$tmp/$n.res"; done
  [ -s "$tmp/ref.res" ] || { echo "FAIL: the original printed no line matching '$RESULT'"; exit 1; }
else
  for n in ref port; do cp "$tmp/$n.out" "$tmp/$n.res"; done
fi
# SORTED=1: the lines in any order (several processes print, and MPI
# interleaves their output as it comes).
if [ -n "${SORTED:-}" ]; then
  for n in ref port; do sort -o "$tmp/$n.res" "$tmp/$n.res"; done
fi
if [ -n "${TOLERANCE:-}" ]; then
  # Field by field: numbers within TOLERANCE, every other word the same.
  paste -d '\n' "$tmp/ref.res" "$tmp/port.res" | awk -v tol="$TOLERANCE" '
    NR % 2 == 1 { ref = $0; next }
    { n = split(ref, a, /[ ,=]+/); m = split($0, b, /[ ,=]+/)
      if (n != m) bad = 1
      for (i = 1; i <= n; i++) {
        if (a[i] ~ /^-?[0-9.]+(e-?[0-9]+)?$/ && b[i] ~ /^-?[0-9.]+(e-?[0-9]+)?$/) {
          d = a[i] - b[i]; if (d < 0) d = -d; if (d > tol) bad = 1
        } else if (a[i] != b[i]) bad = 1
      }
      if (bad) { print "differs: " ref " | " $0; exit 1 } }' ||
    { echo "FAIL: the results differ by more than $TOLERANCE"; exit 1; }
  [ "$(wc -l < "$tmp/ref.res")" = "$(wc -l < "$tmp/port.res")" ] ||
    { echo "FAIL: not as many result lines"; exit 1; }
else
  diff "$tmp/ref.res" "$tmp/port.res" || { echo "FAIL: the standard output differs"; exit 1; }
fi
kept ref; kept port
if [ -e "$tmp/ref.file" ] || [ -e "$tmp/port.file" ]; then
  cmp "$tmp/ref.file" "$tmp/port.file" || { echo "FAIL: the output file differs"; exit 1; }
fi
rest=$(grep -c '"event":"restore_finished"' "$tmp/trace")
[ "$rest" -eq "$want_rest" ] || { echo "FAIL: $rest restores, want $want_rest"; exit 1; }
if [ -n "${TRACE_NONE:-}" ] && grep -E "$TRACE_NONE" "$tmp/trace"; then
  echo "FAIL: trace lines above match '$TRACE_NONE'"; exit 1
fi
echo "ported: same output$( [ -e "$tmp/ref.file" ] && echo " and file ($(wc -c < "$tmp/ref.file") bytes)"), $rest restores"
