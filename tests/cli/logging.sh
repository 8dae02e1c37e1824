#!/usr/bin/env bash
# Messages (issue 16): --quiet, --log-level and WORKSIZE_LOG_LEVEL on standard error, progress
# that ends at its count, and nothing but results on standard output.
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
unset WORKSIZE_LOG_LEVEL WORKSIZE_PROGRESS

# stdout_is_one_json DESCRIPTION: stdout is exactly one JSON document and nothing else.
stdout_is_one_json() {
  if [ "$(jq -s 'length' "$out" 2>/dev/null)" = 1 ] && jq -e 'type == "object"' "$out" >/dev/null 2>&1; then
    ok "$1"; else bad "$1: stdout is not one JSON document"; fi
}
# stderr_lines REGEX: how many stderr lines match REGEX.
stderr_lines() { grep -Ec -e "$1" "$err" || true; }

# 1. plan --json: one JSON document on stdout, nothing on stderr at the default level.
run 120 "$ws" plan --kernel matmul --size 256 --json
expect_rc 0 "plan --json"
stdout_is_one_json "plan --json: stdout is one JSON document"
if [ ! -s "$err" ]; then ok "plan --json: nothing on stderr at level info"; else bad "plan --json wrote to stderr"; fi
cp "$out" "$tmp/plan.json"

# 2. --log-level debug adds lines on stderr, each "worksize: debug: ...", and leaves stdout alone.
run 120 "$ws" plan --kernel matmul --size 256 --json --log-level debug
expect_rc 0 "plan --json --log-level debug"
stdout_is_one_json "debug: stdout is still one JSON document"
# (the document's date may tick over between the two runs)
if cmp -s <(jq -S 'del(.date)' "$out") <(jq -S 'del(.date)' "$tmp/plan.json"); then ok "debug: the same stdout"
else bad "debug changed stdout"; fi
n=$(stderr_lines '^worksize: debug: ')
if [ "$n" -ge 2 ] && [ "$n" -eq "$(grep -c . "$err")" ]; then ok "debug: $n 'worksize: debug:' lines, nothing else"
else bad "debug: expected debug lines only on stderr, got $n of $(grep -c . "$err")"; fi
if grep -Eq '^worksize: debug: rank 0 on .* drives 1 device\(s\): 0 ' "$err" &&
   grep -Eq '^worksize: debug: plan of matmul: strategy paper, local paper, 1 device\(s\)$' "$err"; then
  ok "debug: the inventory and the plan"; else bad "debug: no inventory or plan line"; fi
# The environment variable does the same; the command line overrides it.
WORKSIZE_LOG_LEVEL=debug run 120 "$ws" plan --kernel matmul --size 256 --json
if [ "$(stderr_lines '^worksize: debug: ')" -ge 2 ]; then ok "WORKSIZE_LOG_LEVEL=debug"; else bad "WORKSIZE_LOG_LEVEL=debug adds nothing"; fi
WORKSIZE_LOG_LEVEL=debug run 120 "$ws" plan --kernel matmul --size 256 --json --log-level info
if [ ! -s "$err" ]; then ok "--log-level info overrides WORKSIZE_LOG_LEVEL=debug"; else bad "--log-level did not override the environment"; fi
# An offline plan (no device) has its debug line too.
run 60 "$ws" plan --devices "$src/docs/profiles/paper-2015.json" --kernel matmul --json --log-level debug
stdout_is_one_json "offline plan --json --log-level debug: one JSON document"
if [ "$(stderr_lines '^worksize: debug: plan of matmul: ')" = 1 ]; then ok "offline plan: its debug line"; else bad "offline plan: no debug line"; fi

