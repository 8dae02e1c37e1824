#!/usr/bin/env bash
# Offline planning for the paper's GPUs from docs/profiles/paper-2015.json.
ws=$1; src=$2
source "$src/tests/lib.sh"
prof="$src/docs/profiles/paper-2015.json"

run 60 "$ws" devices --devices "$prof" --json
expect_jq '.devices | length == 3' "profile lists three devices"
expect_jq '[.devices[].total_pes] == [2496,192,128]' "PEs 2496, 192, 128"

# Large class over the three GPUs: the chained ratio gives about 98.0 %, 1.8 %, 0.2 %.
run 60 "$ws" plan --kernel interp --size 1024 --ops 8e11 --devices "$prof" --json
expect_rc 0 "plan over the profile"
expect_jq '.compute_class == "large" and .k == 0.25 and .strategy == "paper"' "large class, k 0.25"
expect_jq '(.assignments | map(.share) | add) > 0.999' "shares add up to 1"
expect_jq '.assignments[0].share > 0.97 and .assignments[2].share < 0.01' "K20 takes about 98 %"
expect_jq '[.assignments[] | has("device","rank","share","offset","global","local")] | all' "assignment fields"
run 60 "$ws" plan --kernel interp --size 1024 --devices "$prof" --strategy even --local null --json
expect_jq '[.assignments[].local] | all(. == [0,0])' "--local null gives NULL"
expect_jq '[.assignments[].units] | (max - min) <= 1' "even split"
run 60 "$ws" plan --kernel interp --size 1024 --devices "$prof" --strategy pe-ratio --priority x
expect_out "pe-ratio" "table names the strategy"
expect_out "Tesla K20" "table names the devices"

# matmul's kernel follows the devices: the register-tiled variant where every device is a GPU
# (its work-group, whole warps), the tiled one beside a CPU and with --local null; --param wins.
h200="$src/docs/profiles/h200.json"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$h200" --json
expect_jq '.variant == "kernel reg bm=128 bn=128 bk=8 tm=8 tn=8 vw=4" and ([.assignments[] | select(.units > 0) | .local == [16,16] and .local_rule == "required by the kernel"] | all)' "GPUs only: the reg variant with its work-group"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$src/docs/profiles/h200-cpu16.json" --json
expect_jq '.variant == "kernel tiled"' "a GPU beside a CPU: the tiled kernel"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$h200" --local null --json
expect_jq '.variant == "kernel tiled"' "--local null: the tiled kernel"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$h200" --param variant=tiled --json
expect_jq '.variant == "kernel tiled"' "--param variant=tiled wins"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$h200" --param bm=64 --json
expect_jq '.variant == "kernel reg bm=64 bn=128 bk=8 tm=8 tn=8 vw=4" and .assignments[0].local == [16,8]' "--param bm=64: the other tiles take the defaults"
finish
