#!/usr/bin/env bash
# Hostile inputs (issue 28): each case of the issue's probe with its expected exit code (2 bad
# input, 1 failure, 3 results that differ) and one line naming the problem, each under a time
# limit (lib.sh's run: a hang fails the case). The cases that need several ranks are in the MPI
# scripts: a worker killed under the docs' MPMD recipe and in plain `mpiexec -n 3`, in run, tune,
# bench, calibrate and the examples (tests/mpi/lost_end.sh); a kernel that never ends on a worker
# (tests/mpi/kernel_timeout.sh); --rank-timeout 0.5 with healthy workers (tests/mpi/data_jobs.sh).
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'chattr -i "$tmp/imm.json" 2>/dev/null; rm -rf "$tmp" "$out" "$err"' EXIT
export WORKSIZE_DB="$tmp/db.json"  # never the user's database
fast=(--iterations 1 --repeats 1 --warmup 0)
cal=(calibrate --kernel sort --sizes 1024 --min-repeats 1 --max-repeats 1)

# 1. Numbers range-checked where they are parsed (bm=0 died of SIGFPE, bk=0 never ended, a size
#    of 2^64 - 1 spun in the share rounding).
# Whole option names only: a prefix is not guessed (`--devices` was taken for `--devices-per-rank`).
run 30 "$ws" bench --kernel matmul --devices 7;      expect_fail_line 2 "unrecognised option '--devices'" "bench --devices 7 (a prefix of --devices-per-rank)"
run 30 "$ws" run matmul --size 64 --iter 2;         expect_fail_line 2 "unrecognised option '--iter'" "run --iter (a prefix of --iterations)"
run 30 "$ws" plan --kernel matmul --param bm=0;   expect_fail_line 2 "matmul: parameter 'bm' must be a positive integer, got 0" "matmul --param bm=0"
run 30 "$ws" run matmul --param bk=0;             expect_fail_line 2 "matmul: parameter 'bk' must be a positive integer, got 0" "run matmul --param bk=0"
run 30 "$ws" tune --kernel matmul --size 64 --param bn=0; expect_fail_line 2 "matmul: parameter 'bn' must be a positive integer, got 0" "tune matmul --param bn=0"
run 30 "$ws" plan --kernel quad --size 18446744073709551615 --local null
expect_fail_line 2 "^worksize: error: invalid size '18446744073709551615': more than 2\^53 \(9007199254740992\) work-items" "plan quad --size 2^64-1"
run 30 "$ws" run quad --size 18446744073709551615 --local null; expect_fail_line 2 "more than 2\^53" "run quad --size 2^64-1"
run 30 "$ws" tune --kernel quad --size 18446744073709551615;    expect_fail_line 2 "invalid size .*more than 2\^53" "tune quad --size 2^64-1"
run 30 "$ws" plan --kernel matmul --size 94906266;             expect_fail_line 2 "more than 2\^53" "matmul --size N with N^2 > 2^53"
run 30 "$ws" plan --kernel quad --iterations 18446744073709551615
expect_fail_line 2 "^worksize: error: --iterations must be an integer in \[1, 1000000000\], got '18446744073709551615'$" "plan --iterations 2^64-1"
run 30 "$ws" run quad --iterations 1000000001;  expect_fail_line 2 "--iterations must be an integer in \[1, 1000000000\]" "run --iterations 10^9+1"
run 30 "$ws" tune --kernel quad --iterations 18446744073709551615; expect_fail_line 2 "--iterations must be an integer in \[1, 1000000000\]" "tune --iterations 2^64-1"
run 30 "$ws" run matmul --size 40000  # the message said "size 40000x10000" for matmul's global range
expect_fail_line 2 "'matmul' over a global range of 40000x10000 work-items needs [0-9.]+ GiB but the 1 device\(s\) hold" \
  "run matmul --size 40000: the global range named as such"
run 30 "$ws" plan --kernel quad --param a=1e-308 --json  # a subnormal (std::stod threw on it)
if [ "$rc" -eq 0 ] && jq -e '.kernel == "quad"' "$out" >/dev/null; then ok "--param a=1e-308 is a number"; else bad "--param a=1e-308: exit $rc"; fi

