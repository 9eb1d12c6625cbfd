#!/bin/sh
# Runs the core benchmarks side by side in one run and prints ratios:
#   ft_send/ft_recv ping-pong against a raw TCP ping-pong, per message size;
#   kill -9 to failure reported; restore by respawn against a bare
#   MPI_Comm_spawn (Open MPI only); restore from a spare; the ms_* log size
#   after N iterations (bench/mslog_size.c); the cost of FT_TRACE.
# Usage: bench/run-core.sh BUILD_DIR [--quick]
# Timings never make it fail; it fails only if a program fails.
set -eu
build=$1; quick=${2:-}
b=$build/bench
k=20; [ "$quick" = --quick ] && k=4
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
mpi=$(sed -n 's/^FTMW_MPI:STRING=//p' "$build/CMakeCache.txt")
echo "# FTMW core benchmarks ($mpi, $(nproc) cores, $(date -u +%Y-%m-%d))"
"$b/pingpong_tcp" $quick > "$out/tcp"
"$build/ftmwrun" -w 1 "$b/pingpong_ft" $quick > "$out/ft" 2> "$out/ft.err" || { cat "$out/ft.err"; exit 1; }
echo "## ping-pong round trip, median of 15 batches (microseconds)"
printf '%-10s %12s %12s %8s\n' bytes raw_tcp ftmw ratio
join -1 2 -2 2 "$out/tcp" "$out/ft" | sort -n |
  awk '{ printf "%-10s %12.2f %12.2f %8.2f\n", $1, $3, $5, $5 / $3 }'
echo "## failures and restores (milliseconds: median min max)"
# Each run's output goes to a file first: a pipe would hide its status.
failover() { # label ftmwrun-options...
  label=$1; shift
  if ! "$build/ftmwrun" "$@" "$b/failover" $k > "$out/$label" 2> "$out/$label.err"; then
    grep -v PMIX "$out/$label" "$out/$label.err" >&2
    echo "run-core: the $label failover run failed" >&2
    exit 1
  fi
  sed "s/^/$label: /" "$out/$label"
}
[ "$mpi" = openmpi ] && failover spawn -w 1
failover static -w 1 -s $k
echo "## ms_* log: bytes held for one worker after N iterations (pattern payload N bytes)"
"$build/ftmwrun" -w 5 "$b/mslog_size" $quick > "$out/mslog" 2> "$out/mslog.err" ||
  { grep -v PMIX "$out/mslog.err" >&2; echo "run-core: mslog_size failed" >&2; exit 1; }
cat "$out/mslog"
echo "## trace cost: ping-pong round trip (microseconds), untraced, FT_TRACE, FT_TRACE + FT_TRACE_DATA=1"
tr=$out/trace.json
(unset FT_TRACE FT_TRACE_DATA; "$build/ftmwrun" -w 1 "$b/pingpong_ft" --quick) > "$out/t0" 2>/dev/null
(unset FT_TRACE_DATA; FT_TRACE=$tr "$build/ftmwrun" -w 1 "$b/pingpong_ft" --quick) > "$out/t1" 2>/dev/null
FT_TRACE=$tr FT_TRACE_DATA=1 "$build/ftmwrun" -w 1 "$b/pingpong_ft" --quick > "$out/t2" 2>/dev/null
printf '%-10s %10s %10s %10s %8s\n' bytes untraced traced data ratio
join -1 2 -2 2 "$out/t0" "$out/t1" | join -1 1 -2 2 - "$out/t2" | sort -n |
  awk '{ printf "%-10s %10.2f %10.2f %10.2f %8.2f\n", $1, $3, $5, $7, $7 / $3 }'
