# Heat map of local size (x, y) -> kernel time, like the paper's Tables 5-6.
# Input: a data file of "ix iy ms \"label\"" rows (ix, iy: indices of x and y among the values tried) as
# docs/plot_heatmap.sh writes it. Variables (gnuplot -e): datafile, outfile, titletext,
# xtics_spec, ytics_spec (gnuplot tic lists such as '("1" 0, "2" 1)').
if (!exists("datafile")) datafile = "heatmap.dat"
if (!exists("outfile")) outfile = "heatmap.png"
if (!exists("titletext")) titletext = "kernel time (ms) by work-group shape"
set terminal pngcairo size 900,700 noenhanced
set output outfile
set title titletext
set xlabel "local size x"
set ylabel "local size y"
if (exists("xtics_spec")) eval "set xtics ".xtics_spec
if (exists("ytics_spec")) eval "set ytics ".ytics_spec
set cblabel "ms (log scale)"
set logscale cb
set palette defined (0 "#1a9850", 1 "#fee08b", 2 "#d73027")
set tics out nomirror
set view map
set key off
# Failed / absent shapes are NaN and stay blank.
plot datafile using 1:2:3 with image, \
     datafile using 1:2:4 with labels font ",8"
