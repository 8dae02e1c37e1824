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
finish