# 3. Bad levels: one line, exit 2, before any work.
run 60 "$ws" plan --kernel matmul --log-level loud
expect_fail_line 2 "^worksize: error: --log-level must be error, warn, info or debug, got 'loud'$" "--log-level loud refused"
run 60 "$ws" devices --log-level
expect_fail_line 2 "^worksize: error: .*log-level" "--log-level without a value refused"
WORKSIZE_LOG_LEVEL=verbose run 60 "$ws" plan --kernel matmul
expect_fail_line 2 "^worksize: error: WORKSIZE_LOG_LEVEL must be error, warn, info or debug, got 'verbose'$" "WORKSIZE_LOG_LEVEL=verbose refused"
run 60 "$ws" plan --kernel matmul --quiet --log-level debug
expect_fail_line 2 "^worksize: error: --quiet and --log-level exclude each other" "--quiet with --log-level refused"
# Every command takes them (and shows them in --help).
for cmd in devices plan run calibrate bench tune; do
  run 60 "$ws" "$cmd" --help --quiet
  if [ "$rc" -eq 0 ] && grep -q -- '--log-level arg' "$out" && grep -q -- '--quiet' "$out"; then
    ok "$cmd --help lists --quiet and --log-level"; else bad "$cmd --help: exit $rc, no --quiet/--log-level"; fi
done

# 4. A command with progress (calibrate) and a warning (a bad WORKSIZE_PINNED, said by the runtime).
warning="^worksize: warning: WORKSIZE_PINNED='maybe' is none of"
progress="^calibrate matmul: [0-9]+/[0-9]+ "
# The adaptive ladder, capped at 128: it plans more steps than it runs (the count ends at n/n).
# (fit limits high: a calibration this small is a weak fit, whose warning is not the one looked for)
calib=(calibrate --kernel matmul --max-size 128 --min-repeats 1 --max-repeats 1 --fit-rms-limit 100 --fit-max-limit 100 --json)
WORKSIZE_PINNED=maybe run 120 "$ws" "${calib[@]}" --db "$tmp/db1.json"
expect_rc 0 "calibrate at level info"
stdout_is_one_json "calibrate --json: stdout is one JSON document"
if [ "$(stderr_lines "$warning")" = 1 ]; then ok "info: the warning"; else bad "info: no warning"; fi
steps=$(stderr_lines "$progress")
if [ "$steps" -ge 2 ]; then ok "info: $steps progress lines (stderr is no terminal: one per step)"; else bad "info: no progress lines"; fi
last=$(grep -E "$progress" "$err" | tail -1)
if [[ "$last" =~ ^calibrate\ matmul:\ ([0-9]+)/([0-9]+)\ done ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
   [ "${BASH_REMATCH[1]}" -eq "$((steps - 1))" ]; then
  ok "info: the last progress line is n/n done ($last)"; else bad "info: the last progress line is '$last' after $steps lines"; fi
WORKSIZE_PINNED=maybe run 120 "$ws" "${calib[@]}" --db "$tmp/db2.json" --quiet
expect_rc 0 "calibrate --quiet"
stdout_is_one_json "--quiet: stdout is one JSON document"
if [ "$(stderr_lines "$warning")" = 1 ] && [ "$(grep -c . "$err")" = 1 ]; then ok "--quiet: the warning and nothing else"
else bad "--quiet: expected only the warning on stderr"; fi
WORKSIZE_PINNED=maybe run 120 "$ws" "${calib[@]}" --db "$tmp/db3.json" --log-level error
expect_rc 0 "calibrate --log-level error"
if [ ! -s "$err" ]; then ok "--log-level error: no warning, no progress"; else bad "--log-level error: stderr not empty"; fi

# 5. The bar form (a terminal, or WORKSIZE_PROGRESS=1) ends at the count reached, n/n, full, and
# with a newline.
WORKSIZE_PROGRESS=1 run 200 "$ws" "${calib[@]}" --db "$tmp/db4.json"
expect_rc 0 "calibrate with the bar"
final=$(tr '\r' '\n' < "$err" | grep -a 'calibrate matmul \[' | tail -1)
if [[ "$final" =~ \[=+\]\ ([0-9]+)/([0-9]+)\ done ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
  ok "the bar ends full at n/n: ${final%%$'\e'*}"; else bad "the bar's last state: '$final'"; fi
if [ "$(tail -c 1 "$err" | od -An -c | tr -d ' ')" = '\n' ]; then ok "the bar ends with a newline"; else bad "no newline after the bar"; fi
WORKSIZE_PROGRESS=1 run 200 "$ws" "${calib[@]}" --db "$tmp/db5.json" -q
if [ ! -s "$err" ]; then ok "-q: no bar"; else bad "-q: the bar was drawn"; fi
finish
