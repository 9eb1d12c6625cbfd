# Sourced by the job test scripts: makes the work directory $tmp, and at
# exit removes it, unless the script failed: then it prints the trace's
# failure, timing and ending events (so that a failure in CI's output says
# who declared whom failed, who stalled, and who left why), and keeps the
# directory under $FTMW_FAILED_DIR (set by ctest: build/tests/failed) for
# a closer look.
# A script with more to do at exit sets workdir_exit to a command first.
tmp=$(mktemp -d)
workdir_exit=:
workdir_end() {
  rc=$?
  eval "$workdir_exit"
  if [ "$rc" -ne 0 ] && [ -s "$tmp/trace" ]; then
    echo "== trace events (mono s, role id epoch, pid, event, details):"
    grep -E '"event":"(launch|failure_detected|peer_starved|stalled|fenced|orphan_exit|spawn_abandoned|primary_changed|role_change|stepped_down|diverged|fault_injected|abort|sigterm|term_exit|exit|finalize)"' "$tmp/trace" |
      sed -e 's/^{"wall":[0-9.]*,"mono":\([0-9.]*\),"role":"\([a-z]*\)","rank":[0-9]*,"id":\([0-9]*\),"epoch":\([0-9]*\),"host":"[^"]*","pid":\([0-9]*\),/\1 \2 \3 \4 pid \5 /' \
          -e 's/"event":"\([a-z_]*\)",*/\1 /' -e 's/}$//' | sort -n | head -200
  fi
  if [ "$rc" -ne 0 ] && [ -n "${FTMW_FAILED_DIR:-}" ] && mkdir -p "$FTMW_FAILED_DIR"; then
    kept="$FTMW_FAILED_DIR/${FTMW_TEST_NAME:-job}.$(date +%Y%m%d-%H%M%S).$$"
    cp -r "$tmp" "$kept" && echo "== kept for a closer look: $kept"
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap workdir_end EXIT
# Ended by run_job.sh at its time limit: clean up as at any exit.
trap 'exit 143' TERM
