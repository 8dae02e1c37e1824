#!/usr/bin/env bash
# docs/plot_bench.sh and docs/plot_heatmap.sh on the CSVs of tests/plots (no device): the PNGs
# are made and are real figures; the counts each script reports (strategies, scan splits,
# quartile bars; grid, candidates, failed and not-candidate cells, marks) match what the CSVs
# hold; CSVs without the newer columns (quartiles; marks and null_ms) still plot, without those
# parts, and a heat map's marks can come from the tune report instead; columns appended at the
# end are ignored; bad input is one line and exit 2. Exit 77 (skipped) without gnuplot's pngcairo.
src=$1
source "$src/tests/lib.sh"
if ! command -v gnuplot >/dev/null || ! gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
  echo "SKIP: no gnuplot with the pngcairo terminal (scripts/setup.sh installs gnuplot-nox)"; exit 77
fi
fx=$src/tests/plots
bench=$src/docs/plot_bench.sh
heat=$src/docs/plot_heatmap.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT

# png_ok FILE MIN_W MIN_H: a PNG (signature) of at least that many pixels and 15 kB (a drawn
# figure: a 1000x700 frame with axes and nothing plotted is about 9 kB).
png_ok() {
  local sig dims w h
  [ -s "$1" ] || return 1
  sig=$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')
  [ "$sig" = 89504e470d0a1a0a ] || return 1
  dims=$(od -An -tu1 -j16 -N8 "$1" | tr -s ' ' | sed 's/^ //')
  set -- "$1" "$2" "$3" $dims
  w=$(( ($4 << 24) | ($5 << 16) | ($6 << 8) | $7 )); h=$(( ($8 << 24) | ($9 << 16) | (${10} << 8) | ${11} ))
  [ "$w" -ge "$2" ] && [ "$h" -ge "$3" ] && [ "$(wc -c <"$1")" -gt 15000 ]
}
expect_png() { # expect_png FILE MIN_W MIN_H DESCRIPTION
  if png_ok "$1" "$2" "$3"; then ok "$4"; else bad "$4: '$1' is not a PNG figure of at least $2x$3"; fi
}
# csv_drop IN OUT COL...: IN without the named columns (the older formats).
csv_drop() {
  local in=$1 outf=$2; shift 2
  awk -F, -v drop="$*" 'BEGIN { n = split(drop, d, " "); for (i = 1; i <= n; i++) gone[d[i]] = 1 }
    NR == 1 { for (i = 1; i <= NF; i++) skip[i] = ($i in gone) }
    { s = ""; for (i = 1; i <= NF; i++) if (!skip[i]) s = s (s == "" ? "" : ",") $i; print s }' "$in" >"$outf"
}
# csv_append IN OUT: IN with schema, tool_version, host and date appended to every row.
csv_append() {
  awk 'NR == 1 { print $0 ",schema,tool_version,host,date"; next } { print $0 ",worksize-x/1,0.0.0,vm,2026-11-24T00:00:00Z" }' "$1" >"$2"
}

# --- bench: the fixture (quartiles, a sweep) ------------------------------------------------
splits() { awk -F, -v k="$1" 'NR > 1 && $1 == k' "$fx/bench-sweep.csv" | wc -l; }
mm_splits=$(splits matmul); sort_splits=$(splits sort)
npred=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "predicted_s") p = i; next } $p != ""' "$fx/bench.csv" | wc -l)
run 120 bash "$bench" "$fx/bench.csv" "$tmp/b"
expect_rc 0 "plot_bench.sh on a bench CSV with quartiles and a sweep"
expect_out "^$tmp/b/bench-matmul-256-x1.png: 5 strategies, oracle scan $mm_splits splits, quartile bars yes" \
  "matmul 256: five strategies, the sweep's $mm_splits splits, quartile bars"
expect_out "^$tmp/b/bench-sort-65536-x1.png: 5 strategies, oracle scan $sort_splits splits, quartile bars yes" \
  "sort 65536: five strategies, the sweep's $sort_splits splits, quartile bars"
expect_out "^$tmp/b/bench-predicted.png: $npred predicted rows" "predicted plot of the $npred rows with a prediction"
for f in bench-matmul-256-x1 bench-sort-65536-x1 bench-predicted; do
  expect_png "$tmp/b/$f.png" 900 600 "$f.png is a figure"
done

# Before same_plan_as, samples and the quartiles (docs/results up to issue 4): no bars, no error.
csv_drop "$fx/bench.csv" "$tmp/old.csv" same_plan_as samples makespan_q1_s makespan_q3_s
cp "$fx/bench-sweep.csv" "$tmp/old-sweep.csv"
run 120 bash "$bench" "$tmp/old.csv" "$tmp/o"
expect_rc 0 "plot_bench.sh on a CSV without quartile columns"
expect_out "bench-matmul-256-x1.png: 5 strategies, oracle scan $mm_splits splits, quartile bars no" "old CSV: plotted, no quartile bars"
expect_png "$tmp/o/bench-matmul-256-x1.png" 900 600 "old CSV: bench-matmul-256-x1.png is a figure"
expect_png "$tmp/o/bench-predicted.png" 900 600 "old CSV: bench-predicted.png is a figure"

# Columns appended at the end (schema, version, host, date) change nothing; no sweep file: no scan.
csv_append "$fx/bench.csv" "$tmp/wide.csv"
run 120 bash "$bench" "$tmp/wide.csv" "$tmp/w"
expect_rc 0 "plot_bench.sh on a CSV with columns appended"
expect_out "bench-sort-65536-x1.png: 5 strategies, oracle scan none, quartile bars yes" "appended columns ignored; no sweep file, no scan"

