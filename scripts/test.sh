#!/usr/bin/env bash
# Set up, build and run the whole test suite (labels unit, opencl, mpi).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${WORKSIZE_BUILD_DIR:-build}
# PoCL compiles kernels on first use: keep its cache inside the build tree.
export POCL_CACHE_DIR="$PWD/$build/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"
ctest --test-dir "$build" --output-on-failure --timeout 900 "$@"
