#!/usr/bin/env bash
# Installs what worksize needs from Debian's packages (only what is missing), then configures
# and builds it in ./build (WORKSIZE_BUILD_DIR): the given targets, or everything (the tests
# included) when none is given. Run as root on Debian 12 (or with sudo available).
#   scripts/setup.sh [TARGET...]
#   scripts/setup.sh --packages     (the packages only: no configure, no build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
          libmpich-dev mpich libboost-program-options-dev googletest libgtest-dev
          nlohmann-json3-dev libeigen3-dev libspdlog-dev libclblast-dev gnuplot-nox jq)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = --packages ] && exit 0

build=${WORKSIZE_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWORKSIZE_WERROR=ON >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
