#!/usr/bin/env bash
# `worksize tune` over three ranks whose PoCL devices have 2, 1 and 2 compute units (rank 0 is
# the master): both worker devices are tuned from rank 0 and stored in rank 0's database, and an
# entry that only rank 1's own database holds (tuned there earlier, single-process) is merged
# into rank 0's. Then `plan --local tuned` over the ranks uses the entries.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
fast=(--iterations 1 --repeats 1 --warmup 0)

# Rank 1's node tuned quad on its own before (1 CU, its database only).
POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1 run 200 "$ws" tune --kernel quad --size 1024 --db "$tmp/r1.json" "${fast[@]}"
expect_rc 0 "single-process tune on the 1-CU device into rank 1's database"

RANK_ENV_0="WORKSIZE_DB=$tmp/r0.json" RANK_ENV_1="WORKSIZE_DB=$tmp/r1.json" RANK_ENV_2="WORKSIZE_DB=$tmp/r2.json" \
  mpmd_cmd "$mpx" "$ws" "2 1 2" tune --kernel sort --size 1024 --search guided "${fast[@]}"
run 300 "${MPMD[@]}"
expect_rc 0 "tune sort over 3 ranks"
expect_out "^sort +0 .* 1 " "rank 1's device tuned"
expect_out "^sort +1 .* 2 " "rank 2's device tuned"
expect_out "1 merged from other ranks" "rank 1's own entry merged at rank 0"
db="$tmp/r0.json"
if jq -e '[.entries[] | select(.kernel == "sort") | .device.compute_units] | sort == [1,2]' "$db" >/dev/null; then
  ok "rank 0's database has sort entries for both worker devices (1 and 2 CUs)"; else bad "sort entries in $db"; fi
if jq -e '[.entries[] | select(.kernel == "quad") | .device.compute_units] == [1]' "$db" >/dev/null; then
  ok "rank 0's database has rank 1's quad entry"; else bad "quad entry not merged into $db"; fi
[ ! -e "$tmp/r2.json" ] && ok "workers keep no database of their own from this run" || bad "rank 2 wrote a database"

# plan --local tuned at rank 0 uses the merged database for both devices: an even split of
# 2048 items gives each worker a slice of 1024, the size class tuned above.
RANK_ENV_0="WORKSIZE_DB=$db" mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel sort --size 2048 --strategy even --local tuned --json
run 120 "${MPMD[@]}"
expect_rc 0 "plan --local tuned over 3 ranks"
expect_jq '[.assignments[] | select(.units > 0) | .local_rule | startswith("tuned (db entry")] | length == 2' "both workers get their tuned local sizes"
finish
