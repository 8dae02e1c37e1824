#!/usr/bin/env bash
# `worksize tune` plumbing on PoCL (no timing asserts): exhaustive and guided tuning into a
# temporary database, the report's JSON and heat map, `plan --local tuned` with an entry,
# without one and with a damaged one, and failing configurations never stored.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
db="$tmp/db.json"
fast=(--iterations 1 --repeats 1 --warmup 0)

run 300 "$ws" tune --kernel matmul --size 16 --search exhaustive --db "$db" "${fast[@]}"
expect_rc 0 "tune matmul 16 exhaustive"
expect_out "^matmul .* yes" "summary row says stored"
if jq -e '[.entries[] | select(.kind == "tuning" and .kernel == "matmul")] | length == 1' "$db" >/dev/null; then
  ok "one matmul tuning entry in the database"; else bad "no matmul tuning entry in $db"; fi
mm_local=$(jq -c '[.entries[] | select(.kernel == "matmul")][0].payload.local' "$db")
mm_meas=$(jq '[.entries[] | select(.kernel == "matmul")][0].payload | .measured == .candidates' "$db")
[ "$mm_meas" = true ] && ok "exhaustive measured every candidate" || bad "exhaustive entry: measured != candidates"
if jq -e '[.entries[] | select(.kernel == "matmul")][0].payload.iterations == 1' "$db" >/dev/null; then
  ok "the entry records the iterations its time is for"; else bad "no iterations in the matmul entry"; fi

run 300 "$ws" tune --kernel quad --size 1024 --size sort=256 --db "$db" "${fast[@]}"
expect_rc 2 "--size KERNEL=S for a kernel not tuned is a usage error"
for k in "quad 1024" "sort 256"; do
  set -- $k
  run 300 "$ws" tune --kernel "$1" --size "$2" --search guided --db "$db" "${fast[@]}"
  expect_rc 0 "tune $1 $2 guided"
done
if jq -e '[.entries[] | select(.kind == "tuning")] | length == 3' "$db" >/dev/null; then
  ok "three tuning entries"; else bad "expected 3 tuning entries in $db"; fi

# The report: every field, guided measured <= 20 % of the candidates, heat map CSV.
run 400 "$ws" tune --report --json --kernel all --size matmul=16 --size interp=16 --size sort=256 --size quad=1024 \
  --db "$tmp/report-db.json" --heatmap-csv "$tmp/heat.csv" "${fast[@]}"
