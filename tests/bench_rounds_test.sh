#!/bin/sh
# bench/rounds on a made-up trace: one worker, three masters' events of
# which only master 0's count, 30 rounds of known legs (10, 20, 30 and
# 1000 us), then a trace with no rounds, which it must refuse.
set -eu
src=$1
t=$(mktemp)
trap 'rm -f "$t"' EXIT
awk 'function ev(t, role, id, rank, event, peer) {
       printf "{\"mono\":%.6f,\"role\":\"%s\",\"id\":%d,\"rank\":%d,\"event\":\"%s\",\"peer\":%d}\n",
              t / 1e6, role, id, rank, event, peer }
     BEGIN {
       t = 1000
       ev(t, "master", 0, 0, "sent", 1); ev(t + 30, "worker", 1, 1, "received", 0)
       t += 30
       for (i = 0; i < 30; i++) {
         t += 1000; ev(t, "worker", 1, 1, "sent", 0)
         ev(t + 5, "master", 1, 0, "received", 1)      # a replica: not counted
         t += 10; ev(t, "master", 0, 0, "received", 1)
         t += 20; ev(t, "master", 0, 0, "sent", 1)
         ev(t + 1, "master", 1, 0, "sent", 1)          # a replica: not counted
         t += 30; ev(t, "worker", 1, 1, "received", 0)
       }
     }' > "$t"
out=$("$src/bench/rounds" "$t")
echo "$out"
for want in "worker sent -> master received +median +10 us" \
            "master received -> master sent +median +20 us" \
            "master sent -> worker received +median +30 us" \
            "worker received -> worker sent +median +1000 us" \
            "rounds 5, workers 1"; do
  echo "$out" | grep -Eq "^$want" || { echo "missing: $want"; exit 1; }
done
echo '{"mono":1.0,"role":"master","id":0,"rank":0,"event":"finalize"}' > "$t"
if "$src/bench/rounds" "$t" 2> /dev/null; then
  echo "a trace without rounds was accepted"; exit 1
fi
echo ok
