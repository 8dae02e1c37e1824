#!/usr/bin/env bash
# `worksize calibrate --links` end to end (runtime links.hpp, scheduler links.hpp) on three PoCL
# ranks of 2, 1 and 2 compute units, every rank driving its device: the table, one database
# entry per device fingerprint (host↔device) and per pair of hosts (MPI; one host here: the
# slowest of the three pairs), with positive bandwidths and latencies >= 0 (the fit clamps a
# negative intercept to 0); the JSON output; `worksize db list` lists them; the heat
# example's --strategy model says it used the calibrated links, and the defaults with an empty
# database; bad input is one line, exit 2; a worker that hangs in the measurement
# (WORKSIZE_FAULT=hang-data:links) is named lost by rank 0, exit 1, no hang. Speeds are not asserted.
# Args: worksize worksize_example_heat MPIEXEC
ws=$1; heat=$2; mpx=$3
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
export WORKSIZE_DB=$tmp/db.json
cus="2 1 2"
num='[0-9]+\.[0-9]+'

mpmd_cmd "$mpx" "$ws" "$cus" calibrate --links --select all --link-repeats 3; run 120 "${MPMD[@]}"
expect_rc 0 "calibrate --links on 3 ranks"
expect_out "^calibrated the links of 3 device\(s\) and 3 rank pair\(s\) in $num s$" "3 devices, pairs 0-1, 0-2 and 1-2"
for r in 0 1 2; do
  expect_out "^device $r \(rank $r, .*\) +host->device +$num +$num +$num" "device $r: host->device row"
  expect_out "^device $r \(rank $r, .*\) +device->host +$num +$num +$num" "device $r: device->host row"
done
for p in 0-1 0-2 1-2; do expect_out "^ranks $p \([^)]+\) +MPI one way +$num +$num" "ranks $p: MPI row"; done
cat "$out"

# The database: two fingerprints (2 and 1 CUs), one pair of hosts (all ranks on this host).
if jq -e '[.entries[] | select(.kind == "link" and .kernel == "host-device")] | length == 2' "$WORKSIZE_DB" >/dev/null &&
   jq -e '[.entries[] | select(.kind == "link" and .kernel == "mpi")] | length == 1' "$WORKSIZE_DB" >/dev/null &&
   jq -e '[.entries[] | select(.kind == "link") | .payload | (.h2d, .d2h, .) | objects | select(has("byte_s"))
          | .byte_s > 0 and .latency_s >= 0] | length == 5 and all' "$WORKSIZE_DB" >/dev/null; then
  ok "database: 2 host-device entries and 1 MPI entry, positive bandwidths, latencies >= 0"
else bad "database: want 2 host-device and 1 mpi link entries with byte_s > 0 and latency_s >= 0"; cat "$WORKSIZE_DB"; fi

run 30 "$ws" db list kernel=mpi
expect_out "^[0-9a-f]{8} +link +mpi +\{\"hosts\":\[" "db list: the MPI link entry"
run 30 "$ws" db list kind=link
expect_out "^3 of 3 entries in " "db list kind=link: the three link entries"

mpmd_cmd "$mpx" "$ws" "2 1" calibrate --links --json --link-repeats 2; run 120 "${MPMD[@]}"
expect_rc 0 "calibrate --links --json (default selection: rank 1's device)"
expect_jq '.schema == "worksize.calibrate-links/1" and (.devices | length) == 1 and (.ranks | length) == 1
           and .devices[0].h2d.bandwidth_gbs > 0 and .ranks[0].mpi.bandwidth_gbs > 0 and .ranks[0].mpi.latency_s >= 0' \
  "JSON: one device, one pair, their bandwidths and latencies"

# --strategy model of a data job takes them (ranks of 2 and 1 CUs: both fingerprints stored).
mpmd_cmd "$mpx" "$heat" "2 1" 128 128 10 --select all --strategy model; run 120 "${MPMD[@]}"
expect_rc 0 "heat --strategy model"
expect_out "^worksize,heat,128x128x10,[12] ranks,[0-9.e+-]+,verified$" "heat --strategy model: verified"
expect_out "^  links: calibrated$" "heat --strategy model: calibrated links"
WORKSIZE_DB=$tmp/empty.json run 120 "${MPMD[@]}"
expect_out "^  links: defaults \(no host-device link for device 0 .*\), run \`worksize calibrate --links\`$" \
  "heat --strategy model, empty database: the defaults, and the hint"

run 30 "$mpx" -n 1 "$ws" calibrate --links --kernel matmul
expect_fail_line 2 "^worksize: error: --links measures the links, not a kernel" "--links --kernel: one line, exit 2"
run 30 "$mpx" -n 1 "$ws" calibrate --links --link-repeats 0
expect_fail_line 2 "^worksize: error: .*link-repeats" "--link-repeats 0: one line, exit 2"

# A worker hung in the measurement (600 s unless ended): rank 0 names it after --rank-timeout.
RANK_ENV_1="WORKSIZE_FAULT=hang-data:links" mpmd_cmd "$mpx" "$ws" "2 1" calibrate --links --rank-timeout 2
run 60 "${MPMD[@]}"
if [ "$rc" -eq 1 ] && grep -Eq "^worksize: error: rank 1 on host [^ ]+ \(device '[^']+'\) is lost: " "$err"; then
  ok "a hung worker: rank 0 names it lost, exit 1"
else bad "a hung worker: exit $rc, want 1 and a line naming rank 1 lost"; fi
finish
