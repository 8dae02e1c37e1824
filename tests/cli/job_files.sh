#!/usr/bin/env bash
# Job files in one process: `run --job` verifies the committed examples (saxpy, the 5x5 filter)
# against a single-device run, `plan --job` plans one offline over the hetero golden devices with
# the file's size or --size, and every mistake in a job file (tests/jobs/*.json) or in the use of
# --job ends with exit 2 and one stderr line naming the field or problem.
# Absolute paths: some checks run from another working directory (a worksize given by its
# name alone is looked up in PATH).
ws=$1; src=$(realpath "$2")
case $ws in */*) ws=$(realpath "$ws") ;; esac
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
export WORKSIZE_DB="$tmp/db.json"  # never the user's database
jobs="$src/examples/jobs"; bad="$src/tests/jobs"; hetero="$src/tests/golden/hetero.json"

# 1. run --job verifies against a single-device run.
run 120 "$ws" run --job "$jobs/saxpy.json" --size 4099
expect_rc 0 "run --job saxpy.json --size 4099"
expect_out "^kernel saxpy-job, size 4099," "the run names the job file's kernel and the --size"
expect_out "verified: max rel error 0 against a single-device run \(tolerance 0\)" "saxpy verified (tolerance 0)"
run 120 "$ws" run --job "$jobs/filter5x5.json" --size 300x200
expect_rc 0 "run --job filter5x5.json --size 300x200"
expect_out "^kernel filter5x5, size 300x200," "the run of the 2-D job at 300x200"
expect_out "verified: max rel error [0-9.e+-]+ against a single-device run \(tolerance 1e-06\)" "filter5x5 verified (tolerance 1e-06)"
run 120 "$ws" run --job="$jobs/filter5x5.json" --size 257x31 --json
expect_rc 0 "run --job=FILE (one word) --size 257x31 --json"
expect_jq '.verified == true and .kernel == "filter5x5"' "filter5x5 at an odd size verifies (--json)"
# The job file's relative source is found from any working directory.
run 120 bash -c 'cd "$1" && "$2" run --job "$3" --size 1000' _ "$tmp" "$ws" "$jobs/saxpy.json"
expect_rc 0 "run --job from another working directory"
expect_out "verified: max rel error 0" "saxpy verified from another working directory"

# 1a. Index arguments declared long ("type": "long") reach a kernel that takes longs; declared
# long for a kernel that takes an int, they end with one line naming the argument.
mkdir -p "$tmp/long"
sed 's/const int \([a-z_]*origin\|end\)/const long \1/g; s/const int i = /const long i = /' "$jobs/saxpy.cl" > "$tmp/long/saxpy.cl"
jq '.name = "saxpy-long" | .kernels[0].args |= map(if has("origin") or has("end") then . + {"type": "long"} else . end)' \
  "$jobs/saxpy.json" > "$tmp/long/saxpy_long.json"
run 120 "$ws" run --job "$tmp/long/saxpy_long.json" --size 4099
expect_rc 0 "run --job with long origin and end arguments"
expect_out "verified: max rel error 0 against a single-device run" "saxpy with long indexes verified"
cp "$jobs/saxpy.cl" "$tmp/long/saxpy.cl"
run 120 "$ws" run --job "$tmp/long/saxpy_long.json" --size 4099
expect_fail_line 2 "kernel 'saxpy', argument 2 \(origin\): declared long, but the kernel's parameter has another size" \
  "a long origin for the kernel's int is one clear error"

# 1b. A kernel that requires its work-group size (16x16 __local tiles): every plan and run uses
# it, with its rule; tune has nothing to tune, says why and stores nothing.
run 120 "$ws" run --job "$jobs/filter5x5_tiled.json" --size 300x203
expect_rc 0 "run --job filter5x5_tiled.json --size 300x203"
expect_out "16x16 " "the tiled filter runs with its required 16x16 (padded NDRange)"
expect_out "verified: max rel error 0 against a single-device run" "the tiled filter verifies"
run 60 "$ws" plan --job "$jobs/filter5x5_tiled.json" --devices "$hetero" --local null
expect_rc 0 "plan --job filter5x5_tiled.json --local null"
expect_out "16x16 .*required by the kernel" "the plan gives every device the required 16x16, whatever --local"
run 120 "$ws" tune --job "$jobs/filter5x5_tiled.json" --size 256x128
expect_rc 0 "tune --job filter5x5_tiled.json"
if grep -Eq "the kernel requires the local size \(16,16\): nothing to tune; nothing stored" "$err"; then
  ok "tune says the kernel requires its local size"
else
  bad "tune does not say the kernel requires its local size"
fi
if [ -f "$WORKSIZE_DB" ] && grep -q "filter5x5-tiled" "$WORKSIZE_DB"; then
  bad "tune stored an entry for a kernel that requires its local size"
else
  ok "no tuning entry for the tiled filter"
fi

# 1c. Inputs from files: the weights as raw floats and as a .npy (header written by hand: no
# numpy needed); the run uses them (a weights file of zeros gives an all-zero image), and a file
# of the wrong size is refused with one line naming it.
python3 - "$tmp" <<'PY'
import struct, sys, os
d = sys.argv[1]
open(os.path.join(d, "w.bin"), "wb").write(struct.pack("<25f", *([0.0] * 25)))
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (25,), }"
hdr += " " * (64 - 10 - len(hdr) - 1) + "\n"
open(os.path.join(d, "w.npy"), "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<25f", *([0.04] * 25)))
open(os.path.join(d, "short.bin"), "wb").write(struct.pack("<3f", 1, 2, 3))
PY
for w in w.bin w.npy short.bin; do
  sed -e "s|\"source\": \"../filter2d/filter2d.cl\"|\"source\": \"$src/examples/filter2d/filter2d.cl\"|" \
      -e "s|{\"constant\": 0.04}|{\"file\": \"$tmp/$w\"}|" "$jobs/filter5x5.json" > "$tmp/job-$w.json"
done
run 120 "$ws" run --job "$tmp/job-w.bin.json" --size 64x48 --json
expect_rc 0 "run --job with the weights from a raw file"
run 120 "$ws" run --job "$tmp/job-w.npy.json" --size 64x48
expect_rc 0 "run --job with the weights from a .npy file"
expect_out "verified: max rel error 0" "the .npy weights run verifies"
run 60 "$ws" run --job "$tmp/job-short.bin.json" --size 64x48
expect_fail_line 2 "short.bin' holds 12 bytes of data; buffer 'weights' needs 100" "a weights file of the wrong size: one line naming it"

# 2. plan --job offline over the hetero golden devices (no device work).
run 60 "$ws" plan --job "$jobs/filter5x5.json" --devices "$hetero"
expect_rc 0 "plan --job filter5x5.json --devices hetero.json"
expect_out "^kernel filter5x5, global 2048x2048, .* 209715200 operations" "the file's size and ops (50*width per row)"
expect_out "^0: H200-like +0 " "the plan lists the H200-like device"
expect_out "^1: Xeon-16 +1 " "the plan lists the Xeon-16 device"
expect_out "^2: small-gpu +2 " "the plan lists the small GPU"
run 60 "$ws" plan --job "$jobs/filter5x5.json" --devices "$hetero" --size 1024x512 --json
expect_rc 0 "plan --job filter5x5.json --size 1024x512 --json"
expect_jq '.kernel == "filter5x5" and .global == [1024, 512] and .ops == 26214400' "--size replaces the file's size; ops follow the width"
expect_jq '[.assignments[].units] | add == 512' "the rows are split over the devices"
expect_jq '[.assignments[] | select(.units > 0) | .global[0]] | all(. == 1024)' "every slice is the full width"
run 60 "$ws" plan --job "$jobs/saxpy.json" --devices "$hetero" --json
expect_rc 0 "plan --job saxpy.json (1-D) --json"
expect_jq '.kernel == "saxpy-job" and .global[0] == 1000003 and ([.assignments[].units] | add == 1000003)' "saxpy's own size, split whole"

# 3. Mistakes: exit 2, one stderr line, no work done (nothing on stdout).
refused() { # refused REGEX DESCRIPTION
  expect_fail_line 2 "$1" "$2"
  if [ -s "$out" ]; then bad "$2: printed on stdout before failing"; fi
}
run 60 "$ws" run --job "$bad/bad_json.json"
refused "^worksize: error: job file '[^']*bad_json\.json': not JSON: " "a job file that is not JSON"
run 60 "$ws" run --job "$bad/unknown_buffer.json"
refused "^worksize: error: job file '[^']*unknown_buffer\.json': kernels\[0\]\.args\[2\]\.origin: no buffer is named 'w'$" "an argument naming an unknown buffer"
for cmd in plan tune calibrate bench; do
  run 60 "$ws" $cmd --job "$bad/unknown_buffer.json"
  refused "kernels\[0\]\.args\[2\]\.origin: no buffer is named 'w'" "$cmd --job with an unknown buffer"
done
run 60 "$ws" run --job "$bad/missing_source.json"
refused "^worksize: error: job file '[^']*missing_source\.json': source: cannot read '[^']*no_such_kernel\.cl'$" "a missing kernel source"
# The argument count is known only once the kernel is built: run finds it, plan does not.
run 120 "$ws" run --job "$bad/arg_count.json"
refused "kernel 'filter' takes 8 arguments; the job declares 7" "8 kernel arguments declared as 7 (run)"
run 60 "$ws" run --job "$bad/name_matmul.json"
refused "^worksize: error: job file '[^']*name_matmul\.json': name 'matmul' is a registered kernel's; give the job another name$" "a job named like the sample kernel matmul"
run 60 "$ws" run --job "$jobs/saxpy.json" --kernel matmul
refused "^worksize: error: --job and --kernel exclude each other$" "--job with --kernel"
run 60 "$ws" plan --kernel matmul --job "$jobs/saxpy.json"
refused "^worksize: error: --job and --kernel exclude each other$" "--kernel before --job"
run 60 "$ws" devices --job "$jobs/saxpy.json"
refused "^worksize: error: --job is an option of plan, run, tune, calibrate and bench, not of devices$" "--job on devices"
run 60 "$ws" run --job "$tmp/nonexistent.json"
refused "^worksize: error: job file '[^']*nonexistent\.json': cannot read it$" "a job file that does not exist"
run 60 "$ws" run --job
refused "^worksize: error: --job needs a job file$" "--job without a file"
run 60 "$ws" run --job "$jobs/saxpy.json" --size 64x64
refused "invalid size '64x64': a 1-D kernel takes one number" "a 2-D --size for a 1-D job"
run 60 "$ws" plan --job "$jobs/filter5x5.json" --devices "$hetero" --size 64x1
refused "job file '[^']*filter5x5\.json': kernel 'filter', argument 0 \('in'\): a halo of 2 rows reads past the buffer" "a --size the halo does not fit"
if [ ! -e "$WORKSIZE_DB" ]; then ok "no mistake left a database behind"; else bad "a refused job wrote $WORKSIZE_DB"; fi
finish
