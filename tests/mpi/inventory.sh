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
# two_devices ARGS...: rank 0 with a 2-CU device, rank 1 with PoCL's basic and pthread devices
# (POCL_DEVICES takes a space-separated list, which RANK_ENV_1 cannot hold).
two_devices() {
  MPMD=("$mpx" -n 1 env POCL_MAX_PTHREAD_COUNT=2 POCL_CPU_MAX_CU_NUM=2 "$ws" "$@" :
        -n 1 env POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1 "POCL_DEVICES=basic pthread" "$ws" "$@")
}
two_devices plan --kernel matmul --size 256 --select 1=0+1 --json
run 120 "${MPMD[@]}"
expect_jq '[.assignments[].rank] == [1,1]' "--select 1=0+1: rank 1 drives two devices"
# Issue 15: a word naming several devices of a rank is refused with the devices listed; WORD:N
# names one of them.
two_devices plan --kernel matmul --size 256 --select 1=cpu --json
run 120 "${MPMD[@]}"
expect_fail_line 2 "rank 1: --select names device 'cpu' on rank 1, where it matches 2 devices \(0 .* \(cpu\), 1 .* \(cpu\)\): name one, cpu:0 to cpu:1, join several with '\+', or allow 2 with --devices-per-rank 2$" \
  "--select 1=cpu matching two devices: one line listing them, exit 2"
two_devices plan --kernel matmul --size 256 --select 1=cpu:1 --json
run 120 "${MPMD[@]}"
expect_jq '[.assignments[].rank] == [1] and .assignments[0].device == 0' "--select 1=cpu:1: rank 1 drives one device"
two_devices devices --select 1=cpu:1 --json
run 120 "${MPMD[@]}"
expect_jq '[.devices[] | [.rank, .index]] == [[1, 1]]' "--select 1=cpu:1 is rank 1's device index 1"
two_devices plan --kernel matmul --size 256 --select 1=cpu --devices-per-rank 2 --json
run 120 "${MPMD[@]}"
expect_jq '[.assignments[].rank] == [1,1]' "--select 1=cpu --devices-per-rank 2: rank 1 drives both"

# Issue 15: two ranks of one host driving one GPU. WORKSIZE_FAULT=as-gpu (test-only) makes ranks
# 1 and 2 report their PoCL device as a GPU at PCI 0000:01:00.0: refused, exit 2, one line.
for cmd in "plan --kernel quad --size 100000 --json" "run quad --size 100000" "calibrate --kernel quad --sizes 1024"; do
  # shellcheck disable=SC2086
  RANK_ENV_1="WORKSIZE_FAULT=as-gpu" RANK_ENV_2="WORKSIZE_FAULT=as-gpu" mpmd_cmd "$mpx" "$ws" "1 1 1" $cmd
  run 120 "${MPMD[@]}"
  expect_fail_line 2 "^worksize: error: ranks 1 and 2 on host .* would drive one device, 0 '.*' \(gpu, PCI 0000:01:00.0\): run one rank per device \(docs/cluster.md\) or pass --allow-shared-device$" \
    "${cmd%% *}: two ranks on one GPU refused, naming the ranks and the device"
done
# --allow-shared-device: one warning, and the device counts once (rank 1's instance).
RANK_ENV_1="WORKSIZE_FAULT=as-gpu" RANK_ENV_2="WORKSIZE_FAULT=as-gpu" mpmd_cmd "$mpx" "$ws" "1 1 1" plan --kernel quad \
  --size 100000 --allow-shared-device --json
run 120 "${MPMD[@]}"
expect_fail_line 0 "^worksize: warning: ranks 1 and 2 on host .* would drive one device, .*: --allow-shared-device: counted once, rank 1 drives it and rank 2 gets none of its work$" \
  "--allow-shared-device: one warning"
expect_jq '[.assignments[].rank] == [1] and .assignments[0].share == 1' "--allow-shared-device: the device is in the plan once"
RANK_ENV_1="WORKSIZE_FAULT=as-gpu" RANK_ENV_2="WORKSIZE_FAULT=as-gpu" mpmd_cmd "$mpx" "$ws" "1 1 1" run quad \
  --size 100000 --allow-shared-device --json
run 120 "${MPMD[@]}"
expect_rc 0 "run --allow-shared-device"
expect_jq '.verified == true and [.devices[].rank] == [1]' "run --allow-shared-device: verified on rank 1's instance"
# `devices` lists every rank's instance, with the warning.
RANK_ENV_1="WORKSIZE_FAULT=as-gpu" RANK_ENV_2="WORKSIZE_FAULT=as-gpu" mpmd_cmd "$mpx" "$ws" "1 1 1" devices --json
run 120 "${MPMD[@]}"
expect_fail_line 0 "^worksize: warning: ranks 1 and 2 on host .* would drive one device, .*: plan, run, calibrate and tune refuse this without --allow-shared-device$" \
  "devices: the shared GPU is named in a warning"
