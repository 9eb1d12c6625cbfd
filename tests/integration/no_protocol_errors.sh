#!/bin/sh
# Fails when the FT_TRACE file TRACE shows a process that gave up on a peer
# for a protocol error (between processes of one job, whatever dies around
# them, every frame is one the receiver expects), or a peer state change
# that the lifecycle forbids (peer.h: a bug in the library).
# Usage: no_protocol_errors.sh TRACE
bad=$(grep '"event":"failure_detected"' "$1" | grep '"reason":"protocol error')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a protocol error between processes of the job"; exit 1; }
bad=$(grep '"event":"peer_state_refused"' "$1")
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a peer state change the lifecycle forbids"; exit 1; }
