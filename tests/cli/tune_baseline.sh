#!/usr/bin/env bash
# `worksize tune`'s baseline check and coverage warning on PoCL (issue 16): a tuned choice slower
# than NULL (made so with the test-only fault WORKSIZE_FAULT=scale-local:0:F, which scales the
# kernel time of NULL launches by F) is not stored as tuned: NULL is, with a warning naming the
# kernel, device, size and both times, and `--local tuned` says so. A guided search cut short by
# its budget is warned about.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
fast=(--iterations 1 --repeats 1 --warmup 0)
warn_lines() { grep -c "^worksize: warning: $1" "$err" || true; }

# NULL 100x faster than measured: the baseline check stores it instead of the search's choice.
db="$tmp/null.json"
WORKSIZE_FAULT=scale-local:0:0.01 run 300 "$ws" tune --kernel quad --size 1024 --db "$db" "${fast[@]}"
expect_rc 0 "tune quad 1024 with NULL made 100x faster"
if [ "$(warn_lines "quad on device 0 (.*), size 1024: the guided search's local size ([0-9]*) ran [0-9.e-]* ms against [0-9.e-]* ms with NULL (the driver's choice), [0-9.]*x slower, in 3 fresh runs each; NULL stored instead (source null)$")" = 1 ]
then ok "one warning: kernel, device, size, both times, NULL stored instead"; else bad "no baseline warning"; fi
expect_out "^quad .* 1024 .* yes: NULL *$" "the summary says NULL was stored"
entry='[.entries[] | select(.kind == "tuning" and .kernel == "quad")][0].payload'
if jq -e "$entry | .source == \"null\" and .local == [0, 0] and (.tuned_local[0] > 0) and .tuned_s > .best_s" "$db" >/dev/null
then ok "stored: source null, local NULL, the search's choice and its slower time beside it"; else bad "entry: $(jq -c "$entry" "$db")"; fi
# The guided search on 11 candidates with the 20 % budget measured 2: warned about.
if [ "$(warn_lines "quad on device 0 (.*), size 1024: the guided search measured 2 of 11 candidates, all its budget allowed: its choice may be far from the best")" = 1 ]
then ok "one warning: the guided search measured 2 of 11 candidates"; else bad "no coverage warning"; fi

# --local tuned (no fault now) runs NULL and says where it comes from.
run 60 "$ws" plan --kernel quad --size 1024 --local tuned --db "$db" --json
expect_rc 0 "plan --local tuned with a NULL entry"
expect_jq '.assignments[0].local == [0, 0]' "the plan launches NULL"
expect_jq '.assignments[0].local_rule | test("^tuned \\(db entry x2\\^10\\.y2\\^0, NULL, faster than the guided search.s \\([0-9]+,1\\) \\([0-9.e-]+ ms\\), 2/11 measured, ")' \
  "local_rule: NULL, faster than the guided search's choice"
run 120 "$ws" run quad --size 1024 --local tuned --db "$db" --json
expect_rc 0 "run --local tuned with a NULL entry verifies"
expect_jq '.verified == true and .devices[0].local == [0, 0]' "run launches NULL"
if grep -q "ran without a tuned local size" "$err"; then bad "run warns that NULL is not tuned"; else ok "no fallback warning for the NULL entry"; fi

# NULL 100x slower: never stored; no baseline warning. --min-budget 8: no coverage warning.
WORKSIZE_FAULT=scale-local:0:100 run 300 "$ws" tune --kernel quad --size 1024 --min-budget 8 --db "$tmp/slow.json" "${fast[@]}"
expect_rc 0 "tune quad 1024 with NULL made 100x slower"
if jq -e '[.entries[] | select(.kernel == "quad")][0].payload | .source != "null" and .local[0] > 0' "$tmp/slow.json" >/dev/null
then ok "NULL not stored when slower"; else bad "entry: $(jq -c '.entries' "$tmp/slow.json")"; fi
[ "$(warn_lines ".*NULL stored instead")" = 0 ] && ok "no NULL warning" || bad "a NULL warning for a slower NULL"
[ "$(warn_lines ".*all its budget allowed")" = 0 ] && ok "--min-budget 8: no coverage warning" || bad "coverage warning with --min-budget 8"

# --baseline-runs 0: no check, the search's choice is stored as before.
WORKSIZE_FAULT=scale-local:0:0.01 run 300 "$ws" tune --kernel quad --size 1024 --baseline-runs 0 --db "$tmp/off.json" "${fast[@]}"
expect_rc 0 "tune with --baseline-runs 0"
if jq -e '[.entries[] | select(.kernel == "quad")][0].payload | .source == "tuned" and .local[0] > 0' "$tmp/off.json" >/dev/null
then ok "no check: the search's choice stored as tuned"; else bad "entry: $(jq -c '.entries' "$tmp/off.json")"; fi
expect_out "^quad .* yes *$" "summary: yes"

# The report: what was stored and the check's numbers, in JSON and in the table.
WORKSIZE_FAULT=scale-local:0:0.01 run 400 "$ws" tune --report --json --kernel quad --size 1024 --db "$tmp/report.json" \
  "${fast[@]}"
expect_rc 0 "tune --report with NULL made faster"
expect_jq '.baseline_runs_each == 3 and .baseline_margin == 0.05' "report: the check's settings"
expect_jq '.results[0] | .stored_source == "null" and .stored_local == [0, 0] and .baseline_check.checked and
  .baseline_check.baseline == "null" and .baseline_check.runs >= 6 and .baseline_check.baseline_s < .baseline_check.tuned_s' \
  "report: stored NULL, the check's times"
last=$(grep -E '^tune: [0-9]+/[0-9]+' "$err" | tail -1 | sed -E 's/^tune: ([0-9]+)\/([0-9]+).*/\1 \2/')
set -- $last
[ "${1:-x}" = "${2:-y}" ] && ok "progress ends at its total ($1) with the check's runs" || bad "progress: '$last'"
WORKSIZE_FAULT=scale-local:0:0.01 run 400 "$ws" tune --report --kernel quad --size 1024 --db "$tmp/report.json" "${fast[@]}"
expect_out "vs paper +stored" "the text report has a stored column"
expect_out "^quad .* yes: NULL *$" "the text report says NULL was stored"

# Bad values: one line, exit 2, before any work.
run 60 "$ws" tune --kernel quad --size 1024 --baseline-margin -0.1 --db "$tmp/bad.json"
expect_fail_line 2 "--baseline-margin must be a number in \[0, 10\], got '-0.1'" "negative --baseline-margin"
run 60 "$ws" tune --kernel quad --size 1024 --baseline-runs -1 --db "$tmp/bad.json"
expect_fail_line 2 "--baseline-runs must be a non-negative integer" "negative --baseline-runs"
[ ! -e "$tmp/bad.json" ] && ok "nothing tuned before the refusals" || bad "a database was written"
finish
