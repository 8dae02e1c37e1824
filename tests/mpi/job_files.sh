#!/usr/bin/env bash
# Job files over three ranks whose PoCL devices have 1, 2 and 1 compute units, every rank driving
# its device (--select all): every rank reads the job file and registers the job. `tune --job`
# stores the filter5x5 job's entries in rank 0's database, `run --job --local tuned` uses them and
# verifies, `bench --job` verifies every strategy (model included, calibrated on the fly), and
# the 1-D saxpy job verifies, and PolyBench's convolution kernel runs unmodified ("arrays":
# "whole"). Plumbing only: no timing is asserted.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
jobs="$(cd "$(dirname "$0")/../.." && pwd)/examples/jobs"
db="$tmp/db.json"
export RANK_ENV_0="WORKSIZE_DB=$db" RANK_ENV_1="WORKSIZE_DB=$tmp/r1.json" RANK_ENV_2="WORKSIZE_DB=$tmp/r2.json"
cus="1 2 1"
# No confirmation, no baseline check (docs/tuning.md): plumbing only, the stored local sizes are
# the searches' own (a NULL or paper entry would make part 2's divisibility check meaningless).
fast=(--iterations 1 --repeats 1 --warmup 0 --confirm-top 0 --baseline-runs 0)

# 1. tune --job: each rank's device tuned from rank 0, the entries stored in rank 0's database
#    under the job's name (both 1-CU devices are the same device to the database: one entry).
mpmd_cmd "$mpx" "$ws" "$cus" tune --job "$jobs/filter5x5.json" --size 256x128 --select all "${fast[@]}"
run 200 "${MPMD[@]}"
expect_rc 0 "tune --job filter5x5.json --size 256x128 over 3 ranks"
for r in 0 1 2; do
  expect_out "^filter5x5 +$r .* $r +256x128 +\([0-9]+,[0-9]+\) .* yes *$" "rank $r's device tuned and stored"
done
expect_out "^database: $db " "the report names rank 0's database"
if jq -e '[.entries[] | select(.kind == "tuning" and .kernel == "filter5x5" and .params.job == "filter5x5"
           and .size_class == "x2^8.y2^7") | .device.compute_units] | sort == [1, 2]' "$db" >/dev/null 2>&1; then
  ok "rank 0's database has the job's entries for the 1- and 2-CU devices"
else bad "filter5x5 entries in $db: $(jq -c '[.entries[] | {kernel, size_class, cu: .device.compute_units}]' "$db" 2>&1)"; fi
if [ ! -e "$tmp/r1.json" ] && [ ! -e "$tmp/r2.json" ]; then ok "workers keep no database of their own"; else bad "a worker wrote a database"; fi

# 2. run --job --local tuned: verifies, and each device runs its entry's local size (unless the
#    entry cannot divide its slice, when the paper rule stands in).
mpmd_cmd "$mpx" "$ws" "$cus" run --job "$jobs/filter5x5.json" --size 256x128 --select all --local tuned
run 120 "${MPMD[@]}"
expect_rc 0 "run --job filter5x5.json --local tuned over 3 ranks"
expect_out "^kernel filter5x5, size 256x128, .*local tuned" "the run says its locals are the tuned ones"
expect_out "verified: max rel error [0-9.e+-]+ against a single-device run \(tolerance 1e-06\)" "the tuned run verifies"
mpmd_cmd "$mpx" "$ws" "$cus" run --job "$jobs/filter5x5.json" --size 256x128 --select all --local tuned --json
run 120 "${MPMD[@]}"
expect_rc 0 "run --job --local tuned --json"
cp "$out" "$tmp/run.json"
tuned_locals='[.devices[] | . as $d | ($db[0].entries[] | select(.kind == "tuning" and .kernel == "filter5x5"
                 and .device.compute_units == ([1, 2, 1][$d.rank])) | .payload.local) as $e
               | {l: $d.local, e: $e, fits: ($d.global[0] % $e[0] == 0 and $d.global[1] % $e[1] == 0)}]'
if jq -e --slurpfile db "$db" "$tuned_locals"' | length == 3 and all(.l == .e or (.fits | not)) and ((any(.fits) | not) or any(.l == .e))' \
     "$tmp/run.json" >/dev/null 2>&1; then
  ok "the devices run their tuned entries' local sizes"
else bad "tuned locals: $(jq -c --slurpfile db "$db" "$tuned_locals" "$tmp/run.json" 2>&1)"; fi
expect_jq '.verified == true and .local_policy == "tuned" and (.devices | length == 3)' "the tuned run verifies on 3 devices (--json)"
# plan --local tuned over the same ranks says where each local size comes from.
mpmd_cmd "$mpx" "$ws" "$cus" plan --job "$jobs/filter5x5.json" --size 256x128 --select all --local tuned --json
run 120 "${MPMD[@]}"
expect_rc 0 "plan --job --local tuned over 3 ranks"
expect_jq '[.assignments[] | select(.units > 0) | .local_rule | startswith("tuned (")] | any' "the plan's local sizes come from the database entries"

