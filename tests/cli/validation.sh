#!/usr/bin/env bash
# Guard-rails (issue 16): every option and kernel parameter is checked by type and range before
# any work starts: one stderr line and exit 2. Valid values still work.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
export WORKSIZE_DB="$tmp/db.json"  # never the user's database
fast=(--iterations 1 --repeats 1 --warmup 0)

# 1. Unsigned options: a negative value is refused, not wrapped to 2^64 - n.
run 60 "$ws" plan --kernel matmul --iterations -5;      expect_fail_line 2 "^worksize: error: --iterations must be an integer in \[1, 1000000000\], got '-5'$" "plan --iterations -5"
run 60 "$ws" plan --kernel matmul --seed -1;            expect_fail_line 2 "--seed must be a non-negative integer, got '-1'" "plan --seed -1"
run 60 "$ws" plan --kernel matmul --iterations 99999999999999999999; expect_fail_line 2 "--iterations .*got '99999999999999999999'" "plan --iterations beyond 64 bits"
run 60 "$ws" plan --kernel matmul --iterations 1.5;     expect_fail_line 2 "--iterations must be an integer" "plan --iterations 1.5"
run 60 "$ws" plan --kernel matmul --iterations abc;     expect_fail_line 2 "--iterations must be an integer" "plan --iterations abc"
run 60 "$ws" plan --kernel matmul --iterations +3;      expect_fail_line 2 "--iterations must be an integer" "plan --iterations +3"
run 60 "$ws" run matmul --warmup -1;                    expect_fail_line 2 "--warmup must be a non-negative integer" "run --warmup -1"
run 60 "$ws" bench --kernel sort --repeats -1;          expect_fail_line 2 "--repeats must be an integer >= 1" "bench --repeats -1"
run 60 "$ws" calibrate --kernel sort --iterations -1;   expect_fail_line 2 "--iterations must be an integer in \[1, 1000000000\]" "calibrate --iterations -1"
run 60 "$ws" calibrate --kernel sort --seed -2;         expect_fail_line 2 "--seed must be a non-negative integer" "calibrate --seed -2"
run 60 "$ws" calibrate --kernel sort --min-repeats -1;  expect_fail_line 2 "--min-repeats must be an integer >= 1" "calibrate --min-repeats -1"
run 60 "$ws" calibrate --kernel sort --max-repeats -1;  expect_fail_line 2 "--max-repeats must be an integer >= 1" "calibrate --max-repeats -1"
for opt in iterations repeats; do
  run 60 "$ws" tune --kernel sort --size 256 --$opt -3; expect_fail_line 2 "--$opt must be an integer (>= 1|in \[1, 1000000000\]), got '-3'" "tune --$opt -3"
done
for opt in warmup confirm-top confirm-runs head-to-head seed; do
  run 60 "$ws" tune --kernel sort --size 256 --$opt -1; expect_fail_line 2 "--$opt must be a non-negative integer, got '-1'" "tune --$opt -1"
done
run 60 "$ws" tune --kernel sort --size 256 --min-budget -1; expect_fail_line 2 "--min-budget must be an integer >= 1" "tune --min-budget -1"
run 60 "$ws" tune --kernel sort --size 256 --min-budget 0;  expect_fail_line 2 "--min-budget must be an integer >= 1" "tune --min-budget 0"

# 2. Ranges of the selection and real options: finite, in range.
run 60 "$ws" plan --kernel matmul --devices-per-rank 0; expect_fail_line 2 "--devices-per-rank must be an integer >= 1, got '0'" "--devices-per-rank 0"
run 60 "$ws" devices --devices-per-rank -1;             expect_fail_line 2 "--devices-per-rank must be an integer >= 1" "devices --devices-per-rank -1"
for v in -1 nan 1 inf; do
  run 60 "$ws" plan --kernel matmul --join-margin $v;   expect_fail_line 2 "--join-margin must be a number in \[0, 1\), got '$v'" "--join-margin $v"
done
for v in 0 -3 nan inf; do
  run 60 "$ws" plan --kernel matmul --ops $v;           expect_fail_line 2 "--ops must be a number > 0, got '$v'" "--ops $v"
done
for v in 0 1.5 nan; do
  run 60 "$ws" tune --kernel sort --size 256 --budget $v; expect_fail_line 2 "--budget must be a number in \(0, 1\], got '$v'" "tune --budget $v"
done
for v in -1 inf 60001; do
  run 60 "$ws" tune --kernel sort --size 256 --min-run-ms $v; expect_fail_line 2 "--min-run-ms must be a number in \[0, 60000\]" "tune --min-run-ms $v"
done
run 60 "$ws" run --paper-experiment --repeat-scale 0;   expect_fail_line 2 "--repeat-scale must be a number in \(0, 1e\+06\]" "run --repeat-scale 0"
run 60 "$ws" run --paper-experiment --repeat-scale nan; expect_fail_line 2 "--repeat-scale must be" "run --repeat-scale nan"
# Valid values at the edges still work.
run 60 "$ws" plan --kernel matmul --size 256 --iterations 3 --seed 0 --join-margin 0 --ops 1e9 --devices-per-rank 2
expect_rc 0 "plan with valid --iterations, --seed 0, --join-margin 0, --ops, --devices-per-rank"
run 60 "$ws" plan --kernel matmul --size 256 --join-margin 0.99 --json
expect_jq '.assignments | length >= 1' "plan --join-margin 0.99 --json"

