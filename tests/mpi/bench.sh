#!/usr/bin/env bash
# Calibration, the model and oracle strategies and `bench` over three ranks whose PoCL devices
# have 2, 1 and 2 compute units (rank 0 is the master). Plumbing only: no timing asserts.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
db=$tmp/db.json

mpmd_cmd "$mpx" "$ws" "2 1 2" calibrate --kernel matmul --sizes 64,128 --max-repeats 6 --db "$db" --json
run 300 "${MPMD[@]}"
expect_rc 0 "calibrate matmul over 3 ranks"
expect_jq '.kernels[0].kernel == "matmul" and (.kernels[0].devices | length) == 2' "one model per device"
expect_jq '[.kernels[0].devices[].samples] | all(. >= 6)' "at least 3 timed runs per device and size"
expect_jq '[.kernels[0].devices[].model.kernel | .fixed_s + .per_x_s] | all(. > 0)' "compute phase fitted"
expect_jq '.seconds > 0' "calibration time reported"
expect_jq '[.kernels[0].devices[] | .corun.units > 0 and .corun.measured_s > 0 and .corun.predicted_s > 0] | all' \
  "co-run: every device had work with the others"
expect_jq '[.kernels[0].devices[].model.contention] | all(. >= 1 and . <= 4)' "contention factors in [1, 4]"
if jq -e '.entries | length == 2' "$db" >/dev/null; then ok "two model entries in the database"; else bad "database entries"; fi

mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy model --db "$db" --json
run 120 "${MPMD[@]}"
expect_rc 0 "plan --strategy model"
expect_jq '.predicted_makespan_s > 0' "plan has a predicted makespan"
expect_jq '[.assignments[] | (.predicted_s > 0) or ((.note // "") | startswith("no work:"))] | all' \
  "every assignment has predicted_s or says why it has no work"
expect_jq '([.assignments[].units] | add) == 64' "the model's units cover the problem"

mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy model --db "$db"
run 120 "${MPMD[@]}"
expect_out "predicted makespan" "plan table shows the predicted makespan"

mpmd_cmd "$mpx" "$ws" "2 1 2" run --kernel matmul --size 256 --strategy model --db "$db" --json
run 120 "${MPMD[@]}"
expect_rc 0 "run --strategy model verifies"
expect_jq '.verified == true and .strategy == "model"' "model run verified"

mpmd_cmd "$mpx" "$ws" "2 1 2" run --kernel matmul --size 128 --strategy oracle --db "$db" --json
run 300 "${MPMD[@]}"
expect_rc 0 "run --strategy oracle verifies"

mpmd_cmd "$mpx" "$ws" "2 1 2" bench --kernel matmul --size 128 --repeats 2 --db "$db" --csv "$tmp/b.csv" --sweep \
  --phases-csv "$tmp/p.csv"
run 300 "${MPMD[@]}"
expect_rc 0 "bench matmul, five strategies"
# --phases-csv: every working device of every strategy's median run, measured and predicted.
if head -1 "$tmp/p.csv" | grep -q '^kernel,size,iterations,strategy,device,units,pack_s,send_s,h2d_s,kernel_s,d2h_s,recv_s,exec_s,host_s,done_s,prepare_s,combine_s,makespan_s,pred_send_s,.*,pred_finish_s,pred_makespan_s,schema,tool_version,host,date$' &&
   awk -F, 'NR > 1 { rows++; if (!($6 > 0 && $15 > 0 && $18 >= $15 && $25 > 0 && $26 >= $25)) bad = 1; s[$4] = 1 }
            END { n = 0; for (k in s) n++; exit bad || n != 5 || rows < 5 }' "$tmp/p.csv"
then ok "phases CSV: each strategy's working devices, done <= makespan, predictions"; else bad "phases CSV: $(cat "$tmp/p.csv")"; fi
expect_out "reused from the database" "bench reuses the calibration"
cp "$out" "$tmp/bench.out"
if head -1 "$tmp/b.csv" | grep -q '^kernel,size,iterations,strategy,makespan_s,ratio_to_oracle,predicted_s,.*share_d0,share_d1,schema,tool_version,host,date$'
then ok "CSV header has the required columns"; else bad "CSV header: $(head -1 "$tmp/b.csv")"; fi
if [ "$(tail -n +2 "$tmp/b.csv" | cut -d, -f4 | tr '\n' ' ')" = "even pe-ratio paper model oracle " ]
then ok "one CSV row per strategy"; else bad "CSV rows: $(cat "$tmp/b.csv")"; fi
if awk -F, 'NR>1 && !($6 > 0 && $5 > 0 && $7 > 0) {bad=1} END {exit bad}' "$tmp/b.csv"
then ok "every row has makespan, ratio_to_oracle and predicted_s > 0"; else bad "CSV values: $(cat "$tmp/b.csv")"; fi
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           !($c["makespan_q1_s"] > 0 && $c["makespan_q1_s"] <= $c["makespan_s"] && $c["makespan_s"] <= $c["makespan_q3_s"]) { bad = 1 }
           END { exit bad || !c["makespan_q3_s"] }' "$tmp/b.csv"
