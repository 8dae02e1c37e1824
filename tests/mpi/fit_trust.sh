#!/usr/bin/env bash
# A model not trusted among several devices (issue 16), over three ranks whose PoCL devices have
# 2, 1 and 2 compute units (rank 0 is the master): with a limit between the two worker models'
# fit errors, `plan --strategy model` warns about the worse one only, gives it the paper rule's
# share and the other device the rest (with two devices: the paper split), and notes it.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
db=$tmp/db.json

mpmd_cmd "$mpx" "$ws" "2 1 2" calibrate --kernel matmul --sizes 64,96,128 --max-repeats 6 --db "$db" \
  --fit-rms-limit 1000 --fit-max-limit 1000
run 300 "${MPMD[@]}"
expect_rc 0 "calibrate matmul over 3 ranks"
# Each worker model's stored fit error (rms), by the device's compute units (rank 1: 1, rank 2: 2).
rms1=$(jq '[.entries[] | select(.kind == "model" and .device.compute_units == 1)][0].payload.fit.rms_rel' "$db")
rms2=$(jq '[.entries[] | select(.kind == "model" and .device.compute_units == 2)][0].payload.fit.rms_rel' "$db")
if awk -v a="$rms1" -v b="$rms2" 'BEGIN { exit !(a > 0 && b > 0 && a != b) }'; then
  ok "both models carry their fit errors ($rms1, $rms2)"
else
  bad "fit errors in $db: '$rms1' '$rms2'"; finish; exit
fi
mid=$(awk -v a="$rms1" -v b="$rms2" 'BEGIN { printf "%.17g", (a + b) / 2 }')
worse=$(awk -v a="$rms1" -v b="$rms2" 'BEGIN { print (a > b ? 1 : 2) }')  # its rank

mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy paper --db "$db" --json
run 120 "${MPMD[@]}"
expect_rc 0 "plan --strategy paper"
paper_units=$(jq -c '[.assignments[].units]' "$out")

mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy model --db "$db" --json \
  --fit-rms-limit "$mid" --fit-max-limit 1000
run 120 "${MPMD[@]}"
expect_rc 0 "plan --strategy model with one model under the limit, one over"
expect_fail_line 0 "^worksize: warning: not trusting the matmul model of device [01] \(.*, rank $worse\): fit error rms " \
  "one warning, naming the worse model's device (rank $worse)"
expect_jq "[.assignments[] | select(.rank == $worse) | .note | startswith(\"model not trusted (fit error rms \")] == [true]" \
  "the untrusted device's note says so"
expect_jq "[.assignments[] | select(.rank != $worse) | has(\"note\")] == [false]" "the trusted device has no note"
expect_jq "[.assignments[].units] == $paper_units" "two devices, one untrusted: the paper split $paper_units"
expect_jq '.strategy == "model" and .predicted_makespan_s > 0' "still the model strategy, with its prediction"
finish