# 3. Host memory limits: what a job needs (its inputs and outputs, the staging, PoCL's device
#    buffers, which are host memory) is checked against `ulimit -v` before it is allocated (PoCL
#    asserted in pocl_create_migration_commands or hung building the kernel), and a limit too low
#    for OpenCL to start is named (it said "no OpenCL platform found").
ulimited=(bash -c 'ulimit -v "$0" && exec "$@"')  # "${ulimited[@]}" KIB CMD...
hostmem="needs 13.4 GiB of host memory .*, but the address-space limit \(ulimit -v 3000000\) leaves this process [0-9.]+ GiB"
run 30 "${ulimited[@]}" 3000000 "$ws" run matmul --size 20000
expect_fail_line 1 "'matmul' on rank 0 \(its inputs and outputs, .*\) $hostmem" "run matmul 20000 under ulimit -v 3000000"
run 30 "${ulimited[@]}" 3000000 "$ws" bench --kernel matmul --size 20000 --repeats 1
expect_fail_line 1 "$hostmem" "bench matmul 20000 under ulimit -v 3000000 (before calibrating)"
run 30 "${ulimited[@]}" 3000000 "$ws" tune --kernel matmul --size 20000 "${fast[@]}"
expect_fail_line 1 "$hostmem" "tune matmul 20000 under ulimit -v 3000000"
run 30 "${ulimited[@]}" 200000 "$ws" run matmul --size 64
expect_fail_line 1 "the address-space limit \(ulimit -v 200000\) leaves this process [0-9.]+ MiB: OpenCL needs about 320.0 MiB to start" \
  "run under ulimit -v 200000: too little for OpenCL to start"

# 8. Conflicting or ignored options.
run 30 "$ws" run --paper-experiment matmul;  expect_fail_line 2 "--paper-experiment .*takes no kernel \('matmul'\)" "run --paper-experiment matmul"
run 30 "$ws" run --paper-experiment --size 64; expect_fail_line 2 "--paper-experiment .*takes no --size" "run --paper-experiment --size"
run 30 "$ws" run matmul --repeat-scale 2;    expect_fail_line 2 "--repeat-scale .*needs --paper-experiment" "--repeat-scale without the experiment"
run 30 "$ws" bench --kernel sort --append;   expect_fail_line 2 "--append .*needs --csv or --phases-csv" "bench --append without --csv"
run 30 "$ws" plan --kernel matmul --size 64 --size 128;          expect_fail_line 2 "'--size' cannot be specified more than once" "repeated --size"
run 30 "$ws" plan --kernel matmul --param k=4 --param k=8;       expect_fail_line 2 "--param 'k' is given twice" "repeated --param key"
run 30 "$ws" tune --kernel sort --size 256 --param algo=radix --param algo=bitonic; expect_fail_line 2 "--param 'algo' is given twice" "tune: repeated --param key"
run 30 "$ws" plan --kernel matmul --priority "";                 expect_fail_line 2 "--priority must be x or y, got ''" "--priority \"\""
run 30 "$ws" calibrate --kernel sort --priority "";              expect_fail_line 2 "--priority must be x or y, got ''" "calibrate --priority \"\""

# 6. What cannot be written out is refused before the work; a failed write to stdout fails.
rc=0; timeout --kill-after=10 30 "$ws" plan --kernel matmul --json >/dev/full 2>"$err" || rc=$?
: >"$out"; expect_fail_line 1 "cannot write the results to standard output" "plan --json > /dev/full"
run 30 env WORKSIZE_HOSTNAME=$'node\xff' "$ws" tune --kernel sort --size 256 "${fast[@]}" --report --json
expect_fail_line 2 "WORKSIZE_HOSTNAME 'node.*' is not valid UTF-8" "non-UTF-8 WORKSIZE_HOSTNAME (before the tuning)"
run 30 "$ws" "${cal[@]}" --json --db "$tmp/d"$'\xff'".json"
expect_fail_line 2 "the database path .* is not valid UTF-8" "non-UTF-8 --db (before the calibration)"
run 30 env WORKSIZE_DB_LOCK_TIMEOUT=abc "$ws" tune --kernel sort --size 256 "${fast[@]}"
expect_fail_line 2 "WORKSIZE_DB_LOCK_TIMEOUT 'abc' is not a number of seconds >= 0" "WORKSIZE_DB_LOCK_TIMEOUT=abc (before the tuning)"
mkdir "$tmp/locked.json.lock"
run 30 "$ws" tune --kernel sort --size 256 "${fast[@]}" --db "$tmp/locked.json"
expect_fail_line 2 "lock file '.*locked.json.lock' is a directory" "a directory at <db>.lock (before the tuning)"
if [ ! -e "$tmp/db.json" ] && [ ! -e "$tmp/locked.json" ]; then ok "nothing saved by the refused commands"; else bad "a refused command saved a database"; fi
# A --db through a directory still to be made ("missing/../x") is judged by the directory it
# names once made: here /proc, which takes no files (it used to fail at the save, exit 1).
nx="/nonexistent-worksize-$$"
run 30 "$ws" tune --kernel sort --size 256 "${fast[@]}" --db "$nx/../proc/x.json"
expect_fail_line 2 "cannot write --db '$nx/../proc/x.json': cannot create files in '/proc'" "--db missing/../proc/x.json (before the tuning)"
if [ ! -e "$nx" ]; then ok "the refused --db made no directory"; else bad "the refused --db made $nx"; rmdir "$nx"; fi

