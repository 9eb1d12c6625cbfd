#!/bin/sh
# multistart's command line: --help, and a clear message with exit status 2
# for each bad option (checked before MPI starts, so no job is needed).
# Usage: multistart_options.sh MULTISTART
set -u
prog=$1 fails=0
"$prog" --help | grep -q -- '--delay-us' || { echo "FAIL: --help"; fails=1; }
bad() { # EXPECTED-MESSAGE-REGEX ARGS...
  want=$1; shift
  msg=$("$prog" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -ne 2 ] || ! echo "$msg" | grep -q -E "$want"; then
    echo "FAIL: multistart $*: status $rc, message '$msg', want 2 and /$want/"; fails=1
  else
    echo "ok: multistart $*: $msg" | head -1
  fi
}
bad 'dim must be an integer from 1 to 1000 \(got "0"\)' --dim 0
bad 'dim must be' -d 10x
bad 'function must be rastrigin' -f himmelblau
bad 'starts must be' --starts -3
bad 'tol must be a number' --tol 0
bad 'tol must be a number' --tol abc
bad 'max-evals must be' -e 0
bad 'delay-us must be' --delay-us 99999999999
bad 'seed must be' --seed -1
bad 'unknown option: --bogus' --bogus
bad 'missing value for: --dim' --dim
bad 'unknown option: -x' -x
bad 'unexpected argument: extra' extra
[ "$fails" -eq 0 ] && echo PASS
exit "$fails"
