# Plots of `worksize bench` CSVs (docs/bench.md §5). Run through docs/plot_bench.sh, which cuts
# one kernel and size out of the CSVs and writes the variables below into a file it loads first.
#   mode       "sweep": makespan against the smaller device's share (the paper's Figures 2-4):
#              the oracle's scan as a line, each strategy's choice as its own marker with a q1-q3
#              bar; "pred": predicted against measured makespan, colour per strategy, marker per
#              kernel and size, with the +-15 % band.
#   sweepfile  (sweep) "share_% makespan_ms", one line per split of the oracle's scan
#   pointfile  (sweep) "index share_% makespan_ms q1_ms q3_ms", one line per strategy;
#              (pred) "measured_ms predicted_ms q1_ms q3_ms strategy_index combo_index"
#   n, stitle[], scolour[], spt[], sps[] (sweep) strategies: legend text, colour, point type, size
#   ns, sname[], scolour[], sps[], nc, cname[], cpt[]   (pred) strategies (name, colour, marker
#              size: nested where their points coincide; sord[]: largest first) and kernel-size
#              markers
#   quartiles (1: draw the q1-q3 bars), logy, ylo, yhi (sweep: a log y axis over that range),
#   havesweep (sweep: 0 = no scan),
#   zoom, zx0, zx1, zy0, zy1 (sweep: a zoom panel of that range), outfile, titletext, subtext
# Colours: Okabe-Ito (colour-blind safe); markers differ in shape as well, so grey print works.
if (!exists("mode")) mode = "sweep"
if (!exists("outfile")) outfile = "bench.png"
if (!exists("titletext")) titletext = "worksize bench"
if (!exists("subtext")) subtext = ""
if (!exists("quartiles")) quartiles = 0
if (!exists("logy")) logy = 0
if (!exists("zoom")) zoom = 0
if (!exists("havesweep")) havesweep = 1
set grid lc rgb "#d9d9d9" lw 1
set tics out nomirror
set border 3
set bars 1.5
# Ticks of a log axis (ax = "x" or "y") over [lo, hi]: 1-2-5, or denser or sparser by the
# range, so that a log axis never shows a single labelled decade.
logmant(lo, hi) = log10(hi / lo) <= 1.2 ? "1 1.5 2 3 5 7" : log10(hi / lo) <= 2 ? "1 2 5" : log10(hi / lo) <= 3.2 ? "1 3" : "1"
logtics = 'eval sprintf("set %stics ()", ax); do for [k = floor(log10(tlo)) : ceil(log10(thi))] { do for [m in logmant(tlo, thi)] { v = real(m) * 10.0**k; if (v >= tlo * 0.999 && v <= thi * 1.001) { eval sprintf("set %stics add (\"%g\" %.10g)", ax, v, v) } } }'
if (mode eq "sweep") {
    # Fixed layout: the main panel, and to its right a zoom panel when plot_bench.sh found
    # two or more splits crowded together; the legend under the main panel.
    set terminal pngcairo size (zoom ? 1300 : 1000),700 noenhanced font "Sans,13" linewidth 1.2
    set output outfile
    W = zoom ? 1300.0 : 1000.0
    set multiplot title titletext."\n".subtext font "Sans,13"
    set lmargin at screen 105 / W
    set rmargin at screen (zoom ? 800 : 975) / W
    set tmargin at screen 0.88
    set bmargin at screen 0.30
    set key at screen 105 / W, 0.17 left top Left reverse vertical maxrows 3 width 2 samplen 1.5 spacing 1.25
    set xlabel "share of the smaller device (%)"
    set ylabel (logy ? "makespan (ms, log scale)" : "makespan (ms)")
    set xrange [-2:102]
    if (logy) { set logscale y; ax = "y"; tlo = ylo / 1.15; thi = yhi * 1.15; set yrange [tlo:thi]; eval logtics } else { set yrange [0:*] }
    # The zoom panel's range, outlined on the main panel.
    if (zoom) { set object 2 rectangle from zx0, zy0 to zx1, zy1 front fs empty border lc rgb "#7f7f7f" dt 2 lw 1.5 }
    plot sweepfile using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#4d4d4d" title (havesweep ? "oracle scan" : ""), \
         for [i=1:n] pointfile using 2:($1 == i && quartiles ? $3 : NaN):4:5 with yerrorbars lw 2 pt 0 ps 0 lc rgb scolour[i] notitle, \
         for [i=1:n] pointfile using 2:($1 == i ? $3 : NaN) with points lw 2.5 pt spt[i] ps sps[i] lc rgb scolour[i] title stitle[i]
    if (zoom) {
        unset key
        unset object 2
        unset logscale y
        set ytics autofreq
        set lmargin at screen 915 / W
        set rmargin at screen 1270 / W
        set xrange [zx0:zx1]
        set yrange [zy0:zy1]
        set xlabel "share (%), zoom"
        set ylabel "makespan (ms)"
        set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fc rgb "#f7f7f7" fs solid noborder
        plot sweepfile using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb "#4d4d4d" notitle, \
             for [i=1:n] pointfile using 2:($1 == i && quartiles ? $3 : NaN):4:5 with yerrorbars lw 2 pt 0 ps 0 lc rgb scolour[i] notitle, \
             for [i=1:n] pointfile using 2:($1 == i ? $3 : NaN) with points lw 2.5 pt spt[i] ps sps[i] lc rgb scolour[i] notitle
    }
    unset multiplot
} else {
    set terminal pngcairo size 1000,700 noenhanced font "Sans,13" linewidth 1.2
    set output outfile
    set title titletext."\n".subtext font "Sans,13"
    set xlabel "measured makespan (ms, log scale)"
    set ylabel "predicted makespan (ms, log scale)"
    set logscale xy
    set size ratio -1
    set key outside right top vertical Left reverse width 1 maxrows 20
    stats pointfile using 1:2 nooutput
    lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.6
    hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.6
    set xrange [lo:hi]
    set yrange [lo:hi]
    tlo = lo; thi = hi
    ax = "x"; eval logtics
    ax = "y"; eval logtics
    plot x with lines lc rgb "#4d4d4d" dt 2 lw 1.5 title "predicted = measured", \
         1.15*x with lines lc rgb "#a6a6a6" dt 3 lw 1.5 title "±15 %", \
         0.85*x with lines lc rgb "#a6a6a6" dt 3 lw 1.5 notitle, \
         for [s=1:ns] pointfile using 1:($5 == s && quartiles ? $2 : NaN):3:4 with xerrorbars lw 1.5 pt 0 ps 0 lc rgb scolour[s] notitle, \
         for [c=1:nc] for [j=1:ns] pointfile using 1:($5 == sord[j] && $6 == c ? $2 : NaN) with points lw 2 pt cpt[c] ps sps[sord[j]] lc rgb scolour[sord[j]] notitle, \
         for [s=1:ns] keyentry with points pt 5 ps 2 lc rgb scolour[s] title sname[s], \
         for [c=1:nc] keyentry with points lw 2 pt cpt[c] ps 2 lc rgb "black" title cname[c]
}
