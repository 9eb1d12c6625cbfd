# shellcheck shell=sh
# Sourced by job test scripts that check the failure and restore counts a
# program prints. Open MPI 4.1's spawn can hang when a process dies during
# it (docs/known-problems.md); the library abandons such a spawn and makes
# it again. Without replicas the abandoned incarnation's failure reaches
# the program, which restores it once more: each such spawn, beyond those
# a spawn.stall fault caused, may add one failure and one restore to the
# counts the program prints and to the failure reports.
#   spawn_hangs TRACE: sets $hangs, the spawns abandoned in TRACE that no
#     spawn.stall fault caused, and says so when there are any;
#   widen REGEX: REGEX with each "failures N" and "restores N" matching
#     N..N+$hangs (N a number, or a class of digits such as [23]).
#   spawn_wedged TRACE ATTEMPT: true, saying so, when such a hang left a
#     worker unrestored and ATTEMPT (1..3) is not the last: the caller
#     runs its job again.
#     Once one spawn hung, mpirun can hang every later one (seen beside
#     CPU hogs: 3 of 3, then 5 of 5, with two workers killed together), so
#     a worker's FTMW_SPAWN_ATTEMPTS all hang and it is given up
#     (restore_failed): a farm goes on without it, a program under the MPI
#     layer stops saying so. That is Open MPI's failure, not the one under
#     test: the test runs the job again, saying why.
spawn_hangs() {
  hangs=$(( $(grep '"role":"master"' "$1" | grep -c '"event":"spawn_abandoned"') -
            $(grep '"event":"fault_injected"' "$1" | grep -c '"point":"spawn.stall"') ))
  [ "$hangs" -gt 0 ] &&
    echo "== $hangs spawn(s) abandoned (Open MPI's spawn hang): each may add a failure and a restore"
  return 0
}
widen() {
  echo "$1" | awk -v h="$hangs" '{
    out = ""; s = $0
    while (match(s, /(failures|restores),? ([0-9]+|\[[0-9]+\])/)) {
      m = substr(s, RSTART, RLENGTH); n = m; sub(/.* /, "", n)
      d = n; gsub(/[][]/, "", d)
      # the numbers it matched: n itself, or each digit of the class
      k = split(d, v, n ~ /^\[/ ? "" : " ")
      alt = ""
      for (j = 1; j <= k; j++)
        for (i = 0; i <= h; i++) alt = alt (alt == "" ? "" : "|") (v[j] + i)
      out = out substr(s, 1, RSTART - 1) substr(m, 1, length(m) - length(n)) "(" alt ")"
      s = substr(s, RSTART + RLENGTH)
    }
    print out s }'
}
spawn_wedged() {
  spawn_hangs "$1" > /dev/null
  [ "$2" -lt 3 ] && [ "$hangs" -gt 0 ] &&
    grep '"role":"master"' "$1" | grep -q '"event":"restore_failed"' &&
    echo "== Open MPI's spawn hung and left a worker unrestored (docs/known-problems.md): again"
}