then ok "CSV: quartiles around the median"; else bad "CSV quartiles: $(cat "$tmp/b.csv")"; fi
if grep -Eq "^model vs (paper, paired by repeat: median ratio [0-9.]+, model faster in [0-9] of 2 \(sign test p = [0-9.]+\)|paper: the same plan)$" "$tmp/bench.out"
then ok "model paired with each baseline by repeat"; else bad "paired line: $(cat "$tmp/bench.out")"; fi
if awk -F, 'NR>1 && $4=="oracle" && $6 == 1 {f=1} END {exit !f}' "$tmp/b.csv"
then ok "oracle's ratio is 1"; else bad "oracle ratio: $(cat "$tmp/b.csv")"; fi
if head -1 "$tmp/b.csv" | grep -q ',calibration_s,same_plan_as,samples,makespan_q1_s,makespan_q3_s,share_d0'
then ok "CSV has same_plan_as, samples and the quartiles"; else bad "CSV header: $(head -1 "$tmp/b.csv")"; fi
# Rows whose plan is identical to an earlier row's pool their samples: same makespan, more samples.
if awk -F, 'NR>1 {ms[$4]=$5; n[$4]=$14; if ($13 != "") same[$4]=$13}
            END {for (s in same) if (ms[s] != ms[same[s]] || n[s] != n[same[s]] || n[s] < 4) exit 1;
                 for (s in n) if (n[s] < 2) exit 1}' "$tmp/b.csv"
then ok "identical plans report the same pooled median"; else bad "pooled rows: $(cat "$tmp/b.csv")"; fi
expect_out "interleaved" "bench says its repeats are interleaved"
if [ "$(wc -l < "$tmp/b-sweep.csv")" -ge 6 ] && head -1 "$tmp/b-sweep.csv" | grep -q '^kernel,size,iterations,small_share,makespan_s'
then ok "sweep CSV with the oracle's scan points"; else bad "sweep CSV: $(cat "$tmp/b-sweep.csv" 2>&1)"; fi
if awk -F, 'NR>1 && $4 == 0 {f=1} END {exit !f}' "$tmp/b-sweep.csv"
then ok "the scan includes a zero share"; else bad "no zero share in the sweep"; fi

# Two strategies with the same plan are one experiment: the samples are pooled, both rows report
# the same median, the second says which row it shares the plan with.
mpmd_cmd "$mpx" "$ws" "2 1 2" bench --kernel matmul --size 128 --strategies even,paper,even --repeats 3 \
  --db "$db" --csv "$tmp/p.csv"
run 300 "${MPMD[@]}"
expect_rc 0 "bench with two identical plans"
expect_out "even .6 runs pooled" "the table marks the pooled row"
if awk -F, 'NR==2 {ms=$5; e=$13; n=$14} NR==3 {pn=$14} NR==4 {ok = $5 == ms && $13 == "even" && e == "" && $14 == 6 && n == 6 && pn == 3}
            END {exit !ok}' "$tmp/p.csv"
then ok "identical plans: same_plan_as, pooled samples, same median"; else bad "pooled rows: $(cat "$tmp/p.csv")"; fi

# No calibration for quad yet: bench calibrates first and says so.
mpmd_cmd "$mpx" "$ws" "2 1 2" bench --kernel quad --size 16384 --strategies even,model --repeats 1 \
  --calibration-sizes 4096,16384 --db "$db"
run 300 "${MPMD[@]}"
expect_rc 0 "bench quad calibrates automatically"
expect_out "calibration: measured in" "automatic calibration is reported with its time"
expect_out "calibration time .* % of the model-planned job" "calibration time against the job time"

# A damaged entry is reported and never used: plan fails with one line.
jq '.entries[0].payload.kernel.per_x_s *= 2' "$db" > "$tmp/corrupt.json"
mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy model --db "$tmp/corrupt.json"
run 120 "${MPMD[@]}"
expect_fail_line 1 "corrupt.*checksum mismatch" "corrupt model entry: one line, exit 1"
printf '{"schema": 1, "entr' > "$tmp/broken.json"
mpmd_cmd "$mpx" "$ws" "2 1 2" plan --kernel matmul --size 256 --strategy model --db "$tmp/broken.json"
run 120 "${MPMD[@]}"
expect_fail_line 1 "no calibration.*corrupt" "malformed database: one line, exit 1"
mpmd_cmd "$mpx" "$ws" "2 1 2" bench --kernel sort --size 4096 --strategies model --no-calibrate --db "$db"
run 120 "${MPMD[@]}"
expect_fail_line 1 "no calibration for kernel sort.*worksize calibrate --kernel sort" "bench --no-calibrate without a model"
finish