run 30 bash "$bench" "$tmp/missing.csv" "$tmp/x"
expect_fail_line 2 "^plot_bench.sh: error: '.*missing.csv' is missing or empty$" "missing bench CSV: one line, exit 2"
run 30 bash "$bench" "$fx/heatmap.csv" "$tmp/x"
expect_fail_line 2 "^plot_bench.sh: error: .* is not a .worksize bench --csv. file: no column 'size'$" \
  "a heat-map CSV given to plot_bench.sh: one line naming the missing column, exit 2"

# --- heat map: the fixture (marks, null_ms, failed and not-candidate cells) ------------------
# What the CSV holds, counted here: matmul on device 0 (7 x values, 5 y values).
read -r nx ny rows nfail < <(awk -F, 'NR > 1 { x[$4]; y[$5]; n++; if ($6 == "NaN") f++ }
  END { nx = 0; ny = 0; for (i in x) nx++; for (j in y) ny++; print nx, ny, n, f + 0 }' "$fx/heatmap.csv")
ninv=$(( nx * ny - rows ))
# The same counts from the tune report's own fields.
if [ "$(jq -r '.results[0] | "\(.candidates) \(.failed)"' "$fx/report.json")" = "$rows $nfail" ]; then
  ok "fixture: the CSV's rows and NaNs are the report's candidates and failures ($rows, $nfail)"
else bad "fixture: CSV rows/NaNs differ from report.json's candidates/failed"; fi
[ "$nfail" -gt 0 ] && [ "$ninv" -gt 0 ] && ok "fixture has failed ($nfail) and not-candidate ($ninv) cells" ||
  bad "fixture should have failed and not-candidate cells"

run 60 bash "$heat" "$fx/heatmap.csv" matmul 0 "$tmp/h.png"
expect_rc 0 "plot_heatmap.sh on a CSV with marks"
expect_out "^$tmp/h.png: ${nx}x$ny grid, $rows candidates, $nfail failed, $ninv not candidates; marks: 3 cells from the csv, NULL on the colour bar$" \
  "heat map: grid, failed and not-candidate cells counted apart; tuned, best, paper marked; NULL on the bar"
expect_png "$tmp/h.png" 900 400 "heat map PNG is a figure"

# Every time equal: all labels on one half of the colour scale, the other label file empty
# (gnuplot 5.4.4 crashed on it once; the fixture's times are spread over both halves).
awk -F, -v OFS=, 'NR > 1 && $6 != "" { $6 = "2.5" } { print }' "$fx/heatmap.csv" >"$tmp/heat-flat.csv"
run 60 bash "$heat" "$tmp/heat-flat.csv" matmul 0 "$tmp/h-flat.png"
expect_rc 0 "plot_heatmap.sh with every time equal (one label colour only)"
expect_png "$tmp/h-flat.png" 900 400 "equal times: the PNG is a figure"

csv_drop "$fx/heatmap.csv" "$tmp/heat-old.csv" marks null_ms
run 60 bash "$heat" "$tmp/heat-old.csv" matmul 0 "$tmp/h-old.png"
expect_rc 0 "plot_heatmap.sh on a CSV without marks and null_ms"
expect_out "^$tmp/h-old.png: ${nx}x$ny grid, $rows candidates, $nfail failed, $ninv not candidates; marks: none$" "old heat-map CSV: plotted without marks"
expect_png "$tmp/h-old.png" 900 400 "old heat-map CSV: the PNG is a figure"

run 60 bash "$heat" --report "$fx/report.json" "$tmp/heat-old.csv" matmul 0 "$tmp/h-rep.png"
expect_rc 0 "plot_heatmap.sh --report on a CSV without marks"
expect_out "marks: 3 cells from the report, NULL on the colour bar$" "old CSV + report: the marks and NULL from the report"
expect_png "$tmp/h-rep.png" 900 400 "old CSV + report: the PNG is a figure"

csv_append "$fx/heatmap.csv" "$tmp/heat-wide.csv"
run 60 bash "$heat" "$tmp/heat-wide.csv" matmul 0 "$tmp/h-wide.png"
expect_out "^$tmp/h-wide.png: ${nx}x$ny grid, $rows candidates, $nfail failed, $ninv not candidates; marks: 3 cells from the csv" \
  "heat map: columns appended at the end are ignored"

run 30 bash "$heat" "$fx/heatmap.csv" sort 0 "$tmp/x.png"
expect_fail_line 2 "^plot_heatmap.sh: error: no rows for kernel 'sort' on device 0 \(the CSV has: matmul on device 0\)" \
  "a kernel not in the CSV: one line naming what the CSV has, exit 2"
run 30 bash "$heat" "$fx/heatmap.csv" matmul first "$tmp/x.png"
expect_fail_line 2 "^plot_heatmap.sh: error: DEVICE_INDEX must be a device index" "a device index that is no number: exit 2"
run 30 bash "$heat" "$fx/heatmap.csv" matmul 0 "$tmp/no/such/dir/x.png"
expect_fail_line 2 "^plot_heatmap.sh: error: cannot write .*: '.*/no/such/dir' is not a writable folder$" "an output folder that does not exist: exit 2"
run 30 bash "$heat" --report "$tmp/none.json" "$tmp/heat-old.csv" matmul 0 "$tmp/x.png"
expect_fail_line 2 "^plot_heatmap.sh: error: report '.*none.json' is missing or empty$" "a missing report: exit 2"
run 30 bash "$heat" --report "$fx/heatmap.csv" "$tmp/heat-old.csv" matmul 0 "$tmp/x.png"
expect_fail_line 2 "^plot_heatmap.sh: error: report .* is not .worksize tune --report --json. output" "a report that is no JSON: exit 2"
finish
