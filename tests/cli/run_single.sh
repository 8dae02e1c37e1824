#!/usr/bin/env bash
# The embedded default: one process drives its own devices. With POCL_DEVICES="pthread basic"
# the process has two devices (the basic one has 1 CU) and splits each kernel between them.
ws=$1; src=$2
source "$src/tests/lib.sh"
for k in matmul interp sort quad; do
  run 120 "$ws" run "$k" --size 17 --json
  expect_jq '.verified == true and (.devices | length) == 1' "$k on the one local device"
  run 120 env POCL_DEVICES="pthread basic" "$ws" run "$k" --size 1023 --strategy pe-ratio --json
  expect_jq '.verified == true and (.devices | length) == 2 and ([.devices[].rank] == [0,0])' "$k split over two devices of one process"
done
run 120 "$ws" run sort --size 5000
expect_rc 0 "table output"
expect_out "makespan .* ms; verified" "table has the makespan and verdict"
run 600 "$ws" run --paper-experiment --repeat-scale 0.0002 --json
expect_jq '(.kernels | length) == 4 and ([.kernels[] | .pe_ratio_null.verified and .paper.verified] | all)' "paper experiment: four kernels, both configurations verified"
expect_jq '[.kernels[] | has("change_percent")] | all' "paper experiment: time change per kernel"
finish
