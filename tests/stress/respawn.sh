#!/bin/sh
# Stress test for respawns right after deaths (not part of CI): runs the
# figure 4.6 program with worker 2 killed and its replacement killed during
# the replay (two respawns a run), RUNS times, and counts runs that hang
# (over 15 s) or fail. On a hang it saves the stacks of every process of
# the job (gdb) in OUTDIR. Spawn mode, Open MPI.
# Usage: tests/stress/respawn.sh BUILD_DIR [RUNS] [OUTDIR]
set -u
build=$(cd "$1" && pwd); runs=${2:-100}; outdir=${3:-/tmp/ftmw-respawn}
mkdir -p "$outdir"
hangs=0 fails=0
for i in $(seq 1 "$runs"); do
  trace=$outdir/trace.json; rm -f "$trace"
  FT_HEARTBEAT_MS=100 FT_TIMEOUT_MS=1000 FT_TRACE=$trace \
    FT_FAULT="recv.exit:4@2,recv.enter:2@2/1" \
    setsid "$build/ftmwrun" -w 3 "$build/examples/fig4_6" > "$outdir/out" 2>&1 &
  job=$!
  n=0
  while kill -0 "$job" 2>/dev/null && [ "$n" -lt 150 ]; do sleep 0.1; n=$((n + 1)); done
  if kill -0 "$job" 2>/dev/null; then
    hangs=$((hangs + 1))
    echo "run $i: hung; stacks in $outdir/hang$i.*"
    for p in $(pgrep -f "$build/examples/fig4_6|mpirun"); do
      gdb -p "$p" -batch -ex 'thread apply all bt' > "$outdir/hang$i.$p" 2>&1
    done
    cp "$trace" "$outdir/hang$i.trace.json"
    kill -KILL -"$job"
  elif ! wait "$job" || ! grep -q '^sum 954$' "$outdir/out"; then
    fails=$((fails + 1))
    echo "run $i: failed"; cat "$outdir/out"
  fi
done
echo "respawn: $runs runs, $hangs hung, $fails failed"