expect_rc 0 "tune --report --json over the four kernels"
cp "$out" "$tmp/report.json"
expect_jq '.results | length == 4' "one result per kernel and device"
expect_jq '[.results[] | has("kernel","device","size","tuned_s","exhaustive_best_s","paper_s","null_s","measured","candidates","gain_over_null","gain_over_paper")] | all' "every report field"
expect_jq '[.results[] | has("tuned_scan_s","exhaustive_scan_s","head_to_head","head_to_head_runs","head_to_head_error","confirm_runs","exhaustive_confirm_runs")] | all' "confirmation and head-to-head fields"
expect_jq '.confirm_top == 3 and .confirm_runs_each == 3 and .head_to_head_runs_each == 9' "defaults: confirm the top 3 three times each, head-to-head 9 each"
expect_jq '[.results[] | .measured <= .candidates] | all' "measured <= candidates"
# --min-run-ms (default 5): these kernels take microseconds per iteration, so every one is timed
# over more iterations than the job's one, and the times are scaled back to one.
expect_jq '.min_run_s == 0.005 and ([.results[] | .iterations == 1 and .timed_iterations > 1 and .timed_iterations <= 1000] | all)' "tiny kernels timed over more iterations (at most 1000)"
expect_jq '[.results[] | select(.candidates >= 10) | .measured <= 0.2 * .candidates] | all' "guided measures <= 20 % of >= 10 candidates"
# Confirmation: the finalists are min(3, successful) candidates, re-timed 3 times each (no
# failures on PoCL at these sizes); not counted in measured.
expect_jq '[.results[] | select(.failed == 0) | .exhaustive_confirm_runs == (if .candidates >= 2 then 3 * ([.candidates, 3] | min) else 0 end)] | all' "exhaustive confirmation: 3 runs per finalist"
expect_jq '[.results[] | select(.failed == 0) | .confirm_runs == (if .measured >= 2 then 3 * ([.measured, 3] | min) else 0 end)] | all' "guided confirmation: 3 runs per finalist"
# The comparison: the same configuration is exactly 1 with no extra runs; different ones are
# compared head to head (9 fresh runs each) and the scan values are kept beside.
expect_jq '[.results[] | select(.tuned_local == .exhaustive_best_local) | .tuned_over_exhaustive == 1 and .tuned_s == .exhaustive_best_s and (.head_to_head | not) and .head_to_head_runs == 0] | all' "same choice: ratio exactly 1, no head-to-head"
expect_jq '[.results[] | select(.tuned_local != .exhaustive_best_local) | .head_to_head and .head_to_head_runs == 18 and .head_to_head_error == null] | all' "different choices: a head-to-head of 9 + 9 runs"
expect_jq '[.results[] | select(.paper_local == .tuned_local) | .gain_over_paper == 1] | all' "the paper's local size, when tuned, gets the same number"
expect_jq '[.results[] | (.tuned_scan_s > 0) and (.exhaustive_scan_s > 0) and (.tuned_s > 0) and (.exhaustive_best_s > 0)] | all' "all compared and scan times present"
# The progress count ends at its total, and the total is the number of steps shown.
last=$(grep -E '^tune: [0-9]+/[0-9]+' "$err" | tail -1 | sed -E 's/^tune: ([0-9]+)\/([0-9]+).*/\1 \2/')
steps=$(grep -cE '^tune: [0-9]+/[0-9]+ [a-z]+ dev ' "$err")
set -- $last
if [ "${1:-x}" = "${2:-y}" ] && [ "$1" -eq "$steps" ]; then ok "progress ends at $1/$2 after $steps steps"
else bad "progress: last line '$last', $steps steps"; fi
if grep -E '^tune: [0-9]+/[0-9]+ ' "$err" | tail -1 | grep -Eq ' \[[0-9]+ (s|min [0-9]{2} s)\]$'; then
  ok "the last progress line gives the elapsed time"; else bad "no elapsed time on the last progress line"; fi
if grep -Eq '^tune: [0-9]+/[0-9]+ .* \[[0-9]+ (s|min [0-9]{2} s), ~[0-9]+ (s|min [0-9]{2} s) left\]$' "$err"; then
  ok "progress lines estimate the time left"; else bad "no time-left estimate in the progress lines"; fi
expect_jq '[.results[] | (.heatmap | length) == .candidates] | all' "heat map covers every candidate"
if [ "$(grep -c '^matmul,0,' "$tmp/heat.csv")" -eq "$(jq '.results[] | select(.kernel == "matmul") | .candidates' "$tmp/report.json")" ]; then
  ok "heat-map CSV has a row per matmul candidate"; else bad "heat-map CSV rows"; fi
# marks and null_ms: each kernel's tuned, best and paper cells are the report's local sizes, and
# null_ms is its NULL time.
marks_bad=""
for k in matmul interp sort quad; do
  for m in tuned:tuned_local best:exhaustive_best_local paper:paper_local; do
    want=$(jq -r --arg k "$k" --arg f "${m#*:}" '.results[] | select(.kernel == $k) | .[$f] | "\(.[0]),\(.[1])"' "$tmp/report.json")
    got=$(awk -F, -v k="$k" -v m="${m%%:*}" 'NR > 1 && $1 == k && index("+" $7 "+", "+" m "+") { print $4 "," $5 }' "$tmp/heat.csv")
    [ "$got" = "$want" ] || marks_bad="$marks_bad $k/${m%%:*}: csv '$got' report '$want';"
  done
  null_s=$(jq -r --arg k "$k" '.results[] | select(.kernel == $k) | .null_s' "$tmp/report.json")
  awk -F, -v k="$k" -v n="$null_s" 'NR > 1 && $1 == k { d = $8 / (n * 1e3) - 1; if (d > 1e-6 || d < -1e-6) bad = 1; rows++ }
    END { exit !(rows > 0 && !bad) }' "$tmp/heat.csv" || marks_bad="$marks_bad $k/null_ms;"
