#!/usr/bin/env bash
# `calibrate` and the model strategy in one process (PoCL on rank 0), and their error lines.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
db=$tmp/db.json

run 60 "$ws" calibrate --kernel fft --db "$db";             expect_fail_line 2 "unknown kernel 'fft'" "calibrate: unknown kernel"
run 60 "$ws" calibrate --sizes 64 --db "$db";               expect_fail_line 2 "sizes needs a single --kernel" "calibrate all with --sizes"
run 60 "$ws" calibrate --kernel sort --sizes 0 --db "$db";  expect_fail_line 2 "size '0'" "calibrate: size 0"
run 60 "$ws" calibrate --kernel sort --max-repeats 1 --db "$db"; expect_fail_line 2 "repeats" "calibrate: max < min repeats"
run 60 "$ws" plan --kernel sort --size 8192 --strategy model --db "$db"
expect_fail_line 1 "no calibration for kernel sort on device .*worksize calibrate --kernel sort" "model without calibration"
run 60 "$ws" plan --kernel sort --strategy oracle --db "$db"; expect_fail_line 2 "oracle" "oracle needs the running job"
run 60 "$ws" bench --kernel sort --strategy model;           expect_fail_line 2 "takes --strategies" "bench takes --strategies"
run 60 "$ws" bench --kernel sort --strategies even --sweep;  expect_fail_line 2 "sweep needs --csv" "--sweep without oracle and --csv"

run 200 "$ws" calibrate --kernel sort --sizes 1024,4096 --db "$db"
expect_rc 0 "calibrate sort"
expect_out "calibrated sort on 1 device" "calibration summary"
expect_out "calibration time [0-9.]+ s; models stored in $db" "calibration time and database printed"

# No --sizes: the adaptive ladder doubles the size per device and fits its upper sizes.
run 200 "$ws" calibrate --kernel sort --db "$tmp/adaptive.json" --json
expect_rc 0 "adaptive calibrate sort"
expect_jq '.kernels[0].adaptive == true and (.kernels[0].devices[0].ladder | length) >= 3 and
  ([.kernels[0].devices[0].ladder[] | select(.fitted)] | length) >= 3 and
  (.kernels[0].devices[0].model.format == 4) and (.kernels[0].devices[0].model.host | type) == "object" and
  (.kernels[0].devices[0].model.combine | type) == "object" and (.kernels[0].devices[0].model.prepare | type) == "object"' \
  "adaptive ladder: >= 3 fitted sizes, format-4 model with host, prepare and combine phases"

# --max-size caps the adaptive ladder (quad starts at 16384 and doubles).
run 60 "$ws" calibrate --kernel quad --max-size 8192 --db "$db";  expect_fail_line 2 "below the ladder's first size" "--max-size below the start"
run 60 "$ws" calibrate --kernel quad --sizes 16384 --max-size 65536 --db "$db"; expect_fail_line 2 "does not go with --sizes" "--max-size with --sizes"
run 60 "$ws" calibrate --max-size 65536 --db "$db";  expect_fail_line 2 "max-size needs a single --kernel" "--max-size with all kernels"
run 200 "$ws" calibrate --kernel quad --max-size 65536 --db "$tmp/capped.json" --json
expect_rc 0 "calibrate --max-size"
expect_jq '([.kernels[0].devices[0].ladder[].size[0]] | max) == 65536 and
  (.kernels[0].devices[0].ladder | length) == 3' "the ladder stops at --max-size (16384, 32768, 65536)"

# --runs-csv: one row per timed run with its phases, rank 0's times and the model's prediction.
run 200 "$ws" calibrate --kernel quad --sizes 16384,65536 --min-repeats 3 --max-repeats 3 --db "$tmp/runs.json" \
  --runs-csv "$tmp/runs.csv"
expect_rc 0 "calibrate --runs-csv"
if [ "$(head -1 "$tmp/runs.csv")" = "kernel,device,rank,step,size,fitted,units,ops,bytes_in,bytes_out,send_s,h2d_s,kernel_s,d2h_s,recv_s,host_s,pack_s,exec_s,done_s,prepare_s,combine_s,makespan_s,predicted_done_s,schema,tool_version,host,date" ] &&
   [ "$(tail -n +2 "$tmp/runs.csv" | wc -l)" -eq 6 ] &&
   awk -F, 'NR > 1 && !($1 == "quad" && $6 == 1 && $19 > 0 && $22 >= $19 && $23 > 0) { bad = 1 } END { exit bad }' "$tmp/runs.csv"; then
  ok "runs CSV: header, 2 sizes x 3 runs, done <= makespan, a prediction per run"
else
  bad "runs CSV: $(cat "$tmp/runs.csv")"
fi
run 60 "$ws" calibrate --kernel quad --sizes 16384 --db "$tmp/refused.json" --runs-csv "$tmp/no/such/dir/runs.csv"
# Refused before the calibration (usage, exit 2), not after it (was: exit 1 once the runs were done).
expect_fail_line 2 "cannot write --runs-csv .*no directory" "calibrate --runs-csv into a missing directory, before the work"
if [ ! -e "$tmp/refused.json" ]; then ok "nothing calibrated before the --runs-csv refusal"; else bad "calibrated before refusing --runs-csv"; fi

# A kernel variant with a required work-group size is calibrated with that size, not the paper's
# rule (was: "kernel reg ... runs with local size (8,8), not (16,16)" at the first size, on every
# all-GPU node, where reg is matmul's default).
run 300 "$ws" calibrate --kernel matmul --param variant=reg --param bm=32 --param bn=32 --param tm=4 --param tn=4 \
  --max-size 256 --db "$tmp/reg.json"
expect_rc 0 "calibrate matmul's register-tiled variant (required local size 8x8)"
run 120 "$ws" plan --kernel matmul --size 512 --param variant=reg --param bm=32 --param bn=32 --param tm=4 --param tn=4 \
  --strategy model --db "$tmp/reg.json" --json
expect_jq '.assignments[0].local == [8, 8]' "the model's plan for it keeps the required local size"

WORKSIZE_DB=$db run 60 "$ws" plan --kernel sort --size 8192 --strategy model --json
expect_rc 0 "plan --strategy model reads WORKSIZE_DB"
expect_jq '.predicted_makespan_s > 0 and .assignments[0].predicted_s > 0 and .assignments[0].units == 8192' \
  "one device takes all, with its predicted time"
# Another local policy is another model: not calibrated.
run 60 "$ws" plan --kernel sort --size 8192 --strategy model --local null --db "$db"
expect_fail_line 1 "no calibration for kernel sort" "the model is per local policy"

run 200 "$ws" run --kernel sort --size 8192 --strategy oracle --db "$db" --json
expect_rc 0 "run --strategy oracle in one process"
expect_jq '.verified == true and .strategy == "oracle"' "oracle run verified"
finish
