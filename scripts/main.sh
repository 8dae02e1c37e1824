#!/usr/bin/env bash
# The main job on the embedded default (this machine's own OpenCL devices, one process):
# set up, list the devices, plan a matrix multiply, run it split over the devices, verified.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the main job and the examples need, not the tests (scripts/test.sh builds those).
scripts/setup.sh worksize worksize_examples
ws=${WORKSIZE_BUILD_DIR:-build}/apps/worksize
echo; echo "\$ worksize devices"; "$ws" devices
echo; echo "\$ worksize plan --kernel matmul --size 1024"; "$ws" plan --kernel matmul --size 1024
echo; echo "\$ worksize run matmul --size 512 --iterations 3"; "$ws" run matmul --size 512 --iterations 3
