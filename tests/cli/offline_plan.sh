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

# interp on GPUs: only vw given, the GPU defaults still stage the input in (64,2) groups (it got
# the paper rule's (1,512) groups on stage 0, 0.128 of the copy); stage or ry given: the
# paper-era kernel as given.
run 60 "$ws" plan --kernel interp --size 2048 --devices "$h200" --param vw=1 --json
expect_jq '.assignments[0].local == [64,2] and .assignments[0].local_rule == "required by the kernel"' "interp vw=1 on GPUs: stage 1's (64,2) groups"
run 60 "$ws" plan --kernel interp --size 2048 --devices "$h200" --param vw=1 --param stage=0 --json
expect_jq '.assignments[0].local == [1,512]' "interp vw=1 stage=0: the paper rule's (1,512)"
run 60 "$ws" plan --kernel interp --size 2048 --devices "$src/docs/profiles/h200-cpu16.json" --param vw=1 --json
expect_jq '[.assignments[] | select(.units > 0) | .local_rule | startswith("paper")] | all' "interp vw=1 beside a CPU: no GPU defaults"

# --pad off: the paper's local-size rule exactly, on the slice itself (issue 28 item 9). Padded, a
# 1-D size of 1000 on a 192-PE-per-CU device is rounded up to 1024 and gets 256; the paper's rule
# on 1000 gives its smallest divisor >= 192: 200.
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
gpu() { # gpu CUS PES: a one-device profile with a work-group limit of 1024
  echo "{\"devices\": [{\"name\": \"gpu-$1x$2\", \"vendor\": \"NVIDIA Corporation\", \"type\": \"gpu\",
    \"compute_units\": $1, \"pes_per_cu\": $2, \"max_clock_mhz\": 1000, \"max_work_group_size\": 1024,
    \"max_work_item_sizes\": [1024, 1024, 64], \"local_mem_bytes\": 49152, \"global_mem_bytes\": 4294967296}]}"
}
gpu 13 192 >"$tmp/k20.json"; gpu 8 64 >"$tmp/g8.json"
run 60 "$ws" plan --devices "$tmp/k20.json" --kernel quad --size 1000 --local paper --json
expect_jq '.assignments[0].local == [256,1] and .assignments[0].padded_global == [1024,1]' "quad 1000, padded: 1024 items, local 256"
run 60 "$ws" plan --devices "$tmp/k20.json" --kernel quad --size 1000 --local paper --pad off --json
expect_jq '.assignments[0].local == [200,1] and .assignments[0].padded_global == [1000,1]' "quad 1000 --pad off: the paper's local 200"
run 60 "$ws" plan --devices "$tmp/g8.json" --kernel matmul --param variant=tiled --size 1024 --local paper --pad off --json
expect_jq '.variant == "kernel tiled" and .assignments[0].local == [512,1]' "matmul tiled 1024 --pad off: (512,1)"
run 60 "$ws" plan --devices "$tmp/g8.json" --kernel interp --param stage=0 --param ry=1 --param vw=1 --priority y --size 1024 --local paper --pad off --json
expect_jq '.assignments[0].local == [1,512]' "interp stage=0 ry=1 vw=1 1024 --pad off: (1,512)"
run 60 "$ws" plan --devices "$tmp/g8.json" --kernel quad --pad of
expect_fail_line 2 "^worksize: error: --pad must be on or off, got 'of'$" "--pad of"
finish
