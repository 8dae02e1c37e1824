#!/usr/bin/env bash
# Public OpenCL applications ported with their kernels as published (examples/<app>/ORIGIN.md):
# each kernel file is the published one (its sha256 as ORIGIN.md records it), the plain host
# verifies against the CPU reference, and the worksize host verifies on one rank and on three
# PoCL ranks of 1, 2 and 1 compute units (every rank driving its device), with the engine's
# overlapped launches and without, on a size whose slices do not divide evenly; each takes the
# runtime's options (--help lists them; a bad one is one line, exit 2), pathfinder its own --block.
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
  done < <(grep -Eo '`[^`]+\.(cl|h)` sha256 [0-9a-f]{64}' "$dir/ORIGIN.md" | tr -d '`' | sed 's/ sha256 / /')
  # shellcheck disable=SC2086
  run 120 "$plain" $args
  # (srad's plain host runs Rodinia's reduce_kernel, which sums wrongly on PoCL's CPU device: it
  # says so, "wrong-reduce" and exit 3, after checking that kernel's sum alone; examples/srad/ORIGIN.md)
  if [ "$app" = srad ] && grep -q ',wrong-reduce$' "$out"; then
    expect_rc 3 "plain $app: Rodinia's reduce_kernel sums wrongly on this device"
  else
    expect_rc 0 "plain $app"
    expect_out "^plain,$app,.*,verified$" "plain $app: verified"
  fi
  # shellcheck disable=SC2086
  run 120 "$mpx" -n 1 "$ws" $args
  expect_rc 0 "$app on 1 rank"
  expect_out "^worksize,$app,[^,]+,1 ranks,[0-9.e+-]+,verified$" "$app on 1 rank: verified"
  # The application's command line: the runtime's options as the CLI has them, --help, one line for a bad one.
  run 60 "$mpx" -n 1 "$ws" --help
  expect_rc 0 "$app --help"
  expect_out "--devices-per-rank" "$app --help lists the runtime's options (--devices-per-rank)"
  expect_out "--rank-timeout" "$app --help lists --rank-timeout"
  run 60 "$mpx" -n 2 "$ws" --no-such-option
  expect_fail_line 2 "^$app: error: unrecognised option '--no-such-option'$" "$app --no-such-option: exit 2, one line"
  run 60 "$mpx" -n 2 "$ws" --rank-timeout 0
  expect_fail_line 2 "^$app: error: --rank-timeout must be a number in \(0, 3600\], got '0'$" "$app --rank-timeout 0: exit 2, one line"
  for overlap in on off; do
    # shellcheck disable=SC2086
    mpmd_cmd "$mpx" "$ws" "1 2 1" $args --select all --overlap $overlap; run 120 "${MPMD[@]}"
    expect_rc 0 "$app on 3 ranks of 1, 2 and 1 CUs, --overlap $overlap"
    expect_out "^worksize,$app,[^,]+,3 ranks,[0-9.e+-]+,verified$" "$app on 3 ranks, --overlap $overlap: verified"
  done
done
# pathfinder's own option: work-groups of 128 items (128 - 2·7 columns each) verify on 3 ranks.
for spec in "$@"; do
  IFS=: read -r app ws plain args <<<"$spec"
  [ "$app" = pathfinder ] || continue
  # shellcheck disable=SC2086
  mpmd_cmd "$mpx" "$ws" "1 2 1" $args --select all --block 128; run 120 "${MPMD[@]}"
  expect_rc 0 "pathfinder --block 128 on 3 ranks"
  expect_out "^worksize,pathfinder,[^,]+,3 ranks,[0-9.e+-]+,verified$" "pathfinder --block 128: verified"
  expect_out "launches groups of 128 items per 114 units" "pathfinder --block 128: the plan says what launches"
done
finish