# 7. The database: a text file is refused, not converted; a damaged one is copied aside and the
#    copy named; temporary files of dead saves go; the OS's reason in errors.
echo "my notes" >"$tmp/notes.txt"
run 30 "$ws" "${cal[@]}" --db "$tmp/notes.txt"
expect_fail_line 2 "'.*notes.txt' is not a worksize database \(it is not a JSON object\): not overwriting it" "calibrate --db notes.txt"
if [ "$(cat "$tmp/notes.txt")" = "my notes" ]; then ok "notes.txt untouched"; else bad "notes.txt was changed"; fi
printf '{"schema": 2, "entries": [ {"kind": ' >"$tmp/damaged.json"
sh -c 'exit 0' & dead=$!; wait $dead
echo partial >"$tmp/damaged.json.tmp-$dead"
run 60 "$ws" "${cal[@]}" -q --db "$tmp/damaged.json"
copy=$(ls "$tmp" | grep '^damaged.json.corrupt-' | head -1)
if [ "$rc" -eq 0 ] && [ -n "$copy" ] && grep -q "copied the corrupt worksize database '.*damaged.json' aside to '.*$copy'" "$err"; then
  ok "a damaged database is copied aside and the copy named"
else bad "damaged database: exit $rc, copy '$copy'"; fi
if [ ! -e "$tmp/damaged.json.tmp-$dead" ]; then ok "the temporary file of a dead save is removed"; else bad "stale tmp-$dead left"; fi
cp "$tmp/damaged.json" "$tmp/imm.json"
if chattr +i "$tmp/imm.json" 2>/dev/null; then  # root on a file system with attributes only
  run 30 "$ws" db rm sort --db "$tmp/imm.json"
  expect_fail_line 1 "cannot replace worksize database '.*imm.json': Operation not permitted" "db rm on an immutable file gives the OS's reason"
  chattr -i "$tmp/imm.json"
else
  echo "skip: chattr +i not available (db rm on an immutable file)"
fi
# 5. Job files: unknown keys with the nearest valid name, types with the field's path, inputs
#    that are no regular file, arguments of the wrong kind.
cp "$src/examples/jobs/saxpy.json" "$src/examples/jobs/saxpy.cl" "$tmp/"
jq '.verfy = .verify | del(.verify)' "$src/examples/jobs/saxpy.json" >"$tmp/typo.json"
run 30 "$ws" plan --job "$tmp/typo.json"; expect_fail_line 2 "verfy: unknown key \(did you mean \"verify\"\?\)" "job file key \"verfy\""
jq '.name = 5' "$src/examples/jobs/saxpy.json" >"$tmp/name.json"
run 30 "$ws" plan --job "$tmp/name.json"; expect_fail_line 2 "name: must be a string, not 5" "job file \"name\": 5"
jq '.buffers[0].init = {"file": "/dev/zero"}' "$src/examples/jobs/saxpy.json" >"$tmp/zero.json"
run 30 "$ws" plan --job "$tmp/zero.json"; expect_fail_line 2 "init.file: '/dev/zero' is not a regular file" "job file input /dev/zero"
# .npy inputs: header, dtype and shape checked against the buffer before the data is read; a
# file's size checked before reading (the limit in the message); an int argument takes integers.
python3 - "$tmp" <<'PY'
import struct, sys, os
d = sys.argv[1]
def npy(descr, shape, data, version=1):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    prefix = 10 if version == 1 else 12
    h += " " * (63 - (prefix + len(h)) % 64) + "\n"
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H" if version == 1 else "<I", len(h)) + h.encode() + data
floats = struct.pack("<1000f", *([1.0] * 1000))
for name, b in {"shape": npy("<f4", "(10, 100)", floats),
                "int": npy("<i4", "(1000,)", floats), "v2": b"\x93NUMPY\x02\x00\x10\x00",
                "long": npy("<f4", "(1000,)", b"")[:8] + b"\x01\xff" + npy("<f4", "(1000,)", b"")[10:]}.items():
    open(os.path.join(d, name + ".npy"), "wb").write(b)
