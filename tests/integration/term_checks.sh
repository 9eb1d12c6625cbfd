# Sourced by the tests of a job stopped by SIGTERM (term_job.sh, and
# cluster/cluster_job.sh's timelimit): what such a multistart job must
# show, checked the same way. Each prints why and returns 1 on failure.
# term_partial_once OUT [STARTS]: the best of the searches done (N >= 1
# of STARTS, or of any number), printed once.
term_partial_once() {
  grep -Eq "^local searches [1-9][0-9]* of ${2:-[0-9]+} \\(stopped by SIGTERM\\)" "$1" &&
    [ "$(grep -c '^best f = ' "$1")" = 1 ] ||
    { echo "FAIL: no partial result, or not once"; return 1; }
}
# term_masters_left TRACE: no master's grace ran out (each ended by itself).
term_masters_left() {
  ! grep '"role":"master"' "$1" | grep -q '"event":"term_exit"' ||
    { echo "FAIL: a master did not end by itself within its grace"; return 1; }
}
