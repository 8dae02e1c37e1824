#!/usr/bin/env bash
# A user's own kernel (examples/saxpy) split over three PoCL ranks of 2, 1 and 2 CUs, verified;
# then its local size tuned on both worker devices through the porting API and used by the plan.
ex=$1; mpx=$2
source "$(dirname "$0")/lib.sh"
db=$(mktemp -u); trap 'rm -f "$out" "$err" "$db"' EXIT
mpmd_cmd "$mpx" "$ex" "2 1 2" 100003; run 120 "${MPMD[@]}"
expect_rc 0 "saxpy through the porting API"
expect_out "^rank 1 .* items" "rank 1 ran a slice"
expect_out "^rank 2 .* items" "rank 2 ran a slice"
expect_out "verified: 100003 elements exact" "result verified"

mpmd_cmd "$mpx" "$ex" "2 1 2" 131072 --tune "$db"; run 240 "${MPMD[@]}"
expect_rc 0 "saxpy tuned and run"
expect_out "^tuned device 0 .*: local [0-9]+, measured [0-9]+ of [0-9]+ candidates" "device 0 tuned"
expect_out "^tuned device 1 .*: local [0-9]+, measured [0-9]+ of [0-9]+ candidates" "device 1 tuned"
expect_out "^rank 1 .* items, local [0-9]+ \(tuned\)" "rank 1 runs its tuned local size"
expect_out "^rank 2 .* items, local [0-9]+ \(tuned\)" "rank 2 runs its tuned local size"
expect_out "verified: 131072 elements exact" "tuned run verified"
if jq -e '[.entries[] | select(.kind == "tuning" and .kernel == "saxpy" and .payload.iterations == 1)] | length == 2' "$db" >/dev/null; then
  ok "two saxpy tuning entries stored"; else bad "expected two saxpy tuning entries in $db"; fi

run 60 "$ex" 12x
expect_fail_line 1 "usage: worksize_example_saxpy" "a bad argument: one usage line, exit 1"
finish
