#!/usr/bin/env bash
# One device-JSON format: what `worksize devices --json` writes, `worksize plan --devices FILE`
# reads back, for every sample kernel; truly unknown fields are still refused.
ws=$1; src=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT

run 120 "$ws" devices --json; expect_rc 0 "devices --json"
cp "$out" "$tmp/devices.json"
name=$(jq -r '.devices[0].name' "$tmp/devices.json")

for kernel in matmul interp sort quad; do
  run 120 "$ws" plan --devices "$tmp/devices.json" --kernel "$kernel"
  expect_rc 0 "plan --devices (devices --json) --kernel $kernel"
  expect_out "$(printf '%s' "$name" | sed 's/[][\.*^$()+?{}|]/\\&/g')" "the plan of $kernel lists '$name'"
done

# devices --devices reads it back and writes the same devices.
run 60 "$ws" devices --devices "$tmp/devices.json" --json; expect_rc 0 "devices --devices of devices --json"
if jq -S '.devices' "$out" | diff -q - <(jq -S '.devices' "$tmp/devices.json") >/dev/null; then
  ok "devices --json written, read and written again is the same"
else
  bad "devices --json round trip differs"
fi

# Still strict: an unknown field, and a total_pes that does not add up.
jq '.devices[0].colour = "blue"' "$tmp/devices.json" > "$tmp/unknown.json"
run 60 "$ws" plan --devices "$tmp/unknown.json" --kernel matmul
expect_fail_line 2 "unknown field 'colour'" "an unknown field is refused"
jq '.devices[0].total_pes = 1' "$tmp/devices.json" > "$tmp/pes.json"
run 60 "$ws" plan --devices "$tmp/pes.json" --kernel matmul
expect_fail_line 2 "total_pes" "an inconsistent total_pes is refused"

# The paper's profile (its "node" field) still reads unchanged.
run 60 "$ws" plan --devices "$src/docs/profiles/paper-2015.json" --kernel matmul; expect_rc 0 "paper-2015.json"
finish
