#!/usr/bin/env bash
# Make a PNG heat map from `worksize tune --report --heatmap-csv F`:
#   docs/plot_heatmap.sh F KERNEL [DEVICE_INDEX] [OUT.png]
# One kernel on one device (default device 0); needs gnuplot with the pngcairo terminal.
set -euo pipefail
csv=${1:?usage: plot_heatmap.sh CSV KERNEL [DEVICE_INDEX] [OUT.png]}
kernel=${2:?usage: plot_heatmap.sh CSV KERNEL [DEVICE_INDEX] [OUT.png]}
dev=${3:-0}
png=${4:-heatmap-$kernel-dev$dev.png}
here=$(cd "$(dirname "$0")" && pwd)
dat=$(mktemp); trap 'rm -f "$dat"' EXIT
# CSV: kernel,device,"device_name",x,y,ms[,schema,tool_version,host,date] (device: the index; the
# name is quoted and has no commas; files before the schema: kernel,device_index,"device",x,y,ms).
rows=$(awk -F, -v k="$kernel" -v d="$dev" 'NR > 1 && $1 == k && $2 == d' "$csv")
[ -n "$rows" ] || { echo "plot_heatmap.sh: no rows for kernel '$kernel' on device $dev in $csv" >&2; exit 2; }
name=$(printf '%s\n' "$rows" | head -1 | awk -F, '{ gsub(/"/, "", $3); print $3 }')
xs=$(printf '%s\n' "$rows" | awk -F, '{ print $4 }' | sort -n -u)
ys=$(printf '%s\n' "$rows" | awk -F, '{ print $5 }' | sort -n -u)
tics() { awk 'BEGIN { s = "(" } { s = s (NR > 1 ? ", " : "") "\"" $1 "\" " NR - 1 } END { print s ")" }'; }
xt=$(printf '%s\n' "$xs" | tics); yt=$(printf '%s\n' "$ys" | tics)
# A full grid in scan order (y outer, x inner), NaN where a shape was no candidate or failed:
# gnuplot's "with image" needs every cell.
printf '%s\n' "$rows" | awk -F, -v xs="$(echo $xs)" -v ys="$(echo $ys)" '
  { t[$4 "," $5] = $6 }
  END { nx = split(xs, X, " "); ny = split(ys, Y, " ");
        for (j = 1; j <= ny; j++) for (i = 1; i <= nx; i++) {
          k = X[i] "," Y[j]; v = (k in t) ? t[k] : "NaN";
          print i - 1, j - 1, v, "\"" ((v == "NaN") ? "" : sprintf("%.3g", v)) "\"" } }' >"$dat"
gnuplot -e "datafile='$dat'; outfile='$png'; titletext='$kernel on $name: kernel time (ms) by local size'; xtics_spec='$xt'; ytics_spec='$yt'" \
  "$here/plot_heatmap.gnuplot"
echo "$png"
