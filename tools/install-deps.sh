#!/bin/sh
# Installs what FTMW needs on Debian 12 (as root, or through sudo).
set -eu
pkgs="build-essential procps cmake pkg-config libuv1-dev libcriterion-dev openmpi-bin libopenmpi-dev mpich libmpich-dev clang libclang-rt-14-dev gnuplot-nox graphviz iproute2 util-linux coop-computing-tools coop-computing-tools-dev zlib1g-dev python3-distributed linux-perf slurm-wlm munge"
missing=
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
