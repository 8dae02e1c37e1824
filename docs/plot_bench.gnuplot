# Plots of `worksize bench` CSVs (docs/bench.md). Run through docs/plot_bench.sh, which cuts one
# kernel and size out of the CSVs. Variables (gnuplot -e):
#   mode       "sweep": makespan against the smaller device's share (the paper's Figures 2-4): the
#              oracle's scan as a line, each strategy's choice as a labelled point;
#              "pred": predicted against measured makespan, one point per strategy and size.
#   sweepfile  data "small_share makespan_s" (mode sweep; may be empty)
#   pointfile  data "small_share makespan_s strategy" (mode sweep) or
#              "measured_s predicted_s label" (mode pred)
#   outfile, titletext
if (!exists("mode")) mode = "sweep"
if (!exists("outfile")) outfile = "bench.png"
if (!exists("titletext")) titletext = "worksize bench"
set terminal pngcairo size 900,600 noenhanced
set output outfile
set title titletext
set grid
set key top left
set tics out nomirror
if (mode eq "sweep") {
    set xlabel "share of the smaller device (%)"
    set ylabel "makespan (ms)"
    set xrange [-2:102]
    set yrange [0:*]
    plot sweepfile using ($1*100):($2*1e3) with linespoints lw 2 pt 7 ps 0.6 lc rgb "#4575b4" title "oracle scan", \
         pointfile using ($1*100):($2*1e3) with points pt 9 ps 2 lc rgb "#d73027" title "strategy's choice", \
         pointfile using ($1*100):($2*1e3):3 with labels offset 0,1.2 font ",9" notitle
} else {
    set xlabel "measured makespan (ms)"
    set ylabel "predicted makespan (ms)"
    set logscale xy
    set size square
    plot pointfile using ($1*1e3):($2*1e3) with points pt 7 ps 1.2 lc rgb "#4575b4" title "strategy / size", \
         pointfile using ($1*1e3):($2*1e3):3 with labels offset 0,0.8 font ",7" notitle, \
         x with lines lc rgb "#777777" dt 2 title "predicted = measured", \
         1.15*x with lines lc rgb "#bbbbbb" dt 3 title "+15 %", \
         0.85*x with lines lc rgb "#bbbbbb" dt 3 title "-15 %"
}
