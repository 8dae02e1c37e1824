#!/usr/bin/env bash
# One vocabulary across outputs (docs/user-guide.md, "Output schemas"): every JSON document and
# CSV file carries schema, tool_version, host and date; `device` is the integer index in the job's
# device list (the name is `device_name`); `size` is the problem size as --size gave it, and the
# NDRange is `global`; plan, run and bench share one default --size. PoCL's CPU device; the run
# and plan checks split over two devices of one process (POCL_DEVICES="pthread basic").
ws=$1; src=$2
source "$src/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
fast=(--iterations 1 --repeats 1 --warmup 0)
two=(env POCL_DEVICES="pthread basic")

run 10 "$ws" --version; version=$(sed -n 's/^worksize //p' "$out")
host=$(hostname)
now=$(date -u +%s)
if [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok "--version gives the tool version $version"; else bad "--version: '$version'"; fi

# expect_jq_args JQ-OPTIONS... FILTER DESCRIPTION: lib.sh's expect_jq with jq options (--arg ...).
expect_jq_args() {
  local n=$#; local desc=${!n}; local fi_=$((n - 1)); local filter=${!fi_}
  if jq -e "${@:1:$((n - 2))}" "$filter" "$out" >/dev/null 2>&1; then ok "$desc"; else bad "$desc: jq '$filter' is not true"; fi
}
# expect_meta SCHEMA: stdout is one JSON document with the provenance fields of SCHEMA, written
# by this host within the last hour (UTC).
expect_meta() {
  expect_jq_args --arg s "$1" --arg v "$version" --arg h "$host" --argjson now "$now" \
    '.schema == $s and .tool_version == $v and .host == $h and
     (.date | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")) and
     ((.date | fromdateiso8601) - $now | fabs) < 3600' "$1: schema, tool_version, host and date"
}
# expect_csv FILE SCHEMA: the header ends with schema,tool_version,host,date; every row has the
# header's field count and ends with SCHEMA, the version, this host and a date within the hour.
expect_csv() {
  local f=$1 s=$2 first
  if [ -s "$f" ] && head -1 "$f" | grep -q ',schema,tool_version,host,date$' &&
     awk -F, -v s="$s" -v v="$version" -v h="$host" '
       NR == 1 { n = NF; next }
       { rows++; if (NF != n || $(NF-3) != s || $(NF-2) != v || $(NF-1) != h ||
                     $NF !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/) bad = 1 }
       END { exit bad || rows < 1 }' "$f" &&
     first=$(awk -F, 'NR == 2 { print $NF }' "$f") && [ $(( $(date -u -d "$first" +%s) - now )) -lt 3600 ]
  then ok "$s ($(basename "$f")): the last four columns of every row"
  else bad "$s CSV $f: $(head -3 "$f" 2>&1)"; fi
}
# csv_column FILE NAME: the values of a column, found by name, one per line.
csv_column() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } k { print $k }' "$1"; }

# devices --json: the device list the other outputs index.
run 60 "${two[@]}" "$ws" devices --json; expect_rc 0 "devices --json"
expect_meta worksize.devices/1
cp "$out" "$tmp/devices.json"
names=$(jq -c '[.devices[].name]' "$tmp/devices.json")
run 60 "$ws" devices --json; one=$(jq -c '[.devices[].name]' "$out")  # the commands run on one device below
run 60 "$ws" devices --devices "$src/docs/profiles/paper-2015.json" --json
expect_meta worksize.devices/1
expect_jq '.source | endswith("paper-2015.json")' "devices of a profile: the source is the file"

# plan: size is the requested problem size, global the NDRange, device the index.
run 60 "${two[@]}" "$ws" plan --kernel matmul --size 256 --json; expect_rc 0 "plan matmul 256 --json"
expect_meta worksize.plan/1
expect_jq '.size == [256, 256] and .global == [256, 64]' "plan: size [256, 256], global the NDRange [256, 64]"
expect_jq_args --argjson names "$names" '[.assignments[].device] == [0, 1] and [.assignments[].device_name] == $names' \
  "plan: device is the integer index, device_name the name devices --json lists there"
run 60 "$ws" plan --kernel sort --size 1000 --devices "$src/docs/profiles/paper-2015.json" --json
expect_meta worksize.plan/1
expect_jq '.size == [1000, 1] and ([.assignments[].device] == [0, 1, 2])' "offline plan of a 1-D kernel: size [1000, 1], devices 0, 1, 2"

# run: the same fields as plan.
run 120 "${two[@]}" "$ws" run matmul --size 48 --strategy even --json; expect_rc 0 "run matmul 48 --json"
expect_meta worksize.run/1
expect_jq '.size == [48, 48] and .global == [48, 12] and .verified == true' "run: size [48, 48], global [48, 12]"
expect_jq_args --argjson names "$names" '[.devices[].device] == [0, 1] and [.devices[].device_name] == $names and
  ([.devices[] | has("device_index")] | any | not)' "run: device is the integer index, device_name the name"

# One default --size: plan, run and bench without --size plan the same problem.
run 60 "$ws" plan --kernel matmul --json; plan_size=$(jq -c .size "$out")
run 120 "$ws" run matmul --json; run_size=$(jq -c .size "$out")
run 60 "$ws" plan --kernel sort --json; plan_sort=$(jq -c .size "$out")
if [ "$plan_size" = "[512,512]" ] && [ "$run_size" = "$plan_size" ] && [ "$plan_sort" = "[512,1]" ]; then
  ok "plan and run share the default size 512 ($plan_size, sort $plan_sort)"
else bad "default sizes: plan $plan_size, run $run_size, plan sort $plan_sort"; fi

# run --paper-experiment --json: the document is stamped, its runs keep the run fields.
run 600 "$ws" run --paper-experiment --repeat-scale 0.0001 --json; expect_rc 0 "run --paper-experiment --json"
expect_meta worksize.paper-experiment/1
expect_jq '[.kernels[] | .paper.size == (if .kernel == "matmul" or .kernel == "interp" then [1024, 1024] else [262144, 1] end)
  and (.paper.devices[0].device == 0)] | all' "paper experiment: each run's size is the paper's problem size"

