# Heat map of local size (x, y) -> kernel time, like the paper's Tables 5-6. Run through
# docs/plot_heatmap.sh, which writes the data files and a file of the variables below that it
# loads first:
#   gridfile   "ix iy time" for every cell of the nx x ny grid (NaN: failed or no candidate),
#              drawn as filled boxes (gnuplot's "with image" needs two rows and columns)
#   failfile   "ix iy" of the failed cells (drawn hatched grey)
#   invfile    "ix iy" of the shapes that were no candidate (x*y over the device's limit; plain
#              light grey)
#   darkfile, lightfile   "ix iy \"label\"" of the cells with a time, on the dark / light half
#   markfile   "kind ix iy": 1 tuned (guided search), 2 exhaustive best, 3 paper's rule
#   nx, ny, W, H, L, R, T, B   grid and canvas size, margins (pixels)
#   cbh        the colour bar's height (pixels; top-aligned with the grid)
#   xtics_spec, ytics_spec, cbtics_spec   gnuplot tic lists such as '("1" 0, "2" 1)'
#   cbmin, cbmax, cblog, unit  colour scale range, log (1) or linear, "ms" or "µs"
#   nullv      NULL's time in the same unit, marked on the colour bar (NaN: none or failed)
#   havemarks  0: no cell is marked (the legend leaves the marks out)
#   outfile, titletext, subtext
# Palette: viridis (sequential, colour-blind safe, monotone in lightness); marks: black shapes
# with a white rim, in a row above the cell's time, and the marked cell outlined.
if (!exists("outfile")) outfile = "heatmap.png"
if (!exists("subtext")) subtext = ""
if (!exists("havemarks")) havemarks = 1
set terminal pngcairo size W,H noenhanced font "Sans,12"
set output outfile
set title titletext."\n".subtext font "Sans,12"
set lmargin at screen L / real(W)
set rmargin at screen (W - R) / real(W)
set tmargin at screen (H - T) / real(H)
set bmargin at screen B / real(H)
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
eval "set xtics ".xtics_spec
eval "set ytics ".ytics_spec
set xtics out nomirror scale 0.5
set ytics out nomirror scale 0.5
set xlabel "local size x" offset 0,0.3
set ylabel "local size y"
set palette defined (0 "#440154", 1 "#472c7a", 2 "#3b518b", 3 "#2c718e", 4 "#21908d", 5 "#27ad81", 6 "#5cc863", 7 "#aadc32", 8 "#fde725")
set cbrange [cbmin:cbmax]
if (cblog) { set logscale cb }
eval "set cbtics ".cbtics_spec
set cbtics out nomirror
set mcbtics 1
set cblabel "kernel time (".unit.(cblog ? ", log scale)" : ")") offset 1,0
# The colour bar: 75 px right of the grid (room for the NULL label), 22 px wide, cbh tall.
cbx = (W - R + 75) / real(W)
cbw = 22 / real(W)
cby = (H - T - cbh) / real(H)
set colorbox user origin screen cbx, cby size screen cbw, cbh / real(H)
if (nullv == nullv) {
    tr(v) = cblog ? log(v) : v
    ny_ = cby + (tr(nullv) - tr(cbmin)) / (tr(cbmax) - tr(cbmin)) * cbh / real(H)
    set arrow 1 from screen cbx - 6 / real(W), ny_ to screen cbx + cbw + 6 / real(W), ny_ nohead lw 6 lc rgb "white" front
    set arrow 2 from screen cbx - 6 / real(W), ny_ to screen cbx + cbw + 6 / real(W), ny_ nohead lw 2.5 lc rgb "black" front
    set label 1 "NULL" at screen cbx - 9 / real(W), ny_ right front font "Sans,11"
}
set key at screen L / real(W), 58 / real(H) left center horizontal Left reverse samplen 1 spacing 1.2 width 1 maxrows 2 font "Sans,11"
# In each cell: its time a little below the centre, the marks in a row above it (tuned left,
# best in the middle, paper right), so that neither hides the other nor leaves the cell.
mx(k) = (k - 2) * 0.27
my(k) = 0.25
ly = -0.12
pts(k) = k == 1 ? 7 : k == 2 ? 9 : 5
plot gridfile using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder fc palette notitle, \
     invfile using 1:2:(0.5):(0.5) with boxxyerror fs solid 1.0 noborder fc rgb "#eeeeee" notitle, \
     failfile using 1:2:(0.5):(0.5) with boxxyerror fs solid 1.0 noborder fc rgb "#cfcfcf" notitle, \
     failfile using 1:2:(0.5):(0.5) with boxxyerror fs transparent pattern 4 noborder lc rgb "#525252" notitle, \
     darkfile using 1:($2 + ly):3 with labels tc rgb "white" font "Sans,9" notitle, \
     lightfile using 1:($2 + ly):3 with labels tc rgb "black" font "Sans,9" notitle, \
     markfile using 2:3:(0.46):(0.44) with boxxyerror fs empty lc rgb "black" lw 4 notitle, \
     markfile using 2:3:(0.46):(0.44) with boxxyerror fs empty lc rgb "white" lw 1.5 notitle, \
     for [k=1:3] markfile using ($1 == k ? $2 + mx(k) : NaN):($3 + my(k)) with points pt pts(k) ps 2.0 lc rgb "white" notitle, \
     for [k=1:3] markfile using ($1 == k ? $2 + mx(k) : NaN):($3 + my(k)) with points pt pts(k) ps 1.35 lc rgb "black" notitle, \
     keyentry with points pt 7 ps 1.5 lc rgb "black" title (havemarks ? "tuned (guided search)" : ""), \
     keyentry with points pt 9 ps 1.5 lc rgb "black" title (havemarks ? "exhaustive best" : ""), \
     keyentry with points pt 5 ps 1.5 lc rgb "black" title (havemarks ? "paper's rule" : ""), \
     keyentry with lines lw 2.5 lc rgb "black" title (nullv == nullv ? "NULL (on the colour bar)" : ""), \
     keyentry with boxes fs transparent pattern 4 lc rgb "#525252" title "failed", \
     keyentry with boxes fs solid 1.0 noborder fc rgb "#e4e4e4" title "not a candidate"
