#!/usr/bin/env bash
# PNGs from `worksize bench --csv F [--sweep] [--append]` (docs/bench.md):
#   docs/plot_bench.sh F [OUTDIR]
# For each kernel/size/iterations in F: OUTDIR/bench-KERNEL-SIZE-xITER.png, makespan against the
# smaller device's share (the oracle's scan from F's -sweep CSV, each strategy's choice marked;
# the paper's Figures 2-4); and OUTDIR/bench-predicted.png, predicted against measured makespan
# for every row with a prediction. Needs gnuplot with the pngcairo terminal.
set -euo pipefail
csv=${1:?usage: plot_bench.sh CSV [OUTDIR]}
outdir=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
[ -s "$csv" ] || { echo "plot_bench.sh: '$csv' is missing or empty" >&2; exit 2; }
case "$csv" in */*.*|[!/]*.*) sweep="${csv%.*}-sweep.${csv##*.}";; *) sweep="$csv-sweep";; esac
mkdir -p "$outdir"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Columns of the main CSV by name (the share columns vary with the device count).
col() { head -1 "$csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
ck=$(col kernel); cs=$(col size); ci=$(col iterations); cst=$(col strategy); cm=$(col makespan_s)
cp=$(col predicted_s); csh=$(col small_share)
for key in $(awk -F, -v a="$ck" -v b="$cs" -v c="$ci" 'NR > 1 { print $a ":" $b ":" $c }' "$csv" | sort -u); do
  IFS=: read -r kernel size iters <<<"$key"
  awk -F, -v a="$ck" -v b="$cs" -v c="$ci" -v k="$kernel" -v s="$size" -v i="$iters" -v x="$csh" -v m="$cm" -v n="$cst" \
    'NR > 1 && $a == k && $b == s && $c == i { print $x, $m, $n }' "$csv" >"$tmp/points"
  : >"$tmp/sweep"
  if [ -s "$sweep" ]; then
    awk -F, -v k="$kernel" -v s="$size" -v i="$iters" 'NR > 1 && $1 == k && $2 == s && $3 == i { print $4, $5 }' \
      "$sweep" | sort -g >"$tmp/sweep"
  fi
  [ -s "$tmp/sweep" ] || echo "NaN NaN" >"$tmp/sweep"
  png="$outdir/bench-$kernel-$size-x$iters.png"
  gnuplot -e "mode='sweep'; sweepfile='$tmp/sweep'; pointfile='$tmp/points'; outfile='$png'; titletext='$kernel, size $size, $iters iteration(s): makespan against the smaller device share'" \
    "$here/plot_bench.gnuplot"
  echo "$png"
done
awk -F, -v p="$cp" -v m="$cm" -v n="$cst" -v k="$ck" -v s="$cs" 'NR > 1 && $p != "" { print $m, $p, $k "-" $s "-" $n }' \
  "$csv" >"$tmp/pred"
if [ -s "$tmp/pred" ]; then
  png="$outdir/bench-predicted.png"
  gnuplot -e "mode='pred'; pointfile='$tmp/pred'; outfile='$png'; titletext='predicted against measured makespan'" \
    "$here/plot_bench.gnuplot"
  echo "$png"
fi
