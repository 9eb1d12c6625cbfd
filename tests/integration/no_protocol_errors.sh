#!/bin/sh
# Fails when the FT_TRACE file TRACE shows a process that gave up on a peer
# for a protocol error (between processes of one job, whatever dies around
# them, every frame is one the receiver expects), or a peer state change
# that the lifecycle forbids (peer.h: a bug in the library), or a restored
# incarnation (epoch 1 and up) whose ft_init said it started with the job
# (a spare activated while it was still connecting once did).
# Usage: no_protocol_errors.sh TRACE
bad=$(grep '"event":"failure_detected"' "$1" | grep '"reason":"protocol error')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a protocol error between processes of the job"; exit 1; }
bad=$(grep '"event":"peer_state_refused"' "$1")
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a peer state change the lifecycle forbids"; exit 1; }
bad=$(grep '"event":"launch","restored":0' "$1" | grep -v '"epoch":0,')
[ -z "$bad" ] || { echo "$bad"; echo "FAIL: a restored worker told it started with the job"; exit 1; }
