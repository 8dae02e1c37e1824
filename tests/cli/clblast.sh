#!/usr/bin/env bash
# matmul's CLBlast backend (--backend clblast): verified against the CPU reference on PoCL at
# awkward sizes, alone and beside the kernel on a second device of the same process; its plans
# (CLBlast's own local size, no padding, the backend per device), its models kept apart from the
# kernel's, and the refusals of bad --backend values. A build without CLBlast must refuse the
# backend with one line; then only that is checked.
ws=$1; src=$2
source "$src/tests/lib.sh"
prof="$src/docs/profiles/paper-2015.json"
db=$(mktemp -d)/db.json

run 120 "$ws" run matmul --size 1 --backend clblast --json
if grep -q "built without CLBlast" "$err"; then
  expect_fail_line 2 "built without CLBlast" "a build without CLBlast refuses the backend"
  finish; exit $?
fi

# Awkward sizes: 1, primes, non-square, a prime K; every slice verified against the reference.
for args in "--size 1" "--size 17" "--size 67x23" "--size 131x37 --param k=29" "--size 5x200 --param k=1"; do
  # shellcheck disable=SC2086
  run 300 "$ws" run matmul $args --backend clblast --iterations 2 --json
  expect_jq '.verified == true and ([.devices[].backend] | all(. == "clblast")) and ([.devices[].local] | all(. == [0,0]))' \
    "clblast $args: verified, backend and NULL local size per device"
done
run 300 "$ws" run matmul --size 64 --backend clblast
expect_out "backend" "the run table has a backend column"
expect_out "verified" "the run table's verdict"

# Two devices of one process: device 0 runs CLBlast, device 1 the kernel (and the other way round).
for spec in "0=clblast,1=kernel" "1=clblast"; do
  run 300 env POCL_DEVICES="pthread basic" "$ws" run matmul --size 301x157 --param k=43 --strategy pe-ratio \
    --backend "$spec" --json
  want='["clblast","kernel"]'; [ "$spec" = "1=clblast" ] && want='["kernel","clblast"]'
  expect_jq ".verified == true and ([.devices[].backend] == $want) and ([.devices[].units] | all(. > 0))" \
    "--backend $spec over two devices: verified, backends $want"
done

# Plans: CLBlast chooses its own work-groups; the slice is not padded; the kernel's devices keep
# the rule's local size.
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$prof" --backend 0=clblast --json
expect_jq '.assignments[0] | .backend == "clblast" and .local == [0,0] and .padded_global == .global and
           .local_rule == "chosen by clblast (library backend)"' "plan: device 0 with CLBlast's own local size"
expect_jq '[.assignments[1:][] | .backend == "kernel" and .local != [0,0]] | all' "plan: the others run the kernel"
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$prof" --backend clblast --local tuned --db "$db" --json
expect_jq '[.assignments[] | select(.units > 0) | .local_rule == "chosen by clblast (library backend)"] | all' \
  "plan --local tuned: no tuned or fallback rule for CLBlast"
run 60 "$ws" plan --kernel matmul --size 512 --devices "$prof" --backend clblast
expect_out "backend" "the plan table has a backend column"
# The instruction lists: CLBlast's SGEMM is a library call between the slice's uploads and its
# download; the kernel's devices launch matmul's own kernel.
run 60 "$ws" plan --kernel matmul --size 1531 --devices "$prof" --backend 0=clblast --strategy even --instructions
expect_out "launch clblast_sgemm slice 0 units .* whole \(library\) after" "--instructions: device 0 calls CLBlast"
expect_out "launch matmul_(tiled|direct|reg) slice 1 " "--instructions: device 1 launches the kernel"

# Models: one calibrated with CLBlast is not used for the kernel (nor the other way round).
run 300 "$ws" calibrate --kernel matmul --sizes 32,64 --min-repeats 1 --max-repeats 1 --backend clblast --db "$db"
expect_rc 0 "calibrate matmul with --backend clblast"
run 300 "$ws" run matmul --size 96 --strategy model --backend clblast --db "$db" --json
expect_jq '.verified == true and ([.devices[].backend] | all(. == "clblast"))' "--strategy model with the CLBlast model"
run 60 "$ws" run matmul --size 96 --strategy model --db "$db"
expect_fail_line 1 "no calibration for kernel matmul" "the kernel finds no model calibrated with CLBlast"

