#!/usr/bin/env bash
# cluster/slurm/worksize.sbatch's steps (devices, tune, calibrate, plan, run, db list) under plain
# mpiexec on two emulated nodes: rank 0 (the master) and rank 1 on nodeA, rank 2 on nodeB, each
# worker with an identical 1-CU PoCL device (tests/mpi/emulate_nodes.sh). The run verifies, and
# the two nodes' measurements land in one database entry per kernel whose provenance names both.
ws=$1; mpx=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
unset WORKSIZE_DB_PER_HOST WORKSIZE_HOSTNAME SLURM_JOB_ID SLURM_PROCID

run 240 env WORKSIZE_LAUNCH="$mpx -n 3" WORKSIZE="bash $here/emulate_nodes.sh $ws" EMULATED_HOSTS="nodeA nodeA nodeB" \
  WORKSIZE_DB="$tmp/db.json" OUT="$tmp/out" KERNEL=matmul SIZE=64 FILTER=portable \
  TUNE_ARGS="--iterations 1 --repeats 1 --warmup 0 --budget 0.05 --confirm-top 0 --baseline-runs 0" \
  CALIBRATE_ARGS="--sizes 32,64 --max-repeats 3" RUN_ARGS="--iterations 2" \
  bash "$here/../../cluster/slurm/worksize.sbatch"
expect_rc 0 "the sbatch script's steps under mpiexec -n 3"
o="$tmp/out"
if jq -e '[.devices[] | [.rank, .host]] == [[1, "nodeA"], [2, "nodeB"]]' "$o/devices.json" >/dev/null; then
  ok "auto selection: one worker rank per node's device, rank 0 the master"; else bad "devices: $(cat "$o/devices.json")"; fi
if jq -e '[.assignments[].rank] == [1, 2] and .strategy == "model"' "$o/plan.json" >/dev/null; then
  ok "the model plan splits over both nodes"; else bad "plan: $(cat "$o/plan.json")"; fi
if jq -e '.verified == true and ([.devices[].rank] == [1, 2])' "$o/run.json" >/dev/null; then
  ok "the run on both nodes verifies"; else bad "run: $(cat "$o/run.json")"; fi
for kind in model tuning; do
  if jq -e --arg k "$kind" '[.entries[] | select(.kernel == "matmul" and .kind == $k)] |
        length == 1 and (.[0].hosts | sort) == ["nodeA", "nodeB"]' "$o/db.json" >/dev/null; then
    ok "one shared matmul $kind entry, measured on nodeA and nodeB"; else bad "$kind entries: $(cat "$o/db.json")"; fi
done
finish
