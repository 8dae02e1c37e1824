#!/usr/bin/env bash
# One rank's failure ends the whole job with its message, on every rank, without a hang.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

# A rank without any OpenCL platform: rank 0 names it.
RANK_ENV_2="OCL_ICD_VENDORS=/nonexistent OCL_ICD_FILENAMES=" mpmd_cmd "$mpx" "$ws" "2 1 2" devices
run 120 "${MPMD[@]}"
expect_fail_line 1 "rank 2: no OpenCL platform" "rank 2 without OpenCL"

# A rank speaking another inventory version, and one sending a malformed message.
RANK_ENV_1="WORKSIZE_FAULT=inventory-version" mpmd_cmd "$mpx" "$ws" "2 1 2" devices
run 120 "${MPMD[@]}"
expect_fail_line 1 "rank 1: inventory message version 999, expected 2" "mismatched inventory version names the rank"
RANK_ENV_2="WORKSIZE_FAULT=inventory-garbage" mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel quad
run 120 "${MPMD[@]}"
expect_fail_line 1 "rank 2: malformed inventory message" "malformed inventory message names the rank"

# A launch failure on rank 2 in the middle of a job.
RANK_ENV_2="WORKSIZE_FAULT=execute" mpmd_cmd "$mpx" "$ws" "2 1 2" run matmul --size 64
run 120 "${MPMD[@]}"
expect_fail_line 1 "rank 2, device .*CL_OUT_OF_RESOURCES" "launch failure on rank 2 is reported by rank 0"

# Rank-local inputs (run --inputs local): each rank makes its slice's input and checks its output
# there; a wrong output on rank 2 fails the job by its slice and rank, exit 3.
mpmd_cmd "$mpx" "$ws" "2 1 2" run matmul --size 96x150 --local null --inputs local; run 120 "${MPMD[@]}"
expect_rc 0 "matmul --inputs local on 3 unequal ranks"
expect_out "^makespan .* verified: each of 2 slices checked on its rank" "matmul --inputs local: both workers' slices checked on their ranks"
RANK_ENV_2="WORKSIZE_FAULT=wrong-local:0" mpmd_cmd "$mpx" "$ws" "2 1 2" run matmul --size 96x150 --local null --inputs local
run 120 "${MPMD[@]}"
expect_rc 3 "matmul --inputs local, a wrong output on rank 2: exit 3"
expect_out "VERIFICATION FAILED: slice at unit [0-9]+ on rank 2: C\[" "matmul --inputs local: the wrong slice is named by its rank"
mpmd_cmd "$mpx" "$ws" "2 1 2" run sort --size 1000 --inputs local; run 120 "${MPMD[@]}"
expect_fail_line 2 "--inputs local: kernel 'sort' cannot make its inputs and check its output on each rank" "sort --inputs local: one line, exit 2"

# A rank that dies: the launcher ends the others.
RANK_ENV_1="WORKSIZE_FAULT=crash" mpmd_cmd "$mpx" "$ws" "2 1 2" run quad --size 1000
run 120 "${MPMD[@]}"
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then ok "a rank that dies ends the job (exit $rc)"; else bad "crashed rank: exit $rc"; fi

# Bad arguments: every rank stops, one line.
mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel fft; run 120 "${MPMD[@]}"
expect_fail_line 2 "unknown kernel 'fft'" "bad kernel under mpiexec -n 3: one line"

# A worker's bad input (its --select names a device it does not have) is bad input on rank 0:
# exit 2 for the job, not 1 (or 3, mpiexec ORing 2 and 1).
mpmd_cmd "$mpx" "$ws" "2 1 2" run quad --size 64 --select 1=7; run 120 "${MPMD[@]}"
expect_fail_line 2 "rank 1: --select names device '7'" "a worker's bad --select exits 2 under mpiexec -n 3"

# A --select naming a device type a rank lacks (a GPU on a CPU-only node) lists what that rank has.
mpmd_cmd "$mpx" "$ws" "2 1 2" run quad --size 64 --select 1=gpu,2=cpu; run 120 "${MPMD[@]}"
expect_fail_line 2 "rank 1: --select names device 'gpu' on rank 1, which has 1 device\(s\): no such device \(it has: 0 .*\(cpu\)\)" \
  "--select 1=gpu without a GPU lists rank 1's devices, exit 2 under mpiexec -n 3"

# Output paths are checked on rank 0 before the work; every rank exits 2 (not 1 or 3).
mpmd_cmd "$mpx" "$ws" "2 1 2" bench --kernel quad --size 1024 --strategies even --repeats 1 --csv /nonexistent/dir/b.csv
run 120 "${MPMD[@]}"
expect_fail_line 2 "cannot write --csv '/nonexistent/dir/b.csv'" "bench --csv in a missing directory under mpiexec -n 3"
mpmd_cmd "$mpx" "$ws" "2 1 2" tune --report --kernel quad --size 1024 --iterations 1 --repeats 1 --warmup 0 \
  --heatmap-csv /nonexistent/dir/h.csv --db "$(mktemp -u)"
run 120 "${MPMD[@]}"
expect_fail_line 2 "cannot write --heatmap-csv '/nonexistent/dir/h.csv'" "tune --heatmap-csv in a missing directory under mpiexec -n 3"
finish