PY
truncate -s 2000000 "$tmp/big.bin"
for f in shape.npy int.npy v2.npy long.npy big.bin; do
  jq --arg f "$tmp/$f" '.size = 1000 | .buffers[0].init = {"file": $f}' "$tmp/saxpy.json" >"$tmp/in-$f.json"
done
run 30 "$ws" plan --job "$tmp/in-long.npy.json"
expect_fail_line 2 "buffers\[0\]\.init\.file: '.*long.npy': its .npy header says it is 65281 bytes long; the file has only 118 after the 10-byte prefix" ".npy header longer than its file"
run 30 "$ws" plan --job "$tmp/in-v2.npy.json"
expect_fail_line 2 "'.*v2.npy': a .npy of version 2 needs 12 bytes before its header; the file has 10" "a v2 .npy of 10 bytes"
run 30 "$ws" plan --job "$tmp/in-int.npy.json"
expect_fail_line 2 "int.npy' is a .npy of int \(<i4\); buffer 'x' is float \(<f4\)" ".npy of the wrong dtype"
run 60 "$ws" run --job "$tmp/in-shape.npy.json"
expect_fail_line 2 "buffers\[0\]\.init\.file: '.*shape.npy' is a .npy of shape \(10, 100\); buffer 'x' takes \(1000,\) or \(1000, 1\)" ".npy of the wrong shape (same bytes)"
run 60 "$ws" run --job "$tmp/in-big.bin.json"
expect_fail_line 2 "big.bin' is 2000000 bytes: more than buffer 'x' takes \(4000 bytes of data and at most 1048576 bytes of .npy header\)" "an input file over the size limit"
jq '.kernels[0].args[0] = {"int": 2.5}' "$tmp/saxpy.json" >"$tmp/intarg.json"
run 30 "$ws" plan --job "$tmp/intarg.json"
expect_fail_line 2 "kernels\[0\]\.args\[0\]\.int: 2.5 is not a whole number: an int takes whole numbers in \[-2147483648, 2147483647\]" "a float given to an int argument"
# 2. A kernel that never ends (alone; on a worker: tests/mpi/kernel_timeout.sh).
run 60 "$ws" run --job "$src/tests/jobs/spin.json" --kernel-timeout 2
expect_fail_line 1 "kernel 'spin' did not finish within 2 s \(--kernel-timeout 2 s per iteration" "a kernel that never ends, --kernel-timeout 2"
# 3. A job-file kernel that writes past its buffer (it ended in double free, malloc_consolidate or
#    SIGSEGV): --check-bounds names it.
run 60 "$ws" run --job "$src/tests/jobs/past_end.json" --check-bounds
expect_fail_line 1 "kernel 'past_end' wrote outside buffer 'z', at 0 bytes past its end, .*\(--check-bounds\)" \
  "a kernel writing past its buffer, --check-bounds"
# A 2-D output declared without its "pitch" (one element a row) written a row at a time: it ran
# past the guard zone into the heap (free(): invalid size, exit 134; fuzz.job_run's helper found
# it). The zone now covers rows of the job's width, and the message names the missing pitch.
jq --arg s "$src/examples/filter2d/filter2d.cl" 'del(.buffers[2].pitch) | .source = $s' \
  "$src/examples/jobs/filter5x5.json" >"$tmp/nopitch.json"
run 60 "$ws" run --job "$tmp/nopitch.json" --size 64x48 --check-bounds
expect_fail_line 1 "kernel 'filter' wrote outside buffer 'out', .*its rows hold 1 element\(s\) in a job 64 wide: is its \"pitch\" .*missing\?" \
  "a 2-D output without its pitch, --check-bounds: named, no crash"
