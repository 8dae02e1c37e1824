#!/usr/bin/env bash
# A PNG heat map from `worksize tune --report --heatmap-csv F` (docs/tuning.md, "The report"):
#   docs/plot_heatmap.sh [--report REPORT.json] F KERNEL [DEVICE_INDEX] [OUT.png]
# One kernel on one device (default device 0): kernel time by local size (x, y), a viridis colour
# scale with several ticks, each cell labelled with its time; failed cells hatched grey, shapes
# that were no candidate plain light grey; the tuned (guided search), exhaustive-best and paper-rule cells
# marked, and NULL's time marked on the colour bar. The marks come from F's marks and null_ms
# columns; a CSV written before those columns plots without marks (said in the subtitle) unless
# --report gives the `tune --report --json` output of the same run to take them from. Prints one
# line: the PNG's path and what it shows. Needs gnuplot with the pngcairo terminal (and jq for
# --report). Errors: one line, exit 2 (bad input) or 1 (gnuplot or jq missing or failing).
set -euo pipefail
me=plot_heatmap.sh
usage="usage: plot_heatmap.sh [--report REPORT.json] CSV KERNEL [DEVICE_INDEX] [OUT.png]"
die() { echo "$me: error: $*" >&2; exit 2; }
report=""
if [ "${1:-}" = --report ]; then
  [ $# -ge 2 ] || die "$usage"
  report=$2; shift 2
fi
[ $# -ge 2 ] && [ $# -le 4 ] || die "$usage"
csv=$1; kernel=$2; dev=${3:-0}; png=${4:-heatmap-$kernel-dev$dev.png}
here=$(cd "$(dirname "$0")" && pwd)
[[ $dev =~ ^[0-9]+$ ]] || die "DEVICE_INDEX must be a device index (0, 1, ...), got '$dev'"
[ -f "$csv" ] && [ -s "$csv" ] || die "'$csv' is missing or empty"
[ -z "$report" ] || { [ -f "$report" ] && [ -s "$report" ]; } || die "report '$report' is missing or empty"
outdir=$(dirname "$png")
[ -d "$outdir" ] && [ -w "$outdir" ] || die "cannot write '$png': '$outdir' is not a writable folder"
command -v gnuplot >/dev/null || { echo "$me: error: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Marks from the report (used only when the CSV has no marks column): x,y of the tuned, best and
# paper local sizes and NULL's seconds.
rtuned=""; rbest=""; rpaper=""; rnull=""
if [ -n "$report" ]; then
  command -v jq >/dev/null || { echo "$me: error: --report needs jq (scripts/setup.sh installs it)" >&2; exit 1; }
  line=$(jq -r --arg k "$kernel" --argjson d "$dev" '
      [.results[]? | select(.kernel == $k and ((.device_index // .device) == $d))][0] // empty
      | [(.tuned_local // [] | map(tostring) | join(",")), (.exhaustive_best_local // [] | map(tostring) | join(",")),
         (.paper_local // [] | map(tostring) | join(",")), ((.null_s // "NaN") | tostring)] | @tsv' "$report" 2>"$tmp/jq") ||
    die "report '$report' is not \`worksize tune --report --json\` output: $(head -1 "$tmp/jq")"
  [ -n "$line" ] || die "report '$report' has no result for kernel '$kernel' on device $dev"
  IFS=$'\t' read -r rtuned rbest rpaper rnull <<<"$line"
fi

# The grid, the labels, the failed cells and the marks, and the gnuplot variables (vars.gp).
cat >"$tmp/grid.awk" <<'EOF'
function q(s) { gsub(/'/, "''", s); return "'" s "'" }
function sortnum(a, n,    i, j, v) { for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > v + 0; j--) a[j + 1] = a[j]; a[j + 1] = v } }
function fmtv(v) { return v >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v) }
function tr(v) { return cblog ? log(v) : v }
# Colour-bar ticks: the coarsest 1-3-10 style set with at least 4 ticks in [lo, hi] (log scale),
# else a 1-2-2.5-5 step (linear scale, or a log range too narrow for that).
function cbtics(lo, hi,    sets, ns, s, m, nm, k, t, n, out, step, e, b, i) {
    if (cblog) {
        ns = split("1|1 3|1 2 5|1 1.5 2 3 5 7|1 1.2 1.5 2 2.5 3 4 5 6 7 8 9", sets, "|")
        for (s = 1; s <= ns; s++) {
            nm = split(sets[s], m, " "); n = 0; out = ""
            for (k = int(log(lo) / log(10)) - 1; k <= int(log(hi) / log(10)) + 1; k++)
                for (i = 1; i <= nm; i++) { t = m[i] * 10 ^ k; if (t >= lo * 0.9999 && t <= hi * 1.0001) { out = out (n ? ", " : "") "\"" sprintf("%g", t) "\" " sprintf("%.10g", t); n++ } }
            if (n >= 4) return "(" out ")"
        }
    }
    step = (hi - lo) / 5; e = 10 ^ int(log(step) / log(10) - (step < 1)); b = step / e
    step = (b <= 1 ? 1 : b <= 2 ? 2 : b <= 2.5 ? 2.5 : b <= 5 ? 5 : 10) * e
    n = 0; out = ""
    for (t = step * int(lo / step + 0.9999); t <= hi * 1.0001; t += step) { out = out (n ? ", " : "") "\"" sprintf("%g", t) "\" " sprintf("%.10g", t); n++ }
    return "(" out ")"
}
NR == 1 {
    csv_header($0, col)
    if (!("kernel" in col) || !("x" in col) || !("y" in col) || !("ms" in col)) { print "no kernel, x, y and ms columns" > "/dev/stderr"; exit 4 }
    # The device's index and name: device_index and device, or (a newer vocabulary) device and
    # device_name.
    di = ("device_index" in col) ? "device_index" : "device"
    dn = ("device_index" in col) ? "device" : (("device_name" in col) ? "device_name" : "")
    if (!(di in col)) { print "no device_index column" > "/dev/stderr"; exit 4 }
    hasmarks = ("marks" in col); hasnull = ("null_ms" in col)
    next
}
{
    csv_split($0, f)
    seen[f[col["kernel"]] " on device " f[col[di]]] = 1
    if (f[col["kernel"]] != kernel || f[col[di]] != dev) next
    x = f[col["x"]]; y = f[col["y"]]; v = f[col["ms"]]
    if (!(x in xi)) { xi[x] = 1; xs[++nx] = x }
    if (!(y in yi)) { yi[y] = 1; ys[++ny] = y }
    t[x "," y] = is_num(v) ? v + 0 : "NaN"
    rows++
    if (dn != "" && name == "") name = f[col[dn]]
    if (hasmarks) { nm = split(f[col["marks"]], m, "+"); for (i = 1; i <= nm; i++) if (m[i] != "") mark[m[i]] = x "," y }
    if (hasnull && nullms == "") nullms = f[col["null_ms"]]
}
END {
    if (rows == 0) {
        out = ""; for (s in seen) out = out (out == "" ? "" : "; ") s
        print "no rows for kernel '" kernel "' on device " dev " (the CSV has: " (out == "" ? "no rows" : out) ")" > "/dev/stderr"; exit 3
    }
    if (!hasmarks && rep != "") {
        split(rep, r, "|"); mark["tuned"] = r[1]; mark["best"] = r[2]; mark["paper"] = r[3]
        nullms = is_num(r[4]) ? r[4] * 1e3 : "NaN"; marksrc = "report"
    } else marksrc = hasmarks ? "csv" : ""
    sortnum(xs, nx); sortnum(ys, ny)
    for (i = 1; i <= nx; i++) ix[xs[i]] = i - 1
    for (j = 1; j <= ny; j++) iy[ys[j]] = j - 1
    lo = ""; hi = ""; nfail = 0
    for (k in t) if (t[k] != "NaN") { if (lo == "" || t[k] < lo) lo = t[k]; if (t[k] > hi) hi = t[k] } else nfail++
    nullv = is_num(nullms) ? nullms + 0 : ""
    if (nullv != "") { if (lo == "" || nullv < lo) lo = nullv; if (nullv > hi) hi = nullv }
    if (lo == "") { lo = 1; hi = 10 }               # every candidate failed: an empty scale
    unit = "ms"; scale = 1
    if (lo < 0.1) { unit = "µs"; scale = 1000 }    # GPU times: 21.1 µs reads better than 0.0211
    lo *= scale; hi *= scale; if (nullv != "") nullv *= scale
    if (hi <= lo) { lo *= 0.95; hi *= 1.05 }
    cblog = (hi / lo >= 3)
    # A little room at both ends, so that a NULL line at an extreme stays on the bar.
    if (cblog) { lo /= 1.02; hi *= 1.02 } else { d = (hi - lo) * 0.02; lo -= d; hi += d }
    # The grid in scan order (y outer, x inner), NaN where a shape failed or was no candidate.
    for (j = 1; j <= ny; j++) for (i = 1; i <= nx; i++) {
        k = xs[i] "," ys[j]
        v = (k in t && t[k] != "NaN") ? t[k] * scale : "NaN"
        print i - 1, j - 1, v > gridf
        if (!(k in t)) print i - 1, j - 1 > invf
        else if (t[k] == "NaN") print i - 1, j - 1 > failf
        else if (k in t) {
            # White text on the dark half of viridis, black on the light half.
            fr = (tr(v) - tr(lo)) / (tr(hi) - tr(lo))
            print i - 1, j - 1, "\"" fmtv(v) "\"" > (fr < 0.5 ? darkf : lightf)
        }
    }
    # A row in every file (gnuplot refuses an empty one). The label files' row lies outside the
    # plot, not at NaN: gnuplot 5.4.4 segfaults on "with labels" when no row is a point (all the
    # times on one half of the colour scale left the other label file with only this row).
    print "NaN NaN" > failf; print "NaN NaN" > invf; print "-9 -9 \"\"" > darkf; print "-9 -9 \"\"" > lightf
    nmk = 0; desc = ""
    split("tuned best paper", kinds, " "); split("tuned|exhaustive best|paper", kname, "|")
    for (i = 1; i <= 3; i++) {
        kd = kinds[i]
        if (!(kd in mark) || mark[kd] == "") continue
        split(mark[kd], xy, ","); if (xy[2] == "") xy[2] = 1
        if ((xy[1] in ix) && (xy[2] in iy) && ((xy[1] "," xy[2]) in t)) {
            print i, ix[xy[1]], iy[xy[2]] > markf; nmk++
            desc = desc (desc == "" ? "" : ", ") kname[i] " (" xy[1] "," xy[2] ")"
        } else desc = desc (desc == "" ? "" : ", ") kname[i] " (" xy[1] "," xy[2] ") not in the grid"
    }
    print "0 NaN NaN" > markf
    ncand = rows; ninv = nx * ny - rows
    if (marksrc == "") sub_ = "no marks: this CSV has no marks and null_ms columns (pass --report)\\n"
    else sub_ = desc (nullv != "" ? ", NULL " fmtv(nullv) " " unit : ", NULL failed") "\\n"
    sub_ = sub_ ncand " candidates, " nfail " failed" (marksrc == "report" ? "; marks from the tune report" : "")
    # Layout in pixels: cells of at least 64 x 44, a canvas of at least 960 wide.
    L = 100; R = 215; T = 110; B = 150
    cw = 64; if (nx * cw < 960 - L - R) cw = int((960 - L - R) / nx); if (cw > 110) cw = 110
    ch = 44; if (ny <= 4) ch = 60
    # The colour bar is at least 240 px tall, top-aligned with the grid (below a one-row grid).
    gh = ny * ch; cbh = gh < 240 ? 240 : gh
    W = L + nx * cw + R; H = T + gh + B; if (H < T + cbh + 40) H = T + cbh + 40
    printf "nx = %d; ny = %d; W = %d; H = %d; L = %d; R = %d; T = %d; B = %d; cbh = %d\n", nx, ny, W, H, L, R, T, H - T - gh, cbh
    xt = ""; for (i = 1; i <= nx; i++) xt = xt (i > 1 ? ", " : "") "\"" xs[i] "\" " i - 1
    yt = ""; for (j = 1; j <= ny; j++) yt = yt (j > 1 ? ", " : "") "\"" ys[j] "\" " j - 1
    printf "xtics_spec = %s; ytics_spec = %s\n", q("(" xt ")"), q("(" yt ")")
    printf "cbmin = %.10g; cbmax = %.10g; cblog = %d; cbtics_spec = %s\n", lo, hi, cblog, q(cbtics(lo, hi))
    printf "nullv = %s; unit = %s; havemarks = %d\n", (nullv == "" ? "NaN" : sprintf("%.10g", nullv)), q(unit), (nmk > 0)
    printf "titletext = %s\n", q(kernel " on " (name == "" ? "device " dev : name " (device " dev ")") ": kernel time by local size")
    printf "subtext = %s\n", "\"" sub_ "\""
    printf "summary: %dx%d grid, %d candidates, %d failed, %d not candidates; marks: %s\n", nx, ny, ncand, nfail, ninv,
        (marksrc == "" ? "none" : nmk " cells from the " marksrc (nullv != "" ? ", NULL on the colour bar" : "")) > summf
}
EOF
awk -v kernel="$kernel" -v dev="$dev" -v rep="${report:+$rtuned|$rbest|$rpaper|$rnull}" \
    -v gridf="$tmp/grid" -v failf="$tmp/failed" -v invf="$tmp/invalid" -v darkf="$tmp/dark" -v lightf="$tmp/light" -v markf="$tmp/marks" \
    -v summf="$tmp/summary" -f "$here/plot_csv.awk" -f "$tmp/grid.awk" "$csv" >"$tmp/vars.gp" 2>"$tmp/err" ||
  die "$(head -1 "$tmp/err") in '$csv'"
gnuplot -e "gridfile='$tmp/grid'; failfile='$tmp/failed'; invfile='$tmp/invalid'; darkfile='$tmp/dark'; lightfile='$tmp/light'; markfile='$tmp/marks'; outfile='$png'; load '$tmp/vars.gp'" \
  "$here/plot_heatmap.gnuplot" 2>"$tmp/gp" || { echo "$me: error: gnuplot failed on $png: $(grep -v '^ *$' "$tmp/gp" | head -2 | tr '\n' ' ')" >&2; exit 1; }
echo "$png: $(sed 's/^summary: //' "$tmp/summary")"