# 3. bench --job: every strategy verifies; model calibrates first (small sizes, into rank 0's db).
mpmd_cmd "$mpx" "$ws" "$cus" bench --job "$jobs/filter5x5.json" --size 256x128 --select all \
  --strategies even,pe-ratio,paper,model,oracle --repeats 1 --calibration-sizes 128x64,256x128 --csv "$tmp/bench.csv"
run 240 "${MPMD[@]}"
expect_rc 0 "bench --job filter5x5.json over 3 ranks"
expect_out "^kernel filter5x5, size 256x128," "the bench names the job"
for s in even pe-ratio paper model oracle; do
  # The last column: "-", or the strategy whose identical plan it shares (with weak models, which
  # a small calibration on a loaded machine gives, model plans as paper: docs/models.md).
  expect_out "^$s +([0-9.]+ +){3}.* yes +(-|[a-z-]+ \([0-9]+ runs pooled\)) *$" "bench: $s verified"
done
if grep -Eq "^worksize: info: calibration: no calibration for kernel filter5x5 .*calibrating now" "$err"; then
  ok "bench calibrates the job for model (a note on stderr)"; else bad "no 'calibrating now' note on stderr"; fi
if jq -e '[.entries[] | select(.kind == "model" and .kernel == "filter5x5") | .device.compute_units] | sort == [1, 2]' "$db" >/dev/null 2>&1; then
  ok "the job's models are stored in rank 0's database"; else bad "filter5x5 models in $db: $(jq -c '[.entries[] | {kind, kernel}]' "$db" 2>&1)"; fi
if [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "verified") v = i; next } $v == 1 { n++ } END { print n + 0 }' "$tmp/bench.csv")" -eq 5 ]; then
  ok "bench CSV: all 5 strategies verified"; else bad "bench CSV: $(cat "$tmp/bench.csv")"; fi

# 4. The 1-D saxpy job on the 3 ranks, and with rank 0 as the master only (--select auto).
mpmd_cmd "$mpx" "$ws" "$cus" run --job "$jobs/saxpy.json" --size 100003 --select all
run 120 "${MPMD[@]}"
expect_rc 0 "run --job saxpy.json --size 100003 over 3 ranks"
expect_out "^kernel saxpy-job, size 100003," "the run of the 1-D job"
for r in 0 1 2; do expect_out "^$r: .* $r +[0-9.]+ +[0-9]+ " "saxpy: rank $r's device has a share"; done
expect_out "verified: max rel error 0 against a single-device run \(tolerance 0\)" "saxpy verified over 3 ranks"
mpmd_cmd "$mpx" "$ws" "$cus" run --job "$jobs/saxpy.json" --size 100003 --json
run 120 "${MPMD[@]}"
expect_rc 0 "run --job saxpy.json, rank 0 the master"
expect_jq '.verified == true and ([.devices[].rank] | sort == [1, 2])' "saxpy verified on the two workers"

# 5. PolyBench-ACC's 2-D convolution kernel as published ("arrays": "whole"): the file unchanged,
#    and its rows split over the 3 ranks, verified against the whole problem on one device.
poly="$jobs/polybench"
want=$(grep -Eo '`2DConvolution.cl` sha256 [0-9a-f]{64}' "$poly/ORIGIN.md" | awk '{print $3}')
if [ -n "$want" ] && [ "$(sha256sum "$poly/2DConvolution.cl" | cut -d' ' -f1)" = "$want" ]; then
  ok "2DConvolution.cl is the published file"; else bad "2DConvolution.cl differs from the published one"; fi
mpmd_cmd "$mpx" "$ws" "$cus" run --job "$poly/conv2d.json" --size 300x203 --select all --json
run 120 "${MPMD[@]}"
expect_rc 0 "run --job polybench/conv2d.json --size 300x203 over 3 ranks"
expect_jq '.verified == true and ([.devices[] | select(.units > 0) | .rank] | sort == [0, 1, 2])' \
  "the published convolution kernel verified with a slice on each of the 3 ranks"
# The same kernel declared for slices (no "arrays": "whole") writes past its buffers: with
# WORKSIZE_CHECK_BOUNDS=1 on every rank the guard zones catch it (without them it corrupts the heap).
sed -e 's/"arrays": "whole",//' -e "s#\"source\": \"2DConvolution.cl\"#\"source\": \"$poly/2DConvolution.cl\"#" \
  "$poly/conv2d.json" >"$tmp/conv2d_slices.json"
RANK_ENV_0="WORKSIZE_CHECK_BOUNDS=1" RANK_ENV_1="WORKSIZE_CHECK_BOUNDS=1" RANK_ENV_2="WORKSIZE_CHECK_BOUNDS=1" \
  mpmd_cmd "$mpx" "$ws" "$cus" run --job "$tmp/conv2d_slices.json" --size 300x203 --select all
run 120 "${MPMD[@]}"
expect_fail_line 1 "kernel 'Convolution2D_kernel' wrote outside buffer 'B', at [0-9]+ bytes past its end.*needs \"arrays\": \"whole\"" \
  "--check-bounds: the convolution kernel declared for slices is named, exit 1, one line"
finish
