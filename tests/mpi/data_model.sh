#!/usr/bin/env bash
# --strategy model for data jobs (scheduler/data_model.hpp, runtime/src/jobs/data_job.cpp) end to end
# on two PoCL ranks of 2 and 1 compute units, each driving its device: heat (with and without
# ghost zones) and kmeans (reductions) verify after the probe and the model's plan, the report
# gives each slice's predicted step and the predicted step beside the measured one; oracle is
# refused for a data job with one line, exit 2. Speeds are measured, not asserted.
# Args: worksize_example_heat worksize_example_kmeans MPIEXEC
heat=$1; kmeans=$2; mpx=$3
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# An empty database: the model's links are the defaults whatever the user's database holds
# (tests/mpi/links.sh runs it with calibrated links).
tmpdb=$(mktemp -d); trap 'rm -rf "$tmpdb" "$out" "$err"' EXIT
export WORKSIZE_DB=$tmpdb/db.json

cus="2 1"  # PoCL compute units of ranks 0 and 1 (mpmd_cmd in lib.sh)
num='[0-9]+\.[0-9]+'

# model NAME BINARY "ARGS" SIZE: verified with --strategy model; each device has a predicted
# step or the reason the model left it out (the machine's load decides which), the step is
# predicted beside the measured one.
model() {
  local name=$1 bin=$2 args=$3 size=$4 slices left
  # shellcheck disable=SC2086
  mpmd_cmd "$mpx" "$bin" "$cus" $args --select all --strategy model; run 120 "${MPMD[@]}"
  expect_rc 0 "$name $args, --strategy model on ranks of $cus CUs"
  expect_out "^worksize,$name,$size,[12] ranks,[0-9.e+-]+,verified$" "$name $args, --strategy model: verified"
  slices=$(grep -Ec "^  device [0-9]+ \(rank [01], .*, predicted step $num ms$" "$out")
  left=$(grep -Ec "^  device [0-9]+ \(rank [01], [^)]*\): left out: [a-z]" "$out")  # any reason: the closed form's or the simulation's
  if [ "$slices" -ge 1 ] && [ $((slices + left)) -eq 2 ]; then
    ok "$name $args: $slices slice(s) with a predicted step, $left device(s) left out with a reason"
  else bad "$name $args: want a line per device, 'predicted step X ms' or 'left out: ...'"; fi
  expect_out "^  step: predicted $num ms, measured $num ms \(steps / [0-9]+\)$" "$name $args: predicted and measured step"
  grep -E '^  (device|step)' "$out" | sed 's/(paper-2d[^)]*)/(...)/'
}

model heat "$heat" "256 256 20" 256x256x20
model heat "$heat" "256 256 20 3" 256x256x20  # ghost zones: every 3 steps, 3 rows deep
model kmeans "$kmeans" "4000 4 5 4" 4000x4-k5-i4

run 60 "$mpx" -n 1 "$heat" 64 64 5 --strategy oracle
expect_fail_line 2 "^heat: error: data job 'heat': --strategy oracle .* a data job is planned by --strategy model" \
  "heat --strategy oracle: refused with one line"
finish