# 3. --param: an integer stays an integer (matmul's k), an integral real is taken too.
run 60 "$ws" plan --kernel matmul --size 512 --param k=512;  expect_rc 0 "plan matmul --param k=512"
run 60 "$ws" plan --kernel matmul --size 512 --param k=1e3;  expect_rc 0 "plan matmul --param k=1e3 (an integral real)"
run 60 "$ws" plan --kernel matmul --size 512 --param k=2.5; expect_fail_line 2 "parameter 'k' must be a positive integer, got 2.5" "matmul --param k=2.5"
run 60 "$ws" plan --kernel matmul --size 512 --param k=0;   expect_fail_line 2 "matmul: parameter .k. must be a positive integer, got 0" "matmul --param k=0"
run 60 "$ws" plan --kernel matmul --size 512 --param k=-4;  expect_fail_line 2 "parameter 'k' must be a positive integer" "matmul --param k=-4"
run 120 "$ws" run matmul --size 64 --param k=32 --json
expect_rc 0 "run matmul --size 64 --param k=32"
expect_jq '.verified == true' "run matmul --param k=32 verifies"
run 120 "$ws" run quad --size 1024 --param a=-1 --param b=2; expect_rc 0 "quad --param a=-1 b=2 (integers as numbers)"

# 4. Unknown --param keys name the kernel's valid keys; bad values fail at job construction.
run 60 "$ws" run sort --param foo=1
expect_fail_line 2 "^worksize: error: unknown --param 'foo' for kernel sort \(valid: distribution, algo, radix_bits, radix_items, radix_split, partition_threads\)$" "run sort --param foo=1"
run 60 "$ws" plan --kernel matmul --param kk=3;          expect_fail_line 2 "unknown --param 'kk' for kernel matmul \(valid: k, variant, bm, bn, bk, tm, tn, vw\)" "plan matmul --param kk=3"
run 60 "$ws" plan --kernel quad --param A=1;             expect_fail_line 2 "unknown --param 'A' for kernel quad \(valid: integrand, a, b\)" "keys are case-sensitive"
run 60 "$ws" calibrate --kernel interp --param zoom=2;   expect_fail_line 2 "unknown --param 'zoom' for kernel interp \(valid: scale, in_w, in_h, vw, ry, stage, stage_x\)" "calibrate interp --param zoom=2"
run 60 "$ws" tune --kernel sort --size 256 --param foo=1; expect_fail_line 2 "unknown --param 'foo' for kernel sort" "tune sort --param foo=1"
run 60 "$ws" bench --kernel sort --param foo=1;          expect_fail_line 2 "unknown --param 'foo' for kernel sort" "bench sort --param foo=1"
run 60 "$ws" run interp --size 64 --param scale=0;       expect_fail_line 2 "interp: scale must be a positive number" "interp scale 0"
run 60 "$ws" run interp --size 64 --param scale=abc;     expect_fail_line 2 "interp: parameter 'scale' must be a number" "interp scale abc"
run 60 "$ws" run interp --size 64 --param in_w=2.5;      expect_fail_line 2 "interp: parameter 'in_w' must be an integer" "interp in_w 2.5"
run 60 "$ws" run interp --size 64 --param vw=3;          expect_fail_line 2 "interp: parameter 'vw' \(pixels per work-item\) must be 1, 2, 4, 8 or 16" "interp vw 3"
run 60 "$ws" run interp --size 64 --param ry=3;          expect_fail_line 2 "interp: parameter 'ry' \(rows per work-item\) must be 1, 2, 4 or 8" "interp ry 3"
run 60 "$ws" run interp --size 64 --param stage=2;       expect_fail_line 2 "interp: parameter 'stage' \(input staged in local memory\) must be 0 or 1" "interp stage 2"
run 60 "$ws" run interp --size 64 --param stage=1 --param stage_x=48; expect_fail_line 2 "interp: parameter 'stage_x' .* must be 32, 64 or 128" "interp stage_x 48"
run 60 "$ws" run quad --size 1024 --param integrand=bogus; expect_fail_line 2 "quad: unknown integrand 'bogus'" "quad integrand bogus"
run 60 "$ws" run quad --size 1024 --param a=foo;         expect_fail_line 2 "quad: parameter 'a' must be a number" "quad a=foo (was a JSON type error, exit 1)"
run 60 "$ws" run quad --size 1024 --param a=2 --param b=1; expect_fail_line 2 "quad: the interval needs finite a < b" "quad a > b"
run 60 "$ws" run sort --size 1024 --param distribution=bogus; expect_fail_line 2 "sort: unknown distribution 'bogus'" "sort distribution bogus"
run 60 "$ws" run sort --size 1024 --param distribution=5; expect_fail_line 2 "sort: unknown distribution '5'" "sort distribution 5 (was a JSON type error, exit 1)"
run 60 "$ws" run sort --size 1024 --param algo=quick;   expect_fail_line 2 "sort: unknown algo 'quick' \(known: auto, radix, bitonic\)" "sort algo quick"
run 60 "$ws" run sort --size 1024 --param radix_bits=9; expect_fail_line 2 "sort: radix_bits must be an integer from 1 to 8 \(got 9\)" "sort radix_bits 9"
run 60 "$ws" run sort --size 1024 --param partition_threads=-1; expect_fail_line 2 "sort: partition_threads must be an integer from 1 to 1024" "sort partition_threads -1"
# Nothing ran: no table on stdout.
if [ ! -s "$out" ]; then ok "a bad --param fails before any work (no output)"; else bad "a bad --param printed output"; fi
run 120 "$ws" run sort --size 1024 --param distribution=reversed; expect_rc 0 "sort --param distribution=reversed"
for algo in radix bitonic; do
  run 120 "$ws" run sort --size 1021 --param algo=$algo --json
  expect_rc 0 "sort --param algo=$algo"
  expect_jq '.verified == true' "sort algo=$algo of a prime size verifies"
