#!/usr/bin/env bash
# PNGs from `worksize bench --csv F [--sweep] [--append]` (docs/bench.md §5):
#   docs/plot_bench.sh F [OUTDIR]
# For each kernel/size/iterations in F: OUTDIR/bench-KERNEL-SIZE-xITER.png, makespan against the
# smaller device's share (the oracle's scan from F's -sweep CSV as a line, each strategy's choice
# as its own marker with its q1-q3 bar; the paper's Figures 2-4); and OUTDIR/bench-predicted.png,
# predicted against measured makespan for every row with a prediction (colour: strategy, marker:
# kernel and size). Columns are read by name; a CSV without the quartile columns still plots (no
# bars, said in the subtitle). Prints one line per PNG: its path and what it shows. Needs gnuplot
# with the pngcairo terminal. Errors: one line, exit 2 (bad input) or 1 (no gnuplot, gnuplot failed).
set -euo pipefail
me=plot_bench.sh
die() { echo "$me: error: $*" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: plot_bench.sh CSV [OUTDIR]"
csv=$1
outdir=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$csv" ] && [ -s "$csv" ] || die "'$csv' is missing or empty"
command -v gnuplot >/dev/null || { echo "$me: error: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)" >&2; exit 1; }
case "$csv" in */*.*|[!/]*.*) sweep="${csv%.*}-sweep.${csv##*.}";; *) sweep="$csv-sweep";; esac
mkdir -p "$outdir" 2>/dev/null || die "cannot create the output folder '$outdir'"
[ -w "$outdir" ] || die "cannot write to the output folder '$outdir'"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lib="$here/plot_csv.awk"

# 1. The rows, normalised: kernel size iterations strategy share makespan_s q1_s q3_s predicted_s
#    samples same_plan_as (NaN / - where the CSV has no value or no such column).
cat >"$tmp/norm.awk" <<'EOF'
NR == 1 {
    csv_header($0, col)
    split("kernel size iterations strategy makespan_s small_share", need, " ")
    for (i = 1; i <= 6; i++) if (!(need[i] in col)) { print "no column '" need[i] "'" > "/dev/stderr"; bad = 1; exit 2 }
    next
}
{
    csv_split($0, f)
    if (!is_num(csv_get(f, col, "makespan_s")) || !is_num(csv_get(f, col, "small_share"))) next
    q1 = csv_get(f, col, "makespan_q1_s"); q3 = csv_get(f, col, "makespan_q3_s"); p = csv_get(f, col, "predicted_s")
    n = csv_get(f, col, "samples"); same = csv_get(f, col, "same_plan_as")
    print f[col["kernel"]], f[col["size"]], f[col["iterations"]], f[col["strategy"]], f[col["small_share"]],
          f[col["makespan_s"]], (is_num(q1) ? q1 : "NaN"), (is_num(q3) ? q3 : "NaN"), (is_num(p) ? p : "NaN"),
          (is_num(n) ? n : "-"), (same == "" ? "-" : same)
}
EOF
awk -f "$lib" -f "$tmp/norm.awk" "$csv" >"$tmp/rows" 2>"$tmp/err" ||
  die "'$csv' is not a \`worksize bench --csv\` file: $(head -1 "$tmp/err")"
[ -s "$tmp/rows" ] || die "'$csv' has no row with a measured makespan"

# The sweep (oracle's scan), by name as well: kernel size iterations small_share makespan_s.
have_sweep=0
if [ -s "$sweep" ]; then
  cat >"$tmp/sweep.awk" <<'EOF'
NR == 1 { csv_header($0, col); if (!("small_share" in col) || !("makespan_s" in col)) exit 3; next }
{ csv_split($0, f); if (is_num(f[col["small_share"]]) && is_num(f[col["makespan_s"]]))
    print f[col["kernel"]], f[col["size"]], f[col["iterations"]], f[col["small_share"]], f[col["makespan_s"]] }
EOF
  if awk -f "$lib" -f "$tmp/sweep.awk" "$sweep" >"$tmp/sweeprows"; then have_sweep=1
  else echo "$me: warning: '$sweep' has no small_share/makespan_s columns: no oracle scan drawn" >&2; fi
fi

# Okabe-Ito colours and open markers of different shapes and sizes per strategy, so that
# strategies with the same split stay visible as nested shapes (the oracle's the largest) (gnuplot point types: 4 square, 6 circle,
# 8 triangle, 10 triangle down, 12 diamond, 14 pentagon).
style_fns=$(cat <<'EOF'
function style(s, i,    c, p) {
    ps = 2.8
    if (s == "even") { colr = "#E69F00"; pt = 4; ps = 3.1 }
    else if (s == "pe-ratio") { colr = "#56B4E9"; pt = 12 }
    else if (s == "paper") { colr = "#009E73"; pt = 8; ps = 2.9 }
    else if (s == "model") { colr = "#0072B2"; pt = 6; ps = 2.5 }
    else if (s == "oracle") { colr = "#D55E00"; pt = 14; ps = 3.5 }
    else { split("#CC79A7 #000000 #999999", c, " "); split("10 2 1", p, " "); colr = c[i % 3 + 1]; pt = p[i % 3 + 1] }
}
# q(s): a gnuplot single-quoted string.
function q(s) { gsub(/'/, "''", s); return "'" s "'" }
function ms(v) { v *= 1e3; return v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : v >= 1 ? sprintf("%.2f", v) : sprintf("%.3g", v) }
EOF
)

# 2. One figure per kernel/size/iterations.
for key in $(awk '{ print $1 ":" $2 ":" $3 }' "$tmp/rows" | awk '!seen[$0]++'); do
  IFS=: read -r kernel size iters <<<"$key"
  awk -v k="$kernel" -v s="$size" -v i="$iters" '$1 == k && $2 == s && $3 == i' "$tmp/rows" >"$tmp/sel"
  : >"$tmp/sweep"
  if [ "$have_sweep" = 1 ]; then
    awk -v k="$kernel" -v s="$size" -v i="$iters" '$1 == k && $2 == s && $3 == i { print $4 * 100, $5 * 1e3 }' \
      "$tmp/sweeprows" | sort -g >"$tmp/sweep"
  fi
  nsweep=$(wc -l <"$tmp/sweep")
  [ "$nsweep" -gt 0 ] || echo "NaN NaN" >"$tmp/sweep"
  # points: index share_% makespan_ms q1_ms q3_ms; vars: gnuplot arrays of titles and styles.
  awk -v sweepn="$nsweep" -v kernel="$kernel" -v size="$size" -v iters="$iters" -v pts="$tmp/points" "$style_fns"'
    { n++; style($4, n); printf "%d %.6g %.9g %s %s\n", n, $5 * 100, $6 * 1e3, ($7 == "NaN" ? "NaN" : $7 * 1e3), ($8 == "NaN" ? "NaN" : $8 * 1e3) > pts
      t = sprintf("%s: %.1f %%, %s ms", $4, $5 * 100, ms($6))
      if ($11 != "-") t = t " (plan of " $11 ")"
      title[n] = t; c[n] = colr; p[n] = pt; z[n] = ps; if ($7 != "NaN") nq++ }
    END {
      printf "n = %d; array stitle[%d]; array scolour[%d]; array spt[%d]; array sps[%d]\n", n, n, n, n, n
      for (i = 1; i <= n; i++) printf "stitle[%d] = %s; scolour[%d] = %s; spt[%d] = %d; sps[%d] = %g\n", i, q(title[i]), i, q(c[i]), i, p[i], i, z[i]
      sub_ = (sweepn > 0 ? "line: oracle scan, one run per split" : "no sweep CSV: no oracle scan")
      sub_ = sub_ "; marker: each strategy'"'"'s split and median" (nq > 0 ? ", bar: q1-q3 of its runs" : " (CSV without quartiles)")
      printf "titletext = %s\nsubtext = %s\n", q(kernel ", size " size ", " iters " iteration(s): makespan against the smaller device'"'"'s share"), q(sub_)
      printf "quartiles = %d\n", (nq > 0)
    }' "$tmp/sel" >"$tmp/vars.gp"
  # Log scale where the makespans span more than 20x (the scan's ends against the best split).
  num='$2 ~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/'
  logy=$(awk "$num"' && $2 > 0 { if (lo == "" || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
              END { printf "logy = %d; ylo = %.6g; yhi = %.6g\n", (lo > 0 && hi / lo > 20) ? 1 : 0, lo, hi }' \
         "$tmp/sweep" <(awk '{ print $2, $3; print $2, $4; print $2, $5 }' "$tmp/points"))
  echo "$logy; havesweep = $(( nsweep > 0 ))" >>"$tmp/vars.gp"
  # A zoom panel where two or more strategies' splits lie within 5 points of share (a GPU
  # beside a CPU gives the CPU a few per cent, and the markers would crowd at the left edge):
  # x around those splits, y around their markers and bars (the scan's line is clipped).
  awk '
    { n++; x[n] = $2; y[n] = $3; lo_[n] = ($4 ~ /^[0-9.eE+-]+$/) ? $4 : $3; hi_[n] = ($5 ~ /^[0-9.eE+-]+$/) ? $5 : $3 }
    END {
      best = 0
      for (i = 1; i <= n; i++) { c = 0; for (j = 1; j <= n; j++) if (x[j] >= x[i] && x[j] - x[i] <= 5) c++; if (c > best) { best = c; at = x[i] } }
      if (best < 2) { print "zoom = 0"; exit }
      x0 = at; x1 = at
      for (j = 1; j <= n; j++) if (x[j] >= at && x[j] - at <= 5) { if (x[j] > x1) x1 = x[j] }
      pad = (x1 - x0) * 0.15; if (pad < 0.5) pad = 0.5
      x0 -= pad; x1 += pad
      y0 = ""; y1 = ""
      for (j = 1; j <= n; j++) if (x[j] >= x0 && x[j] <= x1) { if (y0 == "" || lo_[j] < y0) y0 = lo_[j]; if (hi_[j] > y1) y1 = hi_[j] }
      d = (y1 - y0) * 0.15; if (d < y1 * 0.05) d = y1 * 0.05 + 1e-9
      printf "zoom = 1; zx0 = %.6g; zx1 = %.6g; zy0 = %.6g; zy1 = %.6g\n", x0, x1, y0 - d, y1 + d
    }' "$tmp/points" >>"$tmp/vars.gp"
  png="$outdir/bench-$kernel-$size-x$iters.png"
  gnuplot -e "mode='sweep'; sweepfile='$tmp/sweep'; pointfile='$tmp/points'; outfile='$png'; load '$tmp/vars.gp'" \
    "$here/plot_bench.gnuplot" 2>"$tmp/gp" || { echo "$me: error: gnuplot failed on $png: $(head -3 "$tmp/gp" | tr '\n' ' ')" >&2; exit 1; }
  echo "$png: $(wc -l <"$tmp/sel") strategies, oracle scan $( [ "$nsweep" -gt 0 ] && echo "$nsweep splits" || echo none), quartile bars $(grep -q '^quartiles = 1' "$tmp/vars.gp" && echo yes || echo no), zoom $(grep -q '^zoom = 1' "$tmp/vars.gp" && echo yes || echo no)"
done

# 3. Predicted against measured: colour per strategy, marker per kernel and size (open for a
#    kernel's smaller size, filled for its larger; distinct markers when a kernel has more sizes).
awk '$9 != "NaN"' "$tmp/rows" >"$tmp/predrows"
if [ -s "$tmp/predrows" ]; then
  png="$outdir/bench-predicted.png"
  awk -v pts="$tmp/pred" "$style_fns"'
    { if (!($4 in sidx)) { sidx[$4] = ++ns; sname[ns] = $4 }
      if (!($1 in kidx)) { kidx[$1] = ++nk; kname[nk] = $1 }
      c = $1 " " $2; if (!(c in cidx)) { cidx[c] = ++nc; ck[nc] = kidx[$1]; cs[nc] = $2 + 0; ct[nc] = $1 " " $2 }
      row[NR] = $0 }
    END {
      # Size rank within each kernel.
      for (i = 1; i <= nc; i++) { r = 1; for (j = 1; j <= nc; j++) if (ck[j] == ck[i] && cs[j] < cs[i]) r++; rank[i] = r; if (r > maxr) maxr = r }
      split("6 4 8 12 14 10", open_, " ")
      for (i = 1; i <= nc; i++) {
        if (maxr <= 2) cpt[i] = open_[(ck[i] - 1) % 6 + 1] + (rank[i] == 2)
        else cpt[i] = open_[int((i - 1) / 2) % 6 + 1] + (i - 1) % 2
      }
      # Legend order: by kernel (as first seen), then size.
      for (i = 1; i <= nc; i++) { o = 1; for (j = 1; j <= nc; j++) if (ck[j] < ck[i] || (ck[j] == ck[i] && cs[j] < cs[i])) o++; pos[i] = o }
      for (i = 1; i <= NR; i++) {
        split(row[i], f, " ")
        printf "%.9g %.9g %s %s %d %d\n", f[6] * 1e3, f[9] * 1e3, (f[7] == "NaN" ? "NaN" : f[7] * 1e3),
               (f[8] == "NaN" ? "NaN" : f[8] * 1e3), sidx[f[4]], pos[cidx[f[1] " " f[2]]] > pts
        if (f[7] != "NaN") nq++
      }
      printf "ns = %d; nc = %d; array sname[%d]; array scolour[%d]; array sps[%d]; array cname[%d]; array cpt[%d]\n", ns, nc, ns, ns, ns, nc, nc
      for (i = 1; i <= ns; i++) { style(sname[i], i); z[i] = ps; printf "sname[%d] = %s; scolour[%d] = %s; sps[%d] = %g\n", i, q(sname[i]), i, q(colr), i, ps * 0.8 }
      # Drawing order: the largest markers first, so that coinciding points stay visible.
      printf "array sord[%d]\n", ns
      for (i = 1; i <= ns; i++) { o = 1; for (j = 1; j <= ns; j++) if (z[j] > z[i] || (z[j] == z[i] && j < i)) o++; printf "sord[%d] = %d\n", o, i }
      for (i = 1; i <= nc; i++) printf "cname[%d] = %s; cpt[%d] = %d\n", pos[i], q(ct[i]), pos[i], cpt[i]
      printf "titletext = %s\n", q("predicted against measured makespan")
      printf "subtext = %s\n", q("colour: strategy; marker: kernel and size" (nq > 0 ? "; bar: q1-q3 of the measured runs" : " (CSV without quartiles)"))
      printf "quartiles = %d\n", (nq > 0)
    }' "$tmp/predrows" >"$tmp/vars.gp"
  gnuplot -e "mode='pred'; pointfile='$tmp/pred'; outfile='$png'; load '$tmp/vars.gp'" \
    "$here/plot_bench.gnuplot" 2>"$tmp/gp" || { echo "$me: error: gnuplot failed on $png: $(head -3 "$tmp/gp" | tr '\n' ' ')" >&2; exit 1; }
  echo "$png: $(wc -l <"$tmp/predrows") predicted rows"
fi
