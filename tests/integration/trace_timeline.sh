#!/bin/sh
# A multistart run with FT_TRACE and two workers killed: every killed
# incarnation has a failure_detected event naming it and a later
# failure_reported event on the master, and ftmw-timeline draws the trace
# as a PNG of the expected size.
# Usage: trace_timeline.sh FTMWRUN MULTISTART TIMELINE FTMWRUN-OPTIONS...
set -u
ftmwrun=$1 prog=$2 timeline=$3; shift 3
. "$(dirname "$0")/workdir.sh"
FT_TRACE=$tmp/trace FT_TRACE_DATA=10 FT_FAULT="recv.exit:3@2,send.enter:4@3" \
  "$ftmwrun" "$@" "$prog" -n 32 -D 20 > "$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: run"; exit 1; }
grep -v PMIX "$tmp/out"
field() { sed -n "s/.*\"$1\":\"*\([^,\"}]*\).*/\1/p"; }
kills=$(grep '"event":"fault_injected"' "$tmp/trace")
[ "$(echo "$kills" | grep -c .)" -eq 2 ] || { echo "FAIL: want 2 fault_injected events"; exit 1; }
echo "$kills" | while read -r k; do
  rank=$(echo "$k" | field rank) epoch=$(echo "$k" | field epoch) t=$(echo "$k" | field wall)
  d=$(grep '"event":"failure_detected"' "$tmp/trace" | grep '"role":"master"' |
      grep "\"peer\":\"worker $rank\",\"peer_epoch\":$epoch," | head -1)
  [ -n "$d" ] || { echo "FAIL: no failure_detected for worker $rank #$epoch"; exit 1; }
  r=$(grep '"event":"failure_reported"' "$tmp/trace" | grep '"role":"master"' |
      grep "\"peer\":\"worker $rank\"" | head -1)
  [ -n "$r" ] || { echo "FAIL: no failure_reported for worker $rank"; exit 1; }
  td=$(echo "$d" | field wall) tr=$(echo "$r" | field wall)
  awk -v k="$t" -v d="$td" -v r="$tr" 'BEGIN { exit !(k <= d + 0.001 && d <= r + 0.001) }' ||
    { echo "FAIL: worker $rank: killed at $t, detected at $td, reported at $tr: out of order"; exit 1; }
  echo "worker $rank #$epoch: killed, detected, reported by $(echo "$r" | field call)"
done || exit 1
grep -q '"event":"sent"' "$tmp/trace" || { echo "FAIL: FT_TRACE_DATA traced no message"; exit 1; }
"$timeline" -o "$tmp/t.png" -W 1000 "$tmp/trace" || { echo "FAIL: ftmw-timeline"; exit 1; }
# PNG: signature, then IHDR with the width and height as big-endian words.
sig=$(od -An -tx1 -N8 "$tmp/t.png" | tr -d ' \n')
[ "$sig" = 89504e470d0a1a0a ] || { echo "FAIL: not a PNG ($sig)"; exit 1; }
w=$(od -An -tu1 -j16 -N4 "$tmp/t.png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
h=$(od -An -tu1 -j20 -N4 "$tmp/t.png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
size=$(wc -c < "$tmp/t.png")
echo "timeline: ${w}x${h}, $size bytes"
# 7 lanes (master, workers 1-4, the two new incarnations) or more with spares.
[ "$w" -eq 1000 ] && [ "$h" -ge 400 ] && [ "$h" -le 1200 ] && [ "$size" -gt 10000 ] &&
  [ "$size" -lt 2000000 ] || { echo "FAIL: unexpected picture size"; exit 1; }
"$timeline" -o "$tmp/x.png" "$tmp/nonexistent" 2>/dev/null && { echo "FAIL: a missing trace was accepted"; exit 1; }
echo PASS