done
if [ -z "$marks_bad" ]; then ok "heat-map CSV marks the report's tuned, best and paper cells and carries NULL's time"
else bad "heat-map CSV marks:$marks_bad"; fi
if command -v gnuplot >/dev/null; then
  run 60 bash "$src/docs/plot_heatmap.sh" "$tmp/heat.csv" matmul 0 "$tmp/matmul.png"
  if [ "$rc" -eq 0 ] && [ -s "$tmp/matmul.png" ]; then ok "gnuplot heat map PNG"; else bad "plot_heatmap.sh failed"; fi
fi
run 400 "$ws" tune --report --kernel matmul --size 16 --db "$tmp/report-db.json" "${fast[@]}"
expect_out "^Heat map, matmul" "text report has a heat map"
expect_out "^y.x +1 +2 +4 +8 +16 *$" "heat map columns are the x divisors"
expect_out "tuned/best +compared" "text report has the ratio and what was compared"
expect_out "^matmul .* (same|h2h 18) " "text report says whether the times are head-to-head"
expect_out "the medians of a head-to-head" "text report explains the head-to-head numbers"

# Confirmation and head-to-head off: the compared times are the searches' own.
run 400 "$ws" tune --report --json --kernel sort --size 256 --confirm-runs 0 --head-to-head 0 \
  --db "$tmp/report-db.json" "${fast[@]}"
expect_rc 0 "tune --report with --confirm-runs 0 --head-to-head 0"
expect_jq '.results[0] | .confirm_runs == 0 and .exhaustive_confirm_runs == 0 and (.head_to_head | not)' "no re-timing when off"
expect_jq '.results[0] | .tuned_s == .tuned_scan_s and .exhaustive_best_s == .exhaustive_scan_s' "compared times are the scan times"
run 60 "$ws" tune --kernel sort --size 256 --confirm-top -1 --db "$tmp/report-db.json" "${fast[@]}"
expect_rc 2 "a negative --confirm-top is a usage error"
run 60 "$ws" tune --kernel sort --size 256 --min-run-ms -1 --db "$tmp/report-db.json" "${fast[@]}"
expect_fail_line 2 "min-run-ms" "a negative --min-run-ms: one line naming it, exit 2"
# Off: every run has the job's own iterations; on: the summary says which were timed longer.
run 400 "$ws" tune --report --json --kernel quad --size 1024 --min-run-ms 0 --db "$tmp/report-db.json" "${fast[@]}"
expect_jq '.min_run_s == 0 and .results[0].timed_iterations == 1' "--min-run-ms 0: runs of the job's own iterations"
run 400 "$ws" tune --kernel quad --size 1024 --iterations 2 --repeats 1 --warmup 0 --min-run-ms 20 --db "$tmp/report-db.json"
expect_rc 0 "tune with --min-run-ms 20"
expect_out "^  quad on device 0 .*: runs of [0-9]+ iterations timed, scaled to 2$" "the summary names the device timed longer"