# WORKSIZE_CLBLAST_PARAMS: CLBlast kernel parameters (a tuner's results) for devices by a word of
# their name. Other valid parameters still verify; a work-group past PoCL's 4096 shows they reach
# CLBlast; an incomplete set is CLBlast's kMissingOverrideParameter; another device's are ignored.
pdir=$(mktemp -d)
direct() { # direct WORD WGD MDIMCD NDIMCD: a complete XgemmDirect set
  printf '{"%s": {"XgemmDirect": {"KWID":2,"MDIMAD":%s,"MDIMCD":%s,"NDIMBD":%s,"NDIMCD":%s,"PADA":1,"PADB":1,"VWMD":1,"VWND":1,"WGD":%s}}}' \
    "$1" "$3" "$3" "$4" "$4" "$2"
}
direct pthread 32 8 16 >"$pdir/ok.json"; direct PTHREAD 128 64 128 >"$pdir/big.json"
direct other-device 128 64 128 >"$pdir/other.json"
echo '{"pthread": {"XgemmDirect": {"WGD": 32}}}' >"$pdir/missing.json"
echo '{"pthread": [1, 2]}' >"$pdir/bad.json"
run 300 env WORKSIZE_CLBLAST_PARAMS="$pdir/ok.json" "$ws" run matmul --size 67x23 --backend clblast --json
expect_jq '.verified == true' "WORKSIZE_CLBLAST_PARAMS: other valid parameters verify"
run 300 env WORKSIZE_CLBLAST_PARAMS="$pdir/big.json" "$ws" run matmul --size 67x23 --backend clblast
# CLBlast's own stderr line ("CLBlast: Run-time error: ...") is taken into worksize's one line.
expect_fail_line 1 "CLBlast SGEMM \(warm-up\) failed \(CL_INVALID_WORK_GROUP_SIZE\) for .*: CLBlast says 'Run-time error: -54 \(8192 is larger than 4096\)'$" \
  "WORKSIZE_CLBLAST_PARAMS reach CLBlast (8192 work-items refused), its own message in one line"
run 300 env WORKSIZE_CLBLAST_PARAMS="$pdir/other.json" "$ws" run matmul --size 67x23 --backend clblast --json
expect_jq '.verified == true' "WORKSIZE_CLBLAST_PARAMS: another device's parameters are not applied"
run 60 env WORKSIZE_CLBLAST_PARAMS="$pdir/missing.json" "$ws" run matmul --size 17 --backend clblast
expect_fail_line 1 "OverrideParameters for XgemmDirect \(WORKSIZE_CLBLAST_PARAMS\) failed \(kMissingOverrideParameter, -2047\)" \
  "an incomplete parameter set: CLBlast's status named"
run 60 env WORKSIZE_CLBLAST_PARAMS="$pdir/bad.json" "$ws" run matmul --size 17 --backend clblast
expect_fail_line 2 "WORKSIZE_CLBLAST_PARAMS '.*': \"pthread\" is not an object of kernels" "a malformed parameter file"
run 60 env WORKSIZE_CLBLAST_PARAMS="$pdir/none.json" "$ws" run matmul --size 17 --backend clblast
expect_fail_line 2 "WORKSIZE_CLBLAST_PARAMS '.*none.json': cannot read it" "a missing parameter file"

# Refusals: one line, exit 2.
run 60 "$ws" run matmul --size 8 --backend cublas
expect_fail_line 2 "kernel matmul has no backend 'cublas' \(--backend: kernel, clblast\)" "unknown backend"
run 60 "$ws" run sort --size 8 --backend clblast
expect_fail_line 2 "kernel sort has no backend 'clblast' \(--backend: kernel\)" "a kernel without that backend"
run 60 "$ws" run matmul --size 8 --backend 0=clblast+kernel
expect_fail_line 2 "invalid --backend '0=clblast\+kernel': device 0 has more than one backend" "two backends for a device"
run 60 "$ws" run matmul --size 8 --backend "x=clblast"
expect_fail_line 2 "invalid --backend 'x=clblast'" "a device that is not an index"
run 60 "$ws" run matmul --size 8 --backend 3=clblast
expect_fail_line 2 "--backend names device 3 but the plan has 1 device" "a device the plan does not have"
run 60 "$ws" plan --kernel matmul --size 8 --devices "$prof" --backend 3=clblast
expect_fail_line 2 "--backend names device 3 but the plan has 3 device" "offline: a device the profile does not have"
run 60 "$ws" run matmul --size 8 --param backend=clblast
expect_fail_line 2 "unknown --param 'backend'" "the backend is --backend, not a --param"
finish
