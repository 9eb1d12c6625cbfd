#!/bin/sh
# The fault-free reference run of a job test: its standard output goes to
# OUT, its standard error to OUT.err; exits non-zero (having shown both)
# when the run fails. The runs are deterministic, and many tests share one
# (the same program, options, arguments and FT_* settings): with
# FTMW_REF_CACHE set to a directory, a run's output is kept there and later
# tests reuse it. Only a run that succeeded is kept, written whole before
# it is seen.
# Usage: reference.sh OUT FTMWRUN "FTMWRUN-OPTIONS" PROGRAM [ARGS...]
set -u
out=$1 ftmwrun=$2 opts=$3
shift 3
key=
if [ -n "${FTMW_REF_CACHE:-}" ]; then
  # What the run depends on: the command and the FT_* settings.
  key=$({ printf '%s\n' "$ftmwrun" "$opts" "$@"; env | grep '^FT_' | grep -v -e '^FT_FAULT=' -e '^FT_TRACE=' | sort; } |
        sha256sum | cut -c1-40)
  if [ -s "$FTMW_REF_CACHE/$key" ]; then
    cp "$FTMW_REF_CACHE/$key" "$out" && : > "$out.err" && exit 0
  fi
fi
# shellcheck disable=SC2086
(unset FT_FAULT FT_TRACE; exec "$ftmwrun" $opts "$@") > "$out" 2> "$out.err" ||
  { cat "$out" "$out.err"; echo "FAIL: the reference run failed"; exit 1; }
# Keeping it is best effort: a test that cannot write the cache only
# leaves the next one to run its own reference.
if [ -n "$key" ] && mkdir -p "$FTMW_REF_CACHE" &&
   tmp=$(mktemp "$FTMW_REF_CACHE/.$key.XXXXXX"); then
  { cp "$out" "$tmp" && mv -f "$tmp" "$FTMW_REF_CACHE/$key"; } || rm -f "$tmp"
fi
exit 0
