#!/bin/bash
# The simulator's ctest cases (tests/CMakeLists.txt): sim_tests.sh CASE BIN
#   short        the first 3000 seeds: every schedule passes
#   regressions  the seeds that found the bugs fixed since (each passes;
#                each failed before its fix: the commits name them)
#   replay       a seed run twice gives the same run (its hash covers every
#                step's log line and every byte delivered)
set -u
case=$1 sim=$2
case $case in
short)
  exec "$sim" --seeds 3000 --jobs 2 ;;
regressions)
  # 571 1284 2297 17749 13565 15798: the fixes of 2026-11-28, in order;
  # 123 1286 2994 10538: the same bugs, found again by other seeds.
  for s in 571 1284 2297 17749 13565 15798 123 1286 2994 10538; do
    # as drawn when they were found: before partitions were simulated
    "$sim" --no-partitions --any-source-only --seed "$s" 2>/dev/null | head -1
    "$sim" --no-partitions --any-source-only --seed "$s" >/dev/null 2>&1 || { echo "seed $s FAILED"; exit 1; }
  done
  # with partitions: 1072 (a restore whose spare was cut off, reported
  # twice), 5347 and 23362 (a new primary behind another replica's
  # decisions), 9690 (a COPY only another replica had), 36689 (a send the
  # old primary had gone past); 14888 and 16192 (a message only the dead
  # primary had: the COPY now goes first), 49476 (a KEPT of a replaced
  # incarnation), 32094 (an ACKED only a replica had), 11875 (a failure
  # hidden by the report of the incarnation before), 244126 (an ACKED come
  # while a new primary waited to send)
  # (all as drawn before results were also taken by ft_waitany and ft_probe)
  for s in 1072 5347 23362 9690 36689 14888 16192 49476 32094 11875 244126; do
    "$sim" --any-source-only --seed "$s" 2>/dev/null | head -1
    "$sim" --any-source-only --seed "$s" >/dev/null 2>&1 || { echo "seed $s FAILED"; exit 1; }
  done
  # as drawn before the logged farm: 865070 (an ACKED on its way when a
  # new primary decided a send: the worker's MARK), 203173 (a decision
  # lost with a worker's task let through: DECIDED), 13291 (a worker found
  # failed as a new primary went to send)
  for s in 865070 203173 13291; do
    "$sim" --ft-only --seed "$s" 2>/dev/null | head -1
    "$sim" --ft-only --seed "$s" >/dev/null 2>&1 || { echo "seed $s FAILED"; exit 1; }
  done
  # as drawn before partitions healed: 3453569 (ms_irestore of a worker
  # idle after its answer left the answered receive posted), 3465840 (a
  # replica completed a send on the worker's ACKED, whose ACK to the
  # primary a partition cut), 3650570 (the farm layer left a worker found
  # failed at a task's send idle, with tasks queued)
  for s in 3453569 3465840 3650570; do
    "$sim" --no-heal --seed "$s" 2>/dev/null | head -1
    "$sim" --no-heal --seed "$s" >/dev/null 2>&1 || { echo "seed $s FAILED"; exit 1; }
  done
  # as drawn now: 3986683 (a replica waiting for a worker's ACKED, which
  # a partition held, woke as the primary and sent without taking over),
  # 4005262 (a message only the dead primary took, its COPY held by a
  # partition: the new primary could not follow, and left), 4188566 (a
  # replica ahead sent a new primary the worker's later message before
  # the earlier one, which its receive took: a wrong result), 4212840
  # (the primary took a message whose COPY a partition held, then gave
  # another worker a task: the new primary could not follow, and left);
  # 4650070 and 4666456 (the same lost message with two replicas, drawn
  # since workers are cut with three masters: the first to take over
  # left, as the other replica held the path it had to drop); 4916064
  # and 4973975 (four masters, drawn since: a replica lacked the old
  # primary's first decision, which the new primary learned from another
  # and sent it only at its next decision; it waited for that replica
  # first, for ever); 5035574 (the same gap, filled once while another
  # replica's history was still arriving)
  for s in 3986683 4005262 4188566 4212840 4650070 4666456 4916064 4973975 \
           5035574; do
    "$sim" --seed "$s" 2>/dev/null | head -1
    "$sim" --seed "$s" >/dev/null 2>&1 || { echo "seed $s FAILED"; exit 1; }
  done ;;
replay)
  a=$("$sim" --seed 2933 2>/dev/null | grep -o 'run hash [0-9a-f]*')
  b=$("$sim" --seed 2933 2>/dev/null | grep -o 'run hash [0-9a-f]*')
  echo "seed 2933: $a, then $b"
  [ -n "$a" ] && [ "$a" = "$b" ] ;;
*)
  echo "sim_tests.sh: unknown case $case" >&2; exit 2 ;;
esac
