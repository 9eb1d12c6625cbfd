#!/bin/sh
# Fails when the FT_TRACE file TRACE shows a process that gave up on a peer
# for a protocol error: between processes of one job, whatever dies around
# them, every frame is one the receiver expects.
# Usage: no_protocol_errors.sh TRACE
bad=$(grep '"event":"failure_detected"' "$1" | grep '"reason":"protocol error')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a protocol error between processes of the job"; exit 1; }