# plan --local tuned: the tuned entry, the paper rule without one, a damaged entry ignored.
run 60 "$ws" plan --kernel matmul --size 16 --local tuned --db "$db" --json
expect_rc 0 "plan --local tuned"
expect_jq ".assignments[0].local == $mm_local" "plan takes the tuned local size $mm_local"
expect_jq '.assignments[0].local_rule | startswith("tuned (db entry")' "local_rule names the tuned entry"
expect_jq '.assignments[0].local_rule | test("ms per run of 1 iteration\\)$")' "local_rule gives the entry's time per run of its iterations"
run 60 "$ws" plan --kernel matmul --size 16 --local tuned --db "$tmp/none.json" --json
expect_jq '.assignments[0].local_rule | startswith("paper (no tuned entry")' "no database: paper rule"
run 60 "$ws" plan --kernel interp --size 16 --local tuned --db "$db" --json
expect_jq '.assignments[0].local_rule | startswith("paper (no tuned entry")' "no entry for the kernel: paper rule"
jq '(.entries[] | select(.kernel == "matmul") | .payload.local) |= [1,1]' "$db" >"$tmp/bad.json"
run 60 "$ws" plan --kernel matmul --size 16 --local tuned --db "$tmp/bad.json" --json
expect_rc 0 "plan with a damaged entry"
expect_jq '.assignments[0].local_rule | startswith("paper (no tuned entry")' "damaged entry not used"
if grep -q "corrupt tuning entry for kernel 'matmul'" "$err"; then ok "damaged entry reported"; else bad "damaged entry not reported"; fi
run 120 "$ws" run matmul --size 16 --local tuned --db "$db" --json
expect_rc 0 "run --local tuned verifies"
expect_jq ".devices[0].local == $mm_local" "run uses the tuned local size"

# Failing configurations are skipped and never stored.
before=$(jq -c '.entries | length' "$db")
WORKSIZE_FAULT=execute run 120 "$ws" tune --kernel quad --size 1024 --search guided --db "$db" "${fast[@]}"
expect_rc 1 "every configuration failing is a failure"
if grep -q "nothing stored" "$err"; then ok "says nothing was stored"; else bad "no 'nothing stored' message"; fi
[ "$(jq -c '.entries | length' "$db")" = "$before" ] && ok "database unchanged" || bad "database changed"
# A configuration that gives wrong results is skipped and never stored: the local size that an
# exhaustive search stores first is then made to return a wrong result (test-only fault). No
# baseline check there: the stored local size must be a candidate, not NULL.
wdb="$tmp/wrong-db.json"
run 300 "$ws" tune --kernel quad --size 1024 --search exhaustive --baseline-runs 0 --db "$wdb" "${fast[@]}"
expect_rc 0 "exhaustive quad 1024"
wx=$(jq '[.entries[] | select(.kernel == "quad")][0].payload.local[0]' "$wdb")
WORKSIZE_FAULT="wrong-local:$wx" run 400 "$ws" tune --report --json --kernel quad --size 1024 --search exhaustive \
  --db "$wdb" "${fast[@]}"
expect_rc 0 "the report goes on past a configuration with wrong results"
expect_jq ".results[0] | .failed >= 1 and ([.heatmap[] | select(.x == $wx) | .seconds] == [null])" "local $wx: failed, no time in the heat map"
expect_jq ".results[0] | .exhaustive_best_local[0] != $wx and .tuned_local[0] != $wx" "local $wx chosen by neither search"
if jq -e "[.entries[] | select(.kernel == \"quad\")][0].payload.local[0] != $wx" "$wdb" >/dev/null; then
  ok "the wrong-result local size $wx is not stored"; else bad "local $wx with wrong results is still the stored entry"; fi
# A prime size (4099 > PoCL's work-group limit): its only divisor is 1, but the kernels guard
# their index, so the candidates are those of the NDRange padded to the device's pad quantum
# (issue 14): it is tuned and stored, and `--local tuned` uses the entry.
run 120 "$ws" tune --kernel quad --size 4099 --db "$db" "${fast[@]}"
expect_rc 0 "tune quad 4099 (padded candidates)"
if grep -q 'nothing to tune' "$err"; then bad "quad 4099: 'nothing to tune' despite padding: $(cat "$err")"; else
  ok "quad 4099 has candidates of its padded NDRange"; fi