done

# 5. Output paths: checked before the work; an existing file keeps its contents.
b=(bench --kernel sort --size 1024 --strategies even,paper --repeats 1)
run 60 "$ws" "${b[@]}" --csv /proc/version;              expect_fail_line 2 "cannot write --csv '/proc/version'" "bench --csv /proc/version"
run 60 "$ws" "${b[@]}" --csv /nonexistent/dir/x.csv;     expect_fail_line 2 "cannot write --csv '/nonexistent/dir/x.csv': no directory '/nonexistent/dir'" "bench --csv in a missing directory"
run 60 "$ws" "${b[@]}" --phases-csv "$tmp";              expect_fail_line 2 "cannot write --phases-csv .*it is a directory" "bench --phases-csv a directory"
echo "keep me" >"$tmp/keep.csv"
run 60 "$ws" "${b[@]}" --csv "$tmp/keep.csv" --phases-csv /nonexistent/p.csv
expect_fail_line 2 "cannot write --phases-csv '/nonexistent/p.csv'" "bench --phases-csv in a missing directory"
if [ "$(cat "$tmp/keep.csv")" = "keep me" ]; then ok "the checked --csv file kept its contents"; else bad "--csv file was changed by the check"; fi
if [ ! -e /nonexistent/p.csv ] && [ -z "$(ls -A "$tmp" | grep probe)" ]; then ok "no probe file left behind"; else bad "probe files left"; fi
run 60 "$ws" tune --report --kernel sort --size 256 "${fast[@]}" --heatmap-csv /nonexistent/dir/x.csv
expect_fail_line 2 "cannot write --heatmap-csv '/nonexistent/dir/x.csv'" "tune --report --heatmap-csv in a missing directory (before the tuning)"
run 60 "$ws" tune --kernel sort --size 256 "${fast[@]}" --db /proc/x/db.json
expect_fail_line 2 "cannot write --db '/proc/x/db.json'" "tune --db under /proc"
run 60 "$ws" calibrate --kernel sort --runs-csv /nonexistent/x.csv; expect_fail_line 2 "cannot write --runs-csv '/nonexistent/x.csv'" "calibrate --runs-csv in a missing directory"
run 60 "$ws" calibrate --kernel sort --db /proc/version;  expect_fail_line 2 "cannot write --db '/proc/version'" "calibrate --db /proc/version"
# Valid outputs are written: a database in a directory still to be made, a runs CSV, bench CSVs.
run 300 "$ws" calibrate --kernel sort --sizes 1024,4096 --min-repeats 1 --max-repeats 1 --db "$tmp/new/dir/db.json" --runs-csv "$tmp/runs.csv"
expect_rc 0 "calibrate into a new directory with --runs-csv"
if [ -s "$tmp/new/dir/db.json" ] && head -1 "$tmp/runs.csv" | grep -q '^kernel,device'; then ok "database and runs CSV written"; else bad "calibrate outputs missing"; fi
run 300 "$ws" "${b[@]}" --csv "$tmp/b.csv" --phases-csv "$tmp/p.csv"
expect_rc 0 "bench with --csv and --phases-csv"
if [ "$(wc -l <"$tmp/b.csv")" -eq 3 ] && [ -s "$tmp/p.csv" ]; then ok "bench CSVs written"; else bad "bench CSVs: $(wc -l <"$tmp/b.csv") lines"; fi
run 300 "$ws" "${b[@]}" --csv /dev/null; expect_rc 0 "bench --csv /dev/null"

# 7. Help: every default as text, no binary artefacts such as (=0.20000000000000001).
for cmd in devices plan run bench calibrate tune; do
  run 60 "$ws" $cmd --help
  if grep -Eq '\(=[^)]*[0-9]{6,}' "$out"; then bad "$cmd --help shows a binary default: $(grep -E '\(=[^)]*[0-9]{6,}' "$out")"
  else ok "$cmd --help defaults are plain text"; fi
done
run 60 "$ws" tune --help; expect_out "--budget arg \(=0\.2\)" "tune --help: --budget (=0.2)"
finish
