#!/usr/bin/env bash
# A weak calibration fit (issue 16) in one process on PoCL: calibrate warns naming the kernel,
# device, calibrated sizes and errors, and stores the fit's quality with the model; `plan` and
# `run --strategy model` then say which device's model they do not trust and give it the paper
# rule's share. The limits decide (--fit-rms-limit, --fit-max-limit): a tiny limit makes any
# real fit weak, a huge one any fit trusted, so that the test does not depend on timing.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
db=$tmp/db.json
weak=(--fit-rms-limit 0.001 --fit-max-limit 0.001)
loose=(--fit-rms-limit 1000 --fit-max-limit 1000)

run 60 "$ws" calibrate --kernel sort --fit-rms-limit -1 --db "$db"
expect_fail_line 2 "--fit-rms-limit must be a number > 0, got '-1'" "calibrate: a negative --fit-rms-limit"
run 60 "$ws" plan --kernel sort --strategy model --fit-max-limit nan --db "$db"
expect_fail_line 2 "--fit-max-limit must be a number > 0, got 'nan'" "plan: --fit-max-limit nan"
[ ! -e "$db" ] && ok "nothing calibrated before the refusals" || bad "a database was written"

run 200 "$ws" calibrate --kernel sort --sizes 1024,2048,4096,8192 --min-repeats 3 --max-repeats 3 --db "$db" "${weak[@]}"
expect_rc 0 "calibrate sort with tiny fit limits"
if [ "$(grep -c "^worksize: warning: weak calibration of sort on device 0 (.*, rank 0): fit error rms [0-9.]* %, max [0-9.]* % over the calibrated sizes 1024..8192 (limits: rms 0.1 %, max 0.1 %); --strategy model will not trust this model and gives the device the paper rule's share" "$err")" = 1 ]
then ok "one warning: kernel, device, size range, errors and limits"; else bad "no weak-fit warning"; fi
expect_out "fit rms % +max err % +trusted" "the table has the fit's errors and whether it is trusted"
expect_out "^0: .* NO +- *$" "the table says the model is not trusted"
model='[.entries[] | select(.kind == "model" and .kernel == "sort")][0].payload'
if jq -e "$model | .fit.sizes == 4 and .fit.size_range == \"1024..8192\" and .fit.rms_rel > 0.001 and .fit.max_rel >= .fit.rms_rel" "$db" >/dev/null
then ok "the fit's quality is stored with the model"; else bad "model fit: $(jq -c "$model.fit" "$db")"; fi

# The same database under other limits: the stored errors are judged again.
run 60 "$ws" plan --kernel sort --size 8192 --strategy model --db "$db" --json "${weak[@]}"
expect_rc 0 "plan --strategy model with an untrusted model"
expect_fail_line 0 "^worksize: warning: not trusting the sort model of device 0 \(.*, rank 0\): fit error rms .* over the calibrated sizes 1024..8192 \(limits: rms 0.1 %, max 0.1 %\); --strategy model gives it the paper rule's share" \
  "plan: one warning naming the device it does not trust"
expect_jq '.assignments[0].note | startswith("model not trusted (fit error rms ")' "the plan's note says so"
expect_jq '.assignments[0].units == 8192 and .predicted_makespan_s > 0' "the one device still gets the work, predicted"
run 60 "$ws" plan --kernel sort --size 8192 --strategy model --db "$db" --json "${loose[@]}"
expect_rc 0 "plan --strategy model under loose limits"
if [ -s "$err" ]; then bad "a warning under loose limits"; else ok "no warning under loose limits"; fi
expect_jq '.assignments[0] | has("note") | not' "no note under loose limits"
run 120 "$ws" run sort --size 8192 --strategy model --db "$db" --json "${weak[@]}"
expect_rc 0 "run --strategy model with an untrusted model verifies"
if grep -q "^worksize: warning: not trusting the sort model of device 0" "$err"; then ok "run says it too"; else bad "run: no warning"; fi

# --json of calibrate: the fit, trusted or not, and why.
run 200 "$ws" calibrate --kernel sort --sizes 1024,2048,4096 --min-repeats 3 --max-repeats 3 --db "$tmp/loose.json" --json "${loose[@]}"
expect_rc 0 "calibrate --json under loose limits"
if grep -q "weak calibration" "$err"; then bad "a weak-fit warning under loose limits"; else ok "no weak-fit warning under loose limits"; fi
expect_jq '.kernels[0].devices[0].fit | .trusted == true and .untrusted_reason == null and .sizes == 3 and .size_range == "1024..4096" and .rms_rel >= 0' \
  "calibrate --json: the fit's quality, trusted"
finish
