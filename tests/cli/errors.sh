#!/usr/bin/env bash
# Every bad input gets one line naming the problem and a non-zero exit (no crash, no hang).
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT

run 60 "$ws" frobnicate;                               expect_fail_line 2 "unknown command 'frobnicate'" "unknown command"
run 60 "$ws" plan --kernel fft;                        expect_fail_line 2 "unknown kernel 'fft'" "unknown kernel"
run 60 "$ws" plan --kernel matmul --strategy fastest;  expect_fail_line 2 "strategy.*fastest" "unknown strategy"
run 60 "$ws" plan --kernel matmul --local big;         expect_fail_line 2 "local.*big" "unknown local policy"
run 60 "$ws" plan --kernel matmul --priority z;        expect_fail_line 2 "priority.*z" "unknown priority"
run 60 "$ws" plan --kernel matmul --frobnicate;        expect_fail_line 2 "frobnicate" "unknown option"
run 60 "$ws" plan --kernel matmul --size 0;            expect_fail_line 2 "size '0'" "size 0"
run 60 "$ws" plan --kernel matmul --size -5;           expect_fail_line 2 "size '-5'" "negative size"
run 60 "$ws" plan --kernel matmul --size abc;          expect_fail_line 2 "size 'abc'" "non-numeric size"
run 60 "$ws" plan --kernel sort --size 10x10;          expect_fail_line 2 "size '10x10'" "2-D size for a 1-D kernel"
run 60 "$ws" plan --kernel matmul --size 99999999999999999999; expect_fail_line 2 "size" "overflowing size"
run 60 "$ws" plan --kernel matmul --size 4000000 --devices "$src/docs/profiles/paper-2015.json"
expect_fail_line 2 "GiB" "size beyond every device's memory"
run 60 "$ws" plan --kernel matmul --ops -3;            expect_fail_line 2 "ops" "negative --ops"
run 60 "$ws" run;                                      expect_fail_line 2 "kernel" "run without a kernel"
run 60 "$ws" run matmul --iterations 0;                expect_fail_line 2 "iterations" "zero iterations"
run 60 "$ws" run matmul --param k;                     expect_fail_line 2 "param 'k'" "malformed --param"
run 60 "$ws" run matmul --select 0=7;                  expect_fail_line 2 "device '7'" "--select of a missing device (bad input: usage exit)"
run 60 "$ws" run matmul --select zz;                   expect_fail_line 2 "select 'zz'" "malformed --select"
run 60 "$ws" run matmul --select 0=cpu:;               expect_fail_line 2 "invalid --select '0=cpu:'" "WORD: without an instance"
run 60 "$ws" run matmul --select 0=cpu:4;              expect_fail_line 2 "device 'cpu:4' on rank 0, which has 1 device\(s\): 1 match 'cpu', cpu:0 \(it has: 0 .*\(cpu\)\)$" "cpu:4 on one CPU device"
run 60 "$ws" plan --kernel quad --select 0=cpu:0 --json; expect_jq '.assignments | length == 1' "cpu:0 names the CPU device"

# Profiles: missing file, malformed JSON, and each bad field names the device and the field.
run 60 "$ws" plan --kernel matmul --devices "$tmp/none.json"; expect_fail_line 2 "none.json" "missing profile"
echo '{"devices": [' >"$tmp/trunc.json"
run 60 "$ws" plan --kernel matmul --devices "$tmp/trunc.json"; expect_fail_line 2 "malformed JSON" "truncated profile"
echo '{"gpus": []}' >"$tmp/nodev.json"
run 60 "$ws" plan --kernel matmul --devices "$tmp/nodev.json"; expect_fail_line 2 "devices" "profile without devices"
good='{"name":"G","vendor":"V","type":"gpu","compute_units":4,"pes_per_cu":48,"max_clock_mhz":1000,"max_work_group_size":1024,"max_work_item_sizes":[1024,1024,64],"local_mem_bytes":49152,"global_mem_bytes":1073741824}'
for field in compute_units pes_per_cu max_work_group_size local_mem_bytes global_mem_bytes max_work_item_sizes type name; do
  bad_dev=$(echo "$good" | jq -c --arg f "$field" '.[$f] = (if $f == "name" then 7 elif $f == "type" then "quantum" elif $f == "max_work_item_sizes" then "x" else -1 end)')
  echo "{\"devices\": [$good, $bad_dev]}" >"$tmp/bad.json"
  run 60 "$ws" plan --kernel matmul --devices "$tmp/bad.json"
  expect_fail_line 2 "device 1.*$field" "profile with a bad '$field' names device 1 and the field"
done

# No OpenCL platform at all.
run 60 env OCL_ICD_VENDORS=/nonexistent OCL_ICD_FILENAMES= "$ws" devices
expect_fail_line 1 "no OpenCL platform" "no OpenCL platform"
# A result that cannot be written (standard output on a full disk) fails the command: one line, exit 1.
rc=0; timeout --kill-after=10 60 "$ws" plan --kernel matmul --json >/dev/full 2>"$err" || rc=$?
: >"$out"; expect_fail_line 1 "cannot write the results to standard output" "plan --json > /dev/full"
rc=0; timeout --kill-after=10 60 "$ws" devices >/dev/full 2>"$err" || rc=$?
: >"$out"; expect_fail_line 1 "cannot write the results to standard output" "devices > /dev/full"
finish
