#!/usr/bin/env bash
# Three ranks whose PoCL devices have 2, 1 and 2 compute units: rank 0 gathers every rank's
# devices, and the plan gives the 1-CU rank a smaller share.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

mpmd_cmd "$mpx" "$ws" "2 1 2" devices --json; run 120 "${MPMD[@]}"
expect_rc 0 "devices under mpiexec -n 3"
expect_jq '[.devices[].rank] == [0,1,2]' "one device per rank, gathered at rank 0"
expect_jq '[.devices[].compute_units] == [2,1,2]' "ranks see 2, 1 and 2 CUs"
expect_jq '[.devices[].pes_per_cu_source] | all(. == "cpu-vector-width")' "PEs/CU from the CPU vector width"

mpmd_cmd "$mpx" "$ws" "2 1 2" devices; run 120 "${MPMD[@]}"
expect_out "^2 .* 2 " "table shows rank 2"

for strategy in paper pe-ratio; do
  mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel quad --size 100000 --strategy "$strategy" --json; run 120 "${MPMD[@]}"
  expect_rc 0 "plan --strategy $strategy over 3 ranks"
  expect_jq '[.assignments[].rank] == [1,2]' "$strategy: rank 0 is the master, ranks 1 and 2 work"
  expect_jq '.assignments[0].share < .assignments[1].share' "$strategy: the 1-CU rank gets the smaller share"
done
mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel quad --size 100000 --strategy even --json; run 120 "${MPMD[@]}"
expect_jq '.assignments[0].share == .assignments[1].share' "even: equal shares"

# Rank 0 can work too; one rank can drive several devices.
mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --master-works --json; run 120 "${MPMD[@]}"
expect_jq '[.assignments[].rank] == [0,1,2]' "--master-works: rank 0 drives its device"
RANK_ENV_1="POCL_DEVICES=pthread,basic" mpmd_cmd "$mpx" "$ws" "2 1" plan --kernel matmul --size 256 --select 1=0+1 --json
run 120 "${MPMD[@]}"
expect_jq '[.assignments[].rank] == [1,1]' "--select 1=0+1: rank 1 drives two devices"
finish
