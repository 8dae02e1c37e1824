#!/usr/bin/env bash
# Public OpenCL applications ported with their kernels as published (examples/<app>/ORIGIN.md):
# each kernel file is the published one (its sha256 as ORIGIN.md records it), the plain host
# verifies against the CPU reference, and the worksize host verifies on one rank and on three
# PoCL ranks of 1, 2 and 1 compute units (every rank driving its device), with the engine's
# overlapped launches and without, on a size whose slices do not divide evenly.
# Args: SOURCE_DIR MPIEXEC then pairs APP:WORKSIZE_BINARY:PLAIN_BINARY:"ARGS"
src=$1; mpx=$2; shift 2
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$0")/../lib.sh"

for spec in "$@"; do
  IFS=: read -r app ws plain args <<<"$spec"
  dir=$src/examples/$app
  while read -r file sum; do
    if [ "$(sha256sum "$dir/$file" | cut -d' ' -f1)" = "$sum" ]; then ok "$app: $file is the published file"
    else checks=$((checks+1)); fails=$((fails+1)); echo "FAIL: $app: $file differs from the published one (sha256 $sum)"; fi
  done < <(grep -Eo '`[^`]+\.cl` sha256 [0-9a-f]{64}' "$dir/ORIGIN.md" | tr -d '`' | sed 's/ sha256 / /')
  # shellcheck disable=SC2086
  run 120 "$plain" $args
  expect_rc 0 "plain $app"
  expect_out "^plain,$app,.*,verified$" "plain $app: verified"
  # shellcheck disable=SC2086
  run 120 "$mpx" -n 1 "$ws" $args
  expect_rc 0 "$app on 1 rank"
  expect_out "^worksize,$app,[^,]+,1 ranks,[0-9.e+-]+,verified$" "$app on 1 rank: verified"
  for overlap in on off; do
    # shellcheck disable=SC2086
    mpmd_cmd "$mpx" "$ws" "1 2 1" $args --select all --overlap $overlap; run 120 "${MPMD[@]}"
    expect_rc 0 "$app on 3 ranks of 1, 2 and 1 CUs, --overlap $overlap"
    expect_out "^worksize,$app,[^,]+,3 ranks,[0-9.e+-]+,verified$" "$app on 3 ranks, --overlap $overlap: verified"
  done
done
finish
