#!/bin/sh
# How FTMW's MPI layer stops a job: MPI_Abort(7) ends the whole job with
# status 7, what the master printed before it printed once (with a master
# replica too); a call the layer does not provide stops the job at once,
# naming the call, with status 3; a program built for the other MPI is
# refused by ftmwrun (status 2) and, preloaded by hand, by the layer
# itself before main (status 3), each naming both MPIs. A worker whose
# log was let go at FT_MPI_LOG_LIMIT stops the job when it dies (status
# 4); a bad FT_MPI_LOG_LIMIT or FT_MPI_REPLAY stops it at MPI_Init
# (status 2), naming the variable.
# Usage: layer_stops.sh FTMWRUN MPI SUBCOMM-PROG ABORT-PROG "FTMWRUN-OPTIONS" CALLS-PROG
set -u
ftmwrun=$1 mpi=$2 subcomm=$3 abort=$4 opts=$5 calls=$6
. "$(dirname "$0")/../integration/workdir.sh"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }

for m in 0 1; do
  # shellcheck disable=SC2086
  "$ftmwrun" $opts -m $m --transparent "$abort" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ "$rc" -eq 7 ] || fail "MPI_Abort(7) with $m replica(s): status $rc, want 7"
  n=$(grep -c -x 'bad input, aborting' "$tmp/out")
  [ "$n" -eq 1 ] || fail "MPI_Abort with $m replica(s): the master's line printed $n times, want 1"
done
echo "== MPI_Abort(7): status 7, its line printed once, with 0 and 1 replica"

# shellcheck disable=SC2086
"$ftmwrun" $opts --transparent "$subcomm" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 3 ] || fail "a split communicator: status $rc, want 3"
grep -q 'ftmw-mpi: MPI_Comm_split: not supported' "$tmp/err" || fail "no line names MPI_Comm_split"
grep -q 'of its half' "$tmp/out" && fail "the program went on past the refused call"
echo "== MPI_Comm_split refused (status 3): $(grep -m1 'MPI_Comm_split' "$tmp/err")"

# shellcheck disable=SC2086
FT_MPI_LOG_LIMIT=0 FT_FAULT=recv.exit:30@3 "$ftmwrun" $opts --transparent "$calls" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 4 ] || fail "worker 3 killed, its log let go: status $rc, want 4"
grep -q 'the log of worker 3 passes FT_MPI_LOG_LIMIT' "$tmp/err" || fail "no line says worker 3's log was let go"
grep -q 'worker 3 failed, and its log was let go at FT_MPI_LOG_LIMIT' "$tmp/err" || fail "no line says why the job stopped"
echo "== a dead worker whose log was let go (status 4): $(grep -m1 'its log was let go' "$tmp/err")"
for v in FT_MPI_LOG_LIMIT=-5 FT_MPI_LOG_LIMIT=1k FT_MPI_REPLAY=some; do
  # shellcheck disable=SC2086
  env "$v" "$ftmwrun" $opts --transparent "$calls" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "$v: status $rc, want 2"
  grep -q "ftmw-mpi: ${v%%=*}='${v#*=}': expected" "$tmp/err" || fail "$v: no line names it"
done
echo "== bad FT_MPI_LOG_LIMIT and FT_MPI_REPLAY refused (status 2): $(grep -m1 'expected' "$tmp/err")"

case $mpi in openmpi) other=mpich;; *) other=openmpi;; esac
command -v "mpicc.$other" > /dev/null 2>&1 || { echo "== mpicc.$other not installed: the mismatch is not tried"; exit 0; }
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$tmp/p.c"
"mpicc.$other" -o "$tmp/foreign" "$tmp/p.c" || fail "mpicc.$other failed"
# shellcheck disable=SC2086
"$ftmwrun" $opts --transparent "$tmp/foreign" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "a program built for $other: ftmwrun's status $rc, want 2"
grep -q "is built for .*but this run uses" "$tmp/err" || fail "ftmwrun did not name both MPIs"
echo "== refused by ftmwrun: $(head -1 "$tmp/err")"
layer=$(dirname "$ftmwrun")/libftmw-mpi.so
# (a sanitizer build's layer needs its runtime loaded first, as ftmwrun does)
first=$(ldd "$layer" 2>/dev/null | awk '$1 ~ /^lib[at]san\.so/ { print $3 }')
LD_PRELOAD="${first:+$first }$layer" "$tmp/foreign" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 3 ] || fail "the layer preloaded into a program built for $other: status $rc, want 3"
grep -q "ftmw-mpi: this program is built for" "$tmp/err" || fail "the layer did not name both MPIs"
echo "== refused by the layer: $(head -1 "$tmp/err")"
echo "layer_stops: ok"