expect_jq '[.devices[] | [.rank, .type, .pci_bus_id]] == [[0, "cpu", ""], [1, "gpu", "0000:01:00.0"], [2, "gpu", "0000:01:00.0"]]' \
  "devices: every rank's instance listed, with its PCI bus id"
# Ranks on two hosts (WORKSIZE_HOSTNAME) with the same PCI address drive two GPUs: no refusal.
RANK_ENV_1="WORKSIZE_FAULT=as-gpu WORKSIZE_HOSTNAME=n1" RANK_ENV_2="WORKSIZE_FAULT=as-gpu WORKSIZE_HOSTNAME=n2" \
  mpmd_cmd "$mpx" "$ws" "1 1 1" plan --kernel quad --size 100000 --json
run 120 "${MPMD[@]}"
expect_rc 0 "one PCI address on two hosts is two devices"
expect_jq '[.assignments[].rank] == [1,2]' "both hosts' GPUs in the plan"
# Messages of a rank other than 0 say which rank wrote them: a bad WORKSIZE_PINNED on rank 1
# only. --log-level applies on every rank.
RANK_ENV_1="WORKSIZE_PINNED=maybe" mpmd_cmd "$mpx" "$ws" "1 1" plan --kernel quad --size 100000 --json; run 120 "${MPMD[@]}"
expect_rc 0 "plan with a bad WORKSIZE_PINNED on rank 1"
if [ "$(grep -c "^worksize\[rank 1\]: warning: WORKSIZE_PINNED='maybe' is none of " "$err")" = 1 ] && [ "$(grep -c . "$err")" = 1 ]; then
  ok "rank 1's warning names rank 1"; else bad "expected one 'worksize[rank 1]: warning:' line: $(cat "$err")"; fi
expect_jq '.assignments | length == 1' "stdout keeps the plan"
RANK_ENV_1="WORKSIZE_PINNED=maybe" mpmd_cmd "$mpx" "$ws" "1 1" plan --kernel quad --size 100000 --json --log-level error
run 120 "${MPMD[@]}"
if [ "$rc" -eq 0 ] && [ ! -s "$err" ]; then ok "--log-level error silences rank 1's warning"
else bad "--log-level error on 2 ranks: exit $rc, stderr: $(cat "$err")"; fi
# Issue 16: the ranks of one node drive CPU devices with more compute units than its cores
# (nproc, as each rank reports it): one warning from rank 0 after the inventory.
cores=$(nproc)
big=$(( cores ))
mpmd_cmd "$mpx" "$ws" "$big $big $big" plan --kernel quad --size 100000 --master-works --json; run 120 "${MPMD[@]}"
expect_rc 0 "plan with 3 ranks of $big CUs each on $cores cores"
n=$(grep -c "^worksize: warning: node .*: 3 ranks drive CPU devices with $((3 * big)) compute units in all on $cores cores; timings will interfere (set POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM per rank)$" "$err")
[ "$n" = 1 ] && ok "one oversubscription warning" || bad "expected one oversubscription warning, got $n: $(cat "$err")"
expect_jq '.assignments | length == 3' "stdout keeps the plan"
# Two 1-CU workers and rank 0 master-only (its device idle): within the cores, no warning.
if [ "$cores" -ge 2 ]; then
  mpmd_cmd "$mpx" "$ws" "$big 1 1" plan --kernel quad --size 100000 --json; run 120 "${MPMD[@]}"
  expect_rc 0 "plan with two 1-CU workers"
  if grep -q "compute units in all" "$err"; then bad "unexpected oversubscription warning: $(cat "$err")"; else ok "no oversubscription warning"; fi
  # The same ranks with --select all: rank 0 drives its device too, and counts.
  mpmd_cmd "$mpx" "$ws" "$big 1 1" plan --kernel quad --size 100000 --select all --json; run 120 "${MPMD[@]}"
  expect_rc 0 "plan with --select all"
  n=$(grep -c "^worksize: warning: node .*: 3 ranks drive CPU devices with $((big + 2)) compute units in all on $cores cores;" "$err")
  [ "$n" = 1 ] && ok "--select all: rank 0's device counts" || bad "--select all: expected the warning for 3 ranks, got: $(cat "$err")"
fi
finish