run 60 "$ws" plan --kernel quad --size 4099 --local tuned --db "$db" --json
# The entry is a padded local size, or NULL where the baseline check found NULL faster (a loaded
# machine can make it so); never 1.
expect_jq '(.assignments[0].local_rule | startswith("tuned (db entry")) and (.assignments[0].local[0] > 1 or .assignments[0].local[0] == 0)' "--local tuned at 4099: the stored entry, not 1"
expect_jq '.assignments[0].local[0] == 0 or .assignments[0].padded_global[0] % .assignments[0].local[0] == 0' "--local tuned at 4099: padded to whole groups"

# Kernel parameters (docs/tuning.md, "Kernel parameters"): matmul's register tiles with bm, bn,
# bk and vw given, so tm and tn are searched whole (9 sets, tm = tn = 2 is 64 work-items, which
# cannot share the tile loads: invalid). The given tiles fix the one local size of the defaults
# (nothing to tune), so the search's best is stored, with the whole configuration, under the
# plain job's key; `run` and `plan` with --local tuned then run it. On CPUs the search runs only
# when asked for (--param-search auto is off there).
pdb="$tmp/params-db.json"
tiles=(--param variant=reg --param bm=16 --param bn=16 --param bk=8 --param vw=4)
run 400 "$ws" tune --kernel matmul --size 48 "${tiles[@]}" --db "$pdb" "${fast[@]}"
expect_rc 0 "tune matmul reg tiles, --param-search auto on a CPU"
if grep -q "parameters .* searched" "$out"; then bad "auto searched parameters on a CPU"; else ok "auto: no parameter search on a CPU"; fi
run 400 "$ws" tune --kernel matmul --size 48 "${tiles[@]}" --param-search exhaustive --db "$pdb" "${fast[@]}"
expect_rc 0 "tune matmul's tm and tn exhaustively"
expect_out "^matmul on device 0 .*size 48: parameters tm,tn searched \(exhaustive\): 9 sets, 1 invalid, 8 of 8 measured, 0 failed; best tm=[248] tn=[248] [0-9.]+ ms, [0-9.]+x the speed of the defaults \([0-9.]+ ms, head to head\); stored$" "the parameter search's line, the speed-up from a head-to-head"
expect_out "^matmul .* yes: params *$" "the summary says parameters were stored"
entry='[.entries[] | select(.kind == "tuning" and .kernel == "matmul")][0].payload'
if jq -e "$entry | .params.variant == \"reg\" and .params.bm == 16 and .params.bn == 16 and .params.bk == 8 and .params.vw == 4 and (.params.tm | IN(2,4,8)) and (.params.tn | IN(2,4,8)) and .strategy == \"params exhaustive\" and .default_s > 0 and .local == [16 / .params.tn, 16 / .params.tm]" "$pdb" >/dev/null; then
  ok "the entry holds the whole configuration and its work-group"; else bad "params entry: $(jq -c "$entry" "$pdb")"; fi
