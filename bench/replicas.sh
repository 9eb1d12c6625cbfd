#!/bin/sh
# Master replicas (static mode), measured side by side in one run:
#   overhead: multistart with a 1 ms objective (every evaluation sleeps
#     1 ms), 4 workers, with 0, 1 and 2 replicas, runs interleaved; the
#     program's own "time" line, median, min and max, and the ratio of
#     medians to the run without replicas; then the same with an empty
#     objective, which shows the protocol's own cost per task;
#   failover: the same job with 1 replica and the primary killed (FT_FAULT
#     recv.exit:40@m0), from FT_TRACE: kill to takeover (the replica's
#     role_change) and kill to the first result the new primary delivers,
#     against the median gap between two results in the run.
# Usage: bench/replicas.sh BUILD_DIR [--quick]
# Timings never make it fail; it fails only if a program fails.
set -eu
build=$1; quick=${2:-}
runs=5; [ "$quick" = --quick ] && runs=1
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
ms=$build/examples/multistart
args="-n 128 -e 20 -D 1000"
run() { # FILE FTMWRUN-OPTIONS: runs multistart, appends its time in s
  file=$1; shift
  # shellcheck disable=SC2086
  if ! "$build/ftmwrun" --static -w 4 "$@" "$ms" $args > "$out/run" 2>&1; then
    grep -v PMIX "$out/run" >&2; echo "replicas.sh: a run failed" >&2; exit 1
  fi
  sed -n 's/^time \([0-9.]*\) s$/\1/p' "$out/run" >> "$file"
}
stats() { # FILE: median min max
  sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
overhead() { # LABEL: multistart $args with 0, 1 and 2 replicas
  echo "## replicas, $1: multistart $args, 4 workers, static mode ($runs runs each, seconds: median min max, ratio of medians)"
  rm -f "$out"/m?
  for i in $(seq "$runs"); do
    for m in 0 1 2; do run "$out/m$m" -m $m; done
  done
  base=$(stats "$out/m0" | cut -d' ' -f1)
  for m in 0 1 2; do
    s=$(stats "$out/m$m")
    echo "replicas $m: $s $(echo "$s" | awk -v b="$base" '{ printf "%.3f", $1 / b }')"
  done
}
overhead "1 ms objective"
args="-n 512 -e 20 -D 0"
overhead "empty objective (the protocol's own cost per task)"
args="-n 128 -e 20 -D 1000"
echo "## failover: primary killed, 1 replica (milliseconds: median min max)"
for i in $(seq "$runs"); do
  rm -f "$out/trace"
  FT_TRACE=$out/trace FT_TRACE_DATA=1 FT_FAULT=recv.exit:40@m0 run "$out/failed" -m 1
  # The killed primary wrote fault_injected; the new primary, role_change.
  # Kill to takeover, kill to the new primary's first result delivered
  # after it took over, and the killed primary's gaps between results.
  awk -F'"mono":' -v gaps="$out/gaps" '
    /"role":"master"/ {
      split($2, a, ","); t = a[1] * 1000
      pid = $0; sub(/.*"pid":/, "", pid); sub(/,.*/, "", pid)
      if ($0 ~ /"event":"fault_injected"/) { kill = t; kp = pid }
      if ($0 ~ /"event":"role_change"/) { take = t; np = pid }
      if ($0 ~ /"event":"received"/) {
        if (pid == np && !first) first = t
        n[pid]++; at[pid, n[pid]] = t
      }
    }
    END {
      for (i = 2; i <= n[kp]; i++) print at[kp, i] - at[kp, i - 1] >> gaps
      printf "%.3f %.3f\n", take - kill, first - kill
    }' "$out/trace" >> "$out/fo"
done
for col in 1 2; do cut -d' ' -f$col "$out/fo" > "$out/fo$col"; done
echo "kill_to_takeover_ms $(stats "$out/fo1")"
echo "kill_to_next_result_ms $(stats "$out/fo2")"
echo "result_gap_ms $(stats "$out/gaps") (between two results at the primary, before the kill)"