# calibrate: --json and --runs-csv.
run 300 "$ws" calibrate --kernel sort --sizes 1024,4096 --min-repeats 1 --max-repeats 1 --db "$tmp/db.json" \
  --json --runs-csv "$tmp/runs.csv"
expect_rc 0 "calibrate --json --runs-csv"
expect_meta worksize.calibrate/1
expect_jq_args --argjson names "$one" '.kernels[0].devices[0] | .device == 0 and .device_name == $names[0] and (has("name") | not)' \
  "calibrate: device the index, device_name the name"
expect_csv "$tmp/runs.csv" worksize.calibrate-runs/1
if [ "$(csv_column "$tmp/runs.csv" device | sort -u)" = 0 ]; then ok "runs CSV: device is the index"; else bad "runs CSV devices: $(csv_column "$tmp/runs.csv" device | sort -u)"; fi

# tune --report: --json and --heatmap-csv.
run 300 "$ws" tune --report --json --kernel sort --size 256 --db "$tmp/tune.json" --heatmap-csv "$tmp/heat.csv" "${fast[@]}"
expect_rc 0 "tune --report --json --heatmap-csv"
expect_meta worksize.tune-report/1
expect_jq_args --argjson names "$one" '.results[0] | .device == 0 and .device_name == $names[0] and .size == [256, 1] and
  .global == [256, 1] and (has("device_index") | not)' "tune report: device the index, size the problem size, global"
expect_csv "$tmp/heat.csv" worksize.tune-heatmap/1
if head -1 "$tmp/heat.csv" | grep -q '^kernel,device,device_name,x,y,ms,' &&
   [ "$(csv_column "$tmp/heat.csv" device | sort -u)" = 0 ]; then ok "heat-map CSV: device is the index, device_name the name"
else bad "heat-map CSV: $(head -2 "$tmp/heat.csv")"; fi

# bench (default size): --csv, its -sweep file and --phases-csv.
run 300 "$ws" bench --kernel sort --strategies even,oracle --repeats 1 --csv "$tmp/b.csv" --sweep --phases-csv "$tmp/p.csv"
expect_rc 0 "bench --csv --sweep --phases-csv"
expect_csv "$tmp/b.csv" worksize.bench/1
expect_csv "$tmp/b-sweep.csv" worksize.bench-sweep/1
expect_csv "$tmp/p.csv" worksize.bench-phases/1
if [ "$(csv_column "$tmp/b.csv" size | sort -u)" = 512 ]; then ok "bench: the default size is 512, as in plan and run"
else bad "bench size: $(csv_column "$tmp/b.csv" size | sort -u)"; fi
if [ "$(csv_column "$tmp/p.csv" device | sort -u)" = 0 ]; then ok "phases CSV: device is the index"; else bad "phases CSV devices"; fi
# --append: rows of a second run keep their own provenance, under the one header.
run 300 "$ws" bench --kernel sort --strategies even --repeats 1 --csv "$tmp/b.csv" --append
expect_rc 0 "bench --append"
if [ "$(grep -c ',schema,tool_version,host,date$' "$tmp/b.csv")" = 1 ]; then expect_csv "$tmp/b.csv" worksize.bench/1
else bad "bench --append: $(cat "$tmp/b.csv")"; fi
finish