tm=$(jq "$entry.params.tm" "$pdb"); tn=$(jq "$entry.params.tn" "$pdb"); plocal=$(jq -c "$entry.local" "$pdb")
run 120 "$ws" run matmul --size 48 --local tuned --db "$pdb" --json
expect_rc 0 "run --local tuned with a parameter entry verifies"
expect_jq ".variant == \"kernel reg bm=16 bn=16 bk=8 tm=$tm tn=$tn vw=4\" and .devices[0].local == $plocal" "run --local tuned runs the tuned parameters"
run 60 "$ws" plan --kernel matmul --size 48 --local tuned --db "$pdb"
expect_out "^matmul: kernel reg bm=16 bn=16 bk=8 tm=$tm tn=$tn vw=4$" "plan names the tuned variant"
run 120 "$ws" run matmul --size 48 --local tuned --param variant=tiled --db "$pdb" --json
expect_jq '.variant == "kernel tiled"' "--param wins over the database's parameters"
# interp's rows per work-item (vw and stage 0 given): its sets fix no work-group and run with
# NULL, so a stored set is a NULL entry beside the defaults' local size it beat; `run --local
# tuned` then runs it (the job's own key: vw 4, the default).
run 400 "$ws" tune --kernel interp --size 16 --param vw=4 --param stage=0 --param-search exhaustive --db "$pdb" "${fast[@]}"
expect_rc 0 "tune interp's ry exhaustively"
expect_out "^interp on device 0 .*size 16: parameters ry searched \(exhaustive\): 4 sets, 0 invalid, 4 of 4 measured, 0 failed; best ry=[1248] .*(stored|the defaults kept)$" "interp's parameter search line"
ientry='[.entries[] | select(.kind == "tuning" and .kernel == "interp" and .payload.params.ry != null)][0].payload'
if grep -q "parameters ry searched.*; stored$" "$out"; then
  if jq -e "$ientry | .params.vw == 4 and (.params.ry | IN(1,2,4,8)) and .source == \"null\" and .local == [0, 0] and .tuned_s > 0 and .strategy == \"params exhaustive\"" "$pdb" >/dev/null; then
    ok "interp's stored set is a NULL entry with vw and ry"; else bad "interp params entry: $(jq -c "$ientry" "$pdb")"; fi
  ry=$(jq "$ientry.params.ry" "$pdb")
  run 120 "$ws" run interp --size 16 --local tuned --db "$pdb" --json
  expect_rc 0 "run interp --local tuned with a parameter entry verifies"
  expect_jq ".devices[0].global == [4, $(( (16 + ry - 1) / ry ))]" "run --local tuned runs interp's tuned ry"
  if [ "$ry" != 1 ]; then
    expect_jq '.devices[0].local == [0, 0]' "... with the NULL local size its set was measured with"
    if grep -q "without a tuned local size" "$err"; then bad "run --local tuned fell back to the paper rule: $(cat "$err")"
    else ok "no fallback to the paper rule"; fi
  fi
else
  ok "interp's defaults kept (nothing stored to check)"
fi
# A stage_x given with --param is part of the stored configuration (it was left out: `run --local
# tuned` then ran stage 1 with the default (32,4) groups, not the (64,2) ones measured). The
# defaults fix their work-group (stage 1), so the searched set is stored whatever its time.
sdb="$tmp/stage-db.json"
run 400 "$ws" tune --kernel interp --size 16 --param vw=4 --param stage=1 --param stage_x=64 --param-search exhaustive --db "$sdb" "${fast[@]}"
expect_out "^interp on device 0 .*size 16: parameters ry searched \(exhaustive\): 4 sets, .*; stored$" "tune interp with stage=1 stage_x=64 stores its set"
if jq -e '[.entries[] | select(.kind == "tuning" and .payload.params.ry != null)][0].payload | .params.stage == 1 and .params.stage_x == 64 and .local == [64, 2]' "$sdb" >/dev/null; then
  ok "the entry holds the stage_x given with --param"; else bad "stage_x entry: $(jq -c '.entries' "$sdb")"; fi
run 120 "$ws" run interp --size 16 --local tuned --db "$sdb" --json
expect_rc 0 "run interp --local tuned with the stage_x entry verifies"
expect_jq '.devices[0].local == [64, 2]' "run --local tuned runs the (64,2) groups of stage_x 64"
run 60 "$ws" run matmul --size 48 --param tm=3
expect_fail_line 2 "tm and tn must be 1, 2, 4 or 8" "an invalid tile parameter: one line with the valid values, exit 2"
run 60 "$ws" tune --kernel matmul --size 48 --param-search sometimes --db "$pdb"
expect_fail_line 2 "param-search must be auto, guided, exhaustive or off" "a bad --param-search: one line, exit 2"
finish
