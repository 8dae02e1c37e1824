#!/usr/bin/env bash
# Two emulated nodes (worker ranks with WORKSIZE_HOSTNAME nodeA and nodeB, identical 2-CU PoCL
# devices) tune and calibrate into rank 0's database: one shared entry per kernel, both hosts as
# its provenance; with WORKSIZE_DB_PER_HOST=1, one entry per node.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
fast=(--iterations 1 --repeats 1 --warmup 0)
unset WORKSIZE_DB_PER_HOST WORKSIZE_HOSTNAME

db="$tmp/shared.json"
RANK_ENV_0="WORKSIZE_DB=$db WORKSIZE_HOSTNAME=head" RANK_ENV_1="WORKSIZE_HOSTNAME=nodeA" RANK_ENV_2="WORKSIZE_HOSTNAME=nodeB" \
  mpmd_cmd "$mpx" "$ws" "2 2 2" tune --kernel sort --size 1024 "${fast[@]}"
run 300 "${MPMD[@]}"
expect_rc 0 "tune sort on two emulated nodes"
expect_out "^sort +0 .* 1 " "nodeA's device tuned"
expect_out "^sort +1 .* 2 " "nodeB's device tuned"
if jq -e '[.entries[] | select(.kernel == "sort")] | length == 1 and .[0].device.host == "" and
          .[0].provenance.hosts == ["nodeA","nodeB"]' "$db" >/dev/null; then
  ok "one shared sort entry, measured on nodeA and nodeB"; else bad "sort entries in $db: $(cat "$db")"; fi

RANK_ENV_0="WORKSIZE_DB=$db WORKSIZE_HOSTNAME=head" RANK_ENV_1="WORKSIZE_HOSTNAME=nodeA" RANK_ENV_2="WORKSIZE_HOSTNAME=nodeB" \
  mpmd_cmd "$mpx" "$ws" "2 2 2" calibrate --kernel matmul --sizes 64,128 --max-repeats 3
run 400 "${MPMD[@]}"
expect_rc 0 "calibrate matmul on two emulated nodes"
if jq -e '[.entries[] | select(.kind == "model" and .kernel == "matmul")] | length == 1 and
          .[0].provenance.hosts == ["nodeA","nodeB"] and (.[0].alternates | length == 1)' "$db" >/dev/null; then
  ok "one shared matmul model; the other node's model kept as an alternate"; else bad "matmul models in $db"; fi

pdb="$tmp/per-host.json"
RANK_ENV_0="WORKSIZE_DB=$pdb WORKSIZE_HOSTNAME=head WORKSIZE_DB_PER_HOST=1" RANK_ENV_1="WORKSIZE_HOSTNAME=nodeA" \
  RANK_ENV_2="WORKSIZE_HOSTNAME=nodeB" mpmd_cmd "$mpx" "$ws" "2 2 2" tune --kernel sort --size 1024 "${fast[@]}"
run 300 "${MPMD[@]}"
expect_rc 0 "tune sort on two emulated nodes, per-host keys"
if jq -e '[.entries[] | select(.kernel == "sort") | .device.host] | sort == ["nodeA","nodeB"]' "$pdb" >/dev/null; then
  ok "WORKSIZE_DB_PER_HOST=1: one sort entry per node"; else bad "sort entries in $pdb: $(cat "$pdb")"; fi
finish
