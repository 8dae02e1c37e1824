#!/usr/bin/env bash
# Every sample kernel, run split over three ranks whose PoCL devices have 2, 1 and 2 compute units
# (rank 0 the master, ranks 1 and 2 workers), with awkward sizes, under every split strategy and
# local-size policy; each result is verified by rank 0 against a CPU reference.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
db=$(mktemp -d)/db.json   # empty tuning database: --local tuned falls back to the paper's rule

declare -A sizes=([matmul]="17 1 67x23 100" [interp]="17 1 101x37 128" [sort]="1000 1 509 4099" [quad]="1023 1 509 100003")
ki=0
for k in matmul interp sort quad; do
  read -r -a sz <<<"${sizes[$k]}"
  i=0 si=0
  for strategy in even pe-ratio paper; do
    li=0
    for local in null paper tuned; do
      # The default tier: each strategy once and each local policy once per kernel (a diagonal
      # of the grid, shifted by kernel, so that each size meets other pairs); the full tier: all.
      s=${sz[$((i % ${#sz[@]}))]}; i=$((i+1)); li=$((li+1))
      if ! full_tier && [ $(( (si + li + ki) % 3 )) -ne 0 ]; then continue; fi
      mpmd_cmd "$mpx" "$ws" "2 1 2" run "$k" --size "$s" --strategy "$strategy" --local "$local" --db "$db" --iterations 2 --json
      run 120 "${MPMD[@]}"
      if [ "$rc" -eq 0 ] && jq -e '.verified == true and (.devices | length) == 2 and ([.devices[].rank] == [1,2])' "$out" >/dev/null; then
        ok "$k size $s $strategy/$local: verified on ranks 1 and 2"
      else
        bad "$k size $s $strategy/$local"
      fi
    done
    si=$((si+1))
  done
  ki=$((ki+1))
done
# Sort split over ranks 1 and 2 at a size where rank 0's partition runs in two threads, with
# either algorithm: verified, and both devices sorted a bucket.
for algo in radix bitonic; do
  mpmd_cmd "$mpx" "$ws" "2 1 2" run sort --size 300007 --strategy even --param algo=$algo --param partition_threads=2 --json
  run 120 "${MPMD[@]}"
  if [ "$rc" -eq 0 ] && jq -e '.verified == true and ([.devices[] | select(.units > 0)] | length) == 2 and (.summary | test("by '$algo' sort"))' "$out" >/dev/null; then
    ok "sort 300007 algo=$algo split over two ranks, partitioned in two threads: verified"
  else
    bad "sort 300007 algo=$algo split over two ranks"
  fi
done
# The tasks' inputs and outputs in pieces of 4000 bytes (transport/pieces.hpp; many per part):
# matmul, interp and a job file upload each piece as it comes, sort waits for its whole input;
# every output comes back in pieces. Each verified against the CPU reference.
for k in "matmul 100" "interp 101x37" "sort 4099" "quad 100003"; do
  set -- $k
  mpmd_cmd "$mpx" "$ws" "2 1 2" run "$1" --size "$2" --strategy even --iterations 2 --json
  WORKSIZE_PIECE_BYTES=4000 run 120 "${MPMD[@]}"
  if [ "$rc" -eq 0 ] && jq -e '.verified == true and (.devices | length) == 2' "$out" >/dev/null; then
    ok "$1 size $2 in pieces of 4000 bytes: verified on ranks 1 and 2"
  else
    bad "$1 size $2 in pieces of 4000 bytes"
  fi
done
mpmd_cmd "$mpx" "$ws" "2 1 2" run --job "$(dirname "$0")/../../examples/jobs/filter5x5.json" --size 300x200 --strategy even --json
WORKSIZE_PIECE_BYTES=4000 run 120 "${MPMD[@]}"
if [ "$rc" -eq 0 ] && jq -e '.verified == true' "$out" >/dev/null; then ok "job file filter5x5 in pieces of 4000 bytes: verified"
else bad "job file filter5x5 in pieces of 4000 bytes"; fi

# The measured strategies: model (after a calibration into the same database) and oracle.
mpmd_cmd "$mpx" "$ws" "2 1 2" calibrate --kernel all --db "$db"; run 300 "${MPMD[@]}"
expect_rc 0 "calibrate all kernels over ranks 1 and 2"
for k in matmul interp sort quad; do
  for strategy in model oracle; do
    # oracle searches by running: every kernel in the full tier, quad alone in the default one
    if [ "$strategy" = oracle ] && [ "$k" != quad ] && ! full_tier; then continue; fi
    s=${sizes[$k]##* }
    mpmd_cmd "$mpx" "$ws" "2 1 2" run "$k" --size "$s" --strategy "$strategy" --db "$db" --json
    run 300 "${MPMD[@]}"
    if [ "$rc" -eq 0 ] && jq -e '.verified == true' "$out" >/dev/null; then ok "$k size $s $strategy: verified"
    else bad "$k size $s $strategy"; fi
  done
done

# The shares follow the CU counts (1-CU rank 1 gets less) and the JSON carries the time breakdown.
mpmd_cmd "$mpx" "$ws" "2 1 2" run quad --size 100000 --strategy pe-ratio --json; run 120 "${MPMD[@]}"
expect_jq '.devices[0].share < .devices[1].share' "pe-ratio: the 1-CU rank gets the smaller share"
expect_jq '[.devices[].times | has("send","h2d","kernel","d2h","recv")] | all' "time breakdown per device"
expect_jq '.makespan_s > 0 and .kernel == "quad" and (.size | length) == 2' "makespan and size"
mpmd_cmd "$mpx" "$ws" "2 1 2" run matmul --size 48 --master-works; run 120 "${MPMD[@]}"
expect_rc 0 "matmul with rank 0 working too"
expect_out "verified" "table ends with the verdict"
# Rank 0's own slices copy the job's memory through pinned halves (HostCopy), as onto a GPU: A's
# rows and B uploaded, C downloaded in pieces of 1000 bytes, on both of rank 0's devices.
POCL_DEVICES="basic pthread" WORKSIZE_STAGED_UPLOADS=1 WORKSIZE_PIECE_BYTES=1000 \
  run 120 "$ws" run matmul --size 100 --select 0=0+1 --strategy even --json
expect_jq '.verified == true and ([.devices[] | select(.units > 0)] | length) == 2' \
  "matmul from rank 0's memory in pieces through pinned halves onto two devices: verified"
finish
