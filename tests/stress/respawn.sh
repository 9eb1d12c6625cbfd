#!/bin/sh
# Stress test for respawns during deaths (not part of CI; spawn mode, Open
# MPI), where Open MPI 4.1 can hang a spawn (docs/known-problems.md). Runs
# a scenario RUNS times and counts the spawns FTMW abandoned and made again
# (spawn_abandoned in the trace), the runs that failed, and the runs that
# hung (over 120 s; on a hang it saves the stacks of every process of the
# job, with gdb, in OUTDIR). Scenarios:
#   replay: the figure 4.6 program, worker 2 killed and its replacement
#           killed during the replay (two respawns a run);
#   storm:  the farm on 4 workers, every incarnation of workers 2 and 3
#           killed soon after it starts (about 17 respawns a run, most of
#           them while the other worker dies).
# Usage: tests/stress/respawn.sh BUILD_DIR [RUNS] [OUTDIR] [replay|storm]
set -u
build=$(cd "$1" && pwd); runs=${2:-100}; outdir=${3:-/tmp/ftmw-respawn}
scenario=${4:-replay}
case $scenario in
  replay) prog=$build/examples/fig4_6 fault="recv.exit:4@2,recv.enter:2@2/1"
          args="-w 3 $prog" want='^sum 954$' ;;
  storm) prog=$build/examples/farm fault="recv.exit:3@2/*,recv.exit:4@3/*"
         args="-w 4 $prog --tasks 100 --work-us 20000" want='duplicates 0$' ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
mkdir -p "$outdir"
hangs=0 fails=0 abandoned=0
for i in $(seq 1 "$runs"); do
  trace=$outdir/trace.json; rm -f "$trace"
  # shellcheck disable=SC2086
  FT_HEARTBEAT_MS=100 FT_TIMEOUT_MS=1000 FT_TRACE=$trace FT_FAULT=$fault \
    setsid "$build/ftmwrun" $args > "$outdir/out" 2>&1 &
  job=$!
  n=0
  while kill -0 "$job" 2>/dev/null && [ "$n" -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
  if kill -0 "$job" 2>/dev/null; then
    hangs=$((hangs + 1))
    echo "run $i: hung; stacks in $outdir/hang$i.*"
    for p in $(pgrep -f "$prog|mpirun"); do
      gdb -p "$p" -batch -ex 'thread apply all bt' > "$outdir/hang$i.$p" 2>&1
    done
    cp "$trace" "$outdir/hang$i.trace.json"
    kill -KILL -"$job"
    pkill -KILL -s "$job" # mpirun's children have process groups of their own
  elif ! wait "$job" || ! grep -q -E "$want" "$outdir/out"; then
    fails=$((fails + 1))
    echo "run $i: failed"; cat "$outdir/out"
  fi
  a=$(grep -c '"event":"spawn_abandoned"' "$trace" 2>/dev/null); a=${a:-0}
  [ "$a" -eq 0 ] || echo "run $i: $a spawns abandoned and made again"
  abandoned=$((abandoned + a))
done
echo "respawn $scenario: $runs runs, $abandoned spawns abandoned, $hangs hung, $fails failed"
