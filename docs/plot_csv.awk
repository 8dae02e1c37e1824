# CSV helpers for docs/plot_bench.sh and docs/plot_heatmap.sh (awk -f docs/plot_csv.awk -f ...).
# Columns are found by name in the header, never by position: worksize appends columns at the end
# of its CSVs as they grow, and older files lack the newer ones.
#
# csv_split(line, f): the fields of one CSV line into f[1..n], returns n. A quoted field may hold
# commas; "" inside quotes is one quote; a trailing CR is dropped.
function csv_split(line, f,    n, i, len, c, q, s) {
    sub(/\r$/, "", line)
    n = 0; s = ""; q = 0; len = length(line)
    for (i = 1; i <= len; i++) {
        c = substr(line, i, 1)
        if (q) {
            if (c != "\"") s = s c
            else if (substr(line, i + 1, 1) == "\"") { s = s c; i++ }
            else q = 0
        } else if (c == "\"") q = 1
        else if (c == ",") { f[++n] = s; s = "" }
        else s = s c
    }
    f[++n] = s
    return n
}
# csv_header(line, col): col[name] = index for each column of a header line; returns the count.
function csv_header(line, col,    h, n, i) {
    n = csv_split(line, h)
    for (i = 1; i <= n; i++) col[h[i]] = i
    return n
}
# csv_get(f, col, name): the field of that name, "" when the file has no such column.
function csv_get(f, col, name) { return (name in col) ? f[col[name]] : "" }
# is_num(s): s is a finite number (not empty, not NaN or inf).
function is_num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