# 5. Job files that would have compared nothing, or taken nonsense numbers.
jq '.buffers[2].ouptut = true | del(.buffers[2].output)' "$tmp/saxpy.json" >"$tmp/ouptut.json"
run 30 "$ws" run --job "$tmp/ouptut.json" --size 1000
expect_fail_line 2 "buffers\[2\]\.ouptut: unknown key \(did you mean \"output\"\?\)" "job file typo \"ouptut\""
jq '.buffers[2].output = false' "$tmp/saxpy.json" >"$tmp/noout.json"
run 30 "$ws" run --job "$tmp/noout.json" --size 1000
expect_fail_line 2 "no buffer has \"output\": true and no kernel reduces: the job would return nothing to check" "job file without an output"
jq '.verify.tolerance = -1' "$tmp/saxpy.json" >"$tmp/tol.json"
run 30 "$ws" plan --job "$tmp/tol.json"; expect_fail_line 2 "verify.tolerance: must be a number >= 0" "\"tolerance\": -1"
jq '.ops_per_unit = -5' "$tmp/saxpy.json" >"$tmp/ops.json"
run 30 "$ws" plan --job "$tmp/ops.json"; expect_fail_line 2 "ops_per_unit: must be a number > 0" "\"ops_per_unit\": -5"
jq '.buffers[1].name = "x"' "$tmp/saxpy.json" >"$tmp/dup.json"
run 30 "$ws" plan --job "$tmp/dup.json"; expect_fail_line 2 "buffers\[1\]\.name: 'x' names an earlier buffer too" "a buffer name given twice"
mkfifo "$tmp/fifo"
jq --arg f "$tmp/fifo" '.buffers[0].init = {"file": $f}' "$tmp/saxpy.json" >"$tmp/fifo.json"
run 30 "$ws" plan --job "$tmp/fifo.json"; expect_fail_line 2 "init.file: '.*fifo' is not a regular file" "a FIFO as an input file (it blocked forever)"
# A shared buffer one element short: the kernel reads past its end. That memory holds 0x7f bytes
# in the run and 0xff in the single-device reference (kSharedTail), so the two differ every time
# (it verified in 1 run of 6), with a hint.
jq --arg s "$src/examples/filter2d/filter2d.cl" '.buffers[1].count = 24 | .source = $s' \
  "$src/examples/jobs/filter5x5.json" >"$tmp/short.json"
for i in 1 2 3; do
  run 60 "$ws" run --job "$tmp/short.json" --size 64x48
  if [ "$rc" -eq 3 ] && grep -q "VERIFICATION FAILED: .*is a buffer's \"count\" short?" "$out" "$err"; then
    ok "a shared buffer one element short: exit 3, the hint (run $i)"
  else bad "a shared buffer one element short, run $i: exit $rc"; fi
done
# Arguments of the wrong kind for the kernel's parameters, refused when the kernel is made
# (fuzz.job_run found them): a double where saxpy takes a __global pointer (PoCL took its bits for
# a buffer's handle: a segfault, exit 139), a buffer where it takes an int (exit 1 at the launch).
jq '.kernels[0].args[1] = {"double": 2.5}' "$tmp/saxpy.json" >"$tmp/double-ptr.json"
run 60 "$ws" run --job "$tmp/double-ptr.json" --size 64
expect_fail_line 2 "kernel 'saxpy', argument 1 \(scalar\): declared a value, but the kernel's parameter is a __global pointer" \
  "a double given to a pointer parameter"
jq '.kernels[0].args[2] = {"inout": "x"}' "$tmp/saxpy.json" >"$tmp/buffer-int.json"
run 60 "$ws" run --job "$tmp/buffer-int.json" --size 64
expect_fail_line 2 "kernel 'saxpy', argument 2 \(read_write\): declared a buffer, but the kernel's parameter is a value" \
  "a buffer given to an int parameter"
# A kernel that requires its work-group size (reqd_work_group_size) launched with another (no
# "required_local", or [16] for 16x16; fuzz.job_run found the second): exit 1 at the launch with
# a bare CL_INVALID_WORK_GROUP_SIZE, now exit 2 naming what to declare.
cp "$src/examples/jobs/filter5x5_tiled.cl" "$tmp/"
jq 'del(.kernels[0].required_local)' "$src/examples/jobs/filter5x5_tiled.json" >"$tmp/no-local.json"
run 60 "$ws" run --job "$tmp/no-local.json" --size 64x48
expect_fail_line 2 "kernel 'filter_tiled' requires work-groups of 16x16 \(reqd_work_group_size in its source\), but it would launch with [0-9]+x[0-9]+: declare \"required_local\": \[16, 16\]" \
  "a kernel's reqd_work_group_size without \"required_local\""
# A buffer of more than 2^53 bytes (fuzz.job_run: a pitch of 2^63 made the size wrap to 0 and
# the inputs were written through a null pointer, exit 139).
jq '.buffers[0].pitch = 9223372036854775808' "$tmp/saxpy.json" >"$tmp/pitch63.json"
run 60 "$ws" run --job "$tmp/pitch63.json" --size 37
expect_fail_line 2 "buffers\[0\]\.pitch: makes buffer 'x' more than 2\^53 bytes \([0-9]+ x 9223372036854775808 elements of 4 bytes\)" \
  "a pitch of 2^63"
finish
