#!/usr/bin/env bash
# Data jobs (runtime/data_job.hpp) end to end: the heat, filter2d and kmeans examples verify on
# one rank and on three PoCL ranks of 1, 2 and 1 compute units (every rank driving its device
# with --select all, and the default selection, where rank 0 drives none); the heat stencil's
# halo traffic per rank is exactly one row per neighbour and step; and every mistake of
# tests/data_errors.cpp ends the job on every rank with one line, exit 2, no hang; a rank that
# stops answering between steps (SIGSTOP), or hangs in the scatter, its steps or before the final
# gather (WORKSIZE_FAULT=hang-data:<phase>), is named by rank 0 with its host and device within
# --rank-timeout (2 s here) of its last sign of life, exit 1, no hang; a rank whose steps are
# slower than --rank-timeout is waited on by its neighbours (its signs of life) and verifies; the
# step log has its rows, setups and rank 0's input writes, and no write of an output.
# Args: worksize_example_heat worksize_example_filter2d worksize_example_kmeans
#       worksize_test_data_errors MPIEXEC [PART]
# PART: jobs (the examples and the wrong jobs), faults (the stopped and hung ranks) or all (the
# default); CTest runs the two parts as mpi.data_jobs and mpi.data_job_faults, side by side.
heat=$1; filter2d=$2; kmeans=$3; errors=$4; mpx=$5; part=${6:-all}
case "$part" in jobs|faults|all) ;; *) echo "data_jobs.sh: PART must be jobs, faults or all, not '$part'"; exit 2;; esac
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$0")/../lib.sh"

cus="1 2 1"  # PoCL compute units of ranks 0, 1 and 2 (mpmd_cmd in lib.sh)

# verify NAME BINARY "ARGS" SIZE: the example verifies on 1 rank, on 3 ranks with --select all
# (3 ranks run slices) and on 3 ranks with the default selection (ranks 1 and 2 run slices).
verify() {
  local name=$1 bin=$2 args=$3 size=$4
  # shellcheck disable=SC2086
  run 120 "$mpx" -n 1 "$bin" $args
  expect_rc 0 "$name on 1 rank"
  expect_out "^worksize,$name,$size,1 ranks,[0-9.e+-]+,verified$" "$name on 1 rank: verified"

  # shellcheck disable=SC2086
  mpmd_cmd "$mpx" "$bin" "$cus" $args --select all; run 120 "${MPMD[@]}"
  expect_rc 0 "$name on 3 ranks of $cus CUs, --select all"
  expect_out "^worksize,$name,$size,3 ranks,[0-9.e+-]+,verified$" "$name on 3 ranks, --select all: verified"
  if [ "$name" = heat ]; then heat_traffic; fi

  # shellcheck disable=SC2086
  mpmd_cmd "$mpx" "$bin" "$cus" $args; run 120 "${MPMD[@]}"
  expect_rc 0 "$name on 3 ranks of $cus CUs, default selection"
  expect_out "^worksize,$name,$size,2 ranks,[0-9.e+-]+,verified$" "$name on 3 ranks, default selection: verified on ranks 1 and 2"
  if grep -Eq '^  device [0-9]+ \(rank 0,' "$out"; then bad "$name, default selection: rank 0 drives a device"
  else ok "$name, default selection: rank 0 drives no device"; fi
}

# rank_line R FIRST MOST HALO: the report line of rank R says exactly these bytes per step.
rank_line() {
  local want="^  rank $1: steps [0-9.]+ ms, kernels [0-9.]+ ms, bytes sent to other ranks per step: first $2, at most $3; halo bytes per step \(to neighbours\) at most $4$"
  if grep -Eq -e "$want" "$out"; then ok "heat traffic of rank $1: first $2, at most $3, halo $4"
  else bad "heat traffic of rank $1: no line /$want/ in the report"; fi
}

# The heat stencil over 96 columns of floats, one slice per rank: after step 1 (which reads the
# halo rows scattered with the inputs) each slice sends its neighbours one row (384 bytes) each:
# ranks 0 and 2 one row, rank 1 two.
heat_traffic() {
  local row=$((96 * 4)) slices
  slices=$(grep -Ec '^  device [0-9]+ \(rank [0-2],' "$out")
  if [ "$slices" -eq 3 ] && [ "$(grep -Ec '^  rank [0-9]+: ' "$out")" -eq 3 ]; then ok "heat: 3 slices, 3 rank lines"
  else bad "heat: expected 3 slices (one per rank) and 3 rank lines in the report, got $slices slices"; fi
  rank_line 0 0 "$row" "$row"
  rank_line 1 0 $((2 * row)) $((2 * row))
  rank_line 2 0 "$row" "$row"
}

if [ "$part" != faults ]; then
verify heat "$heat" "96 90 200" 96x90x200
verify filter2d "$filter2d" "200 150 3" 200x150
verify kmeans "$kmeans" "5000 4 5 5" 5000x4-k5-i5

# k-means with its points made by each rank for its own slices (a split_generated buffer):
# verified on 3 unequal ranks; a --points that is neither rank0 nor local is one line, exit 2.
mpmd_cmd "$mpx" "$kmeans" "$cus" 5000 4 5 5 --points local --select all; run 120 "${MPMD[@]}"
expect_rc 0 "kmeans --points local on 3 ranks"
expect_out "^worksize,kmeans,5000x4-k5-i5,3 ranks,[0-9.e+-]+,verified$" "kmeans --points local on 3 ranks: verified"
run 60 "$mpx" -n 2 "$kmeans" 5000 4 5 5 --points nowhere --select all
expect_fail_line 2 "^kmeans: error: --points must be rank0 or local, not 'nowhere'$" "kmeans --points nowhere: one line, exit 2"

# A worker whose host runs ahead of its device is not taken for lost: filter2d's steps exchange
# nothing, so their 300 launches are enqueued at once and the one wait at the end lasts about
# a second; it beats beside it (with --rank-timeout 0.5 rank 0 once declared rank 1 lost there).
mpmd_cmd "$mpx" "$filter2d" "$cus" 400 400 300 --select all --rank-timeout 0.5; run 120 "${MPMD[@]}"
expect_rc 0 "filter2d 400x400, 300 steps, --rank-timeout 0.5: no worker taken for lost"
expect_out "^worksize,filter2d,400x400,3 ranks,[0-9.e+-]+,verified$" "filter2d, the host ahead of its devices: verified"

# Overlap (the engine's split launches): every halo message of rank 1 leaves 0.2 s late
# (WORKSIZE_FAULT=slow-link, a slow link), so whenever rank 1's rows reach rank 0, rank 0's
# interior launch of that step has finished: the exchange runs beside the compute. With
# --overlap off there is no interior launch to finish first. Both verify. --instructions prints
# the lists without running (each rank's interior launch between its boundary rows' reads and sends).
overlap_case() {
  local mode=$1 want=$2 RANK_ENV_1="WORKSIZE_FAULT=slow-link:0.2"
  mpmd_cmd "$mpx" "$heat" "1 1" 96 90 6 --select all --overlap "$mode"; run 120 "${MPMD[@]}"
  expect_rc 0 "heat on 2 ranks, slow link, --overlap $mode"
  expect_out "^worksize,heat,96x90x6,2 ranks,[0-9.e+-]+,verified$" "heat, slow link, --overlap $mode: verified"
  expect_out "^  overlap on rank 0: halo rows from other ranks arrived 5 times; of those checked \(the first 16 steps, then every 32nd\), $want beside an interior launch: 0 while it ran \(hidden\), $want after it had finished \(waited on the link\)$" \
    "heat, slow link, --overlap $mode: rank 0's interior finished first at $want of 5 arrivals"
}
overlap_case on 5
overlap_case off 0
# The scatter and the final gather in pieces (here of 1000 bytes: 2 rows of 384 bytes, so 23
# messages for the worker's slice of 45 rows and its halo row; 16 MiB by default): the result
# is whole.
WORKSIZE_PIECE_BYTES=1000 run 120 "$mpx" -n 2 "$heat" 96 90 6 --select all
expect_rc 0 "heat on 2 ranks, scattered and gathered in pieces of 2 rows"
expect_out "^worksize,heat,96x90x6,2 ranks,[0-9.e+-]+,verified$" "heat in pieces of 2 rows: verified"
expect_out "^  final gather from the other ranks: [0-9.]+ MiB in [0-9.]+ ms \([0-9.e+-]+ GB/s\)$" "heat in pieces: the final gather's rate from the other ranks"
# The gathers and the scatter are the engine's instruction lists (StepCompiler::compile_gather,
# compile_scatter): on 3 ranks in
# pieces of 1000 bytes (2 rows of 384 bytes), --instructions shows each worker's final gather as
# its status word, then its rows read and sent piece by piece, and rank 0 taking as many pieces
# of 768 bytes from it, straight into the job's memory; the same run verifies. k-means with
# rank 0 driving no device, in pieces of 40 bytes: the labels gathered from the two workers verify.
WORKSIZE_PIECE_BYTES=1000 run 120 "$mpx" -n 3 "$heat" 96 90 6 --select all --instructions
expect_rc 0 "heat --instructions on 3 ranks in pieces of 2 rows"
for r in 1 2; do
  gather=$(awk -v r="rank $r:" '$0 == r {on = 1; next} /^rank / {on = 0} on && /^  final gather/ {g = 1; next} on && /^  step/ {g = 0} on && g' "$out")
  sends=$(grep -Ec '^    [0-9]+: send t to rank 0 slice [0-9]+ rows \[[0-9]+, [0-9]+\) slot [0-2] 768 B after [0-9]+$' <<<"$gather")
  reads=$(grep -Ec '^    [0-9]+: read t slice [0-9]+ rows \[[0-9]+, [0-9]+\) slot [0-2] 768 B' <<<"$gather")
  recvs=$(grep -Ec "^    [0-9]+: recv t from rank $r rows \[[0-9]+, [0-9]+\) into host bytes \[[0-9]+, [0-9]+\) 768 B after" "$out")
  if [ "$(head -1 <<<"$gather")" = "    0: send status to rank 0" ] && [ "$sends" -ge 2 ] && [ "$sends" = "$reads" ] && [ "$sends" = "$recvs" ]; then
    ok "heat --instructions: rank $r's final gather is its status word and $sends pieces read and sent, rank 0 receives $recvs"
  else bad "heat --instructions: rank $r's final gather: $reads reads, $sends sends of 768 B, rank 0 receives $recvs"; fi
  # The scatter likewise: rank 0 sends the worker its rows (with their halo rows) in pieces from
  # the job's memory; the worker receives each into one of two slots and writes it onto its device.
  scatter=$(awk -v r="rank $r:" '$0 == r {on = 1; next} /^rank / {on = 0} on && /^  scatter:/ {g = 1; next} on && /^  step/ {g = 0} on && g' "$out")
  wrecvs=$(grep -Ec '^    [0-9]+: recv (t|power) from rank 0 rows \[[0-9]+, [0-9]+\) slot [01] [0-9]+ B' <<<"$scatter")
  writes=$(grep -Ec '^    [0-9]+: write (t|power) slice [0-9]+ rows \[[0-9]+, [0-9]+\) slot [01] [0-9]+ B after [0-9]+$' <<<"$scatter")
  rsends=$(grep -Ec "^    [0-9]+: send (t|power) to rank $r rows \[[0-9]+, [0-9]+\) from host bytes" "$out")
  if [ "$wrecvs" -ge 2 ] && [ "$wrecvs" = "$writes" ] && [ "$wrecvs" = "$rsends" ]; then
    ok "heat --instructions: rank 0 scatters $rsends pieces to rank $r, which receives and writes $writes"
  else bad "heat --instructions: the scatter to rank $r: rank 0 sends $rsends, it receives $wrecvs and writes $writes"; fi
done
WORKSIZE_PIECE_BYTES=1000 run 120 "$mpx" -n 3 "$heat" 96 90 6 --select all
expect_rc 0 "heat on 3 ranks, gathered in pieces of 2 rows"
expect_out "^worksize,heat,96x90x6,3 ranks,[0-9.e+-]+,verified$" "heat on 3 ranks, gathered in pieces of 2 rows: verified"
WORKSIZE_PIECE_BYTES=40 run 120 "$mpx" -n 3 "$kmeans" 5000 4 5 5
expect_rc 0 "kmeans on 3 ranks (rank 0 drives none), in pieces of 40 bytes"
expect_out "^worksize,kmeans,5000x4-k5-i5,2 ranks,[0-9.e+-]+,verified$" "kmeans from two workers in pieces of 40 bytes: verified"
# A worker driving two devices (PoCL's basic and pthread): each slice's pieces through its own
# slots, a shared input's pieces written onto both; k-means' shared output (its sums) sent by that
# worker when rank 0 drives none.
POCL_DEVICES="basic pthread" WORKSIZE_PIECE_BYTES=1000 run 120 "$mpx" -n 2 "$heat" 96 90 6 --select "0=0,1=0+1"
expect_out "^worksize,heat,96x90x6,2 ranks,[0-9.e+-]+,verified$" "heat, a worker driving two devices, pieces of 2 rows: verified"
POCL_DEVICES="basic pthread" WORKSIZE_PIECE_BYTES=40 run 120 "$mpx" -n 2 "$kmeans" 5000 4 5 5 --select "1=0+1"
expect_out "^worksize,kmeans,5000x4-k5-i5,1 ranks,[0-9.e+-]+,verified$" "kmeans, rank 0 without slices, a worker driving two devices: verified"
# A shared input in pieces too: k-means' 20 centres in pieces of 10 floats, its points in pieces
# of 2 points, uploaded by the worker as they arrive.
WORKSIZE_PIECE_BYTES=40 run 120 "$mpx" -n 2 "$kmeans" 5000 4 5 5 --select all
expect_rc 0 "kmeans on 2 ranks, scattered in pieces of 40 bytes"
expect_out "^worksize,kmeans,5000x4-k5-i5,2 ranks,[0-9.e+-]+,verified$" "kmeans in pieces of 40 bytes: verified"
# One rank driving two devices (PoCL's basic and pthread devices): rank 0 writes each device's
# inputs in a thread of its own and reads its outputs behind their last launches, a thread each;
# generated points are made in pieces of 2 points through two pinned halves.
POCL_DEVICES="basic pthread" run 120 "$heat" 96 90 6 --select 0=0+1
expect_rc 0 "heat in one rank driving two devices"
expect_out "^worksize,heat,96x90x6,1 ranks,[0-9.e+-]+,verified$" "heat in one rank driving two devices: verified"
POCL_DEVICES="basic pthread" WORKSIZE_PIECE_BYTES=40 run 120 "$kmeans" 5000 4 5 5 --select 0=0+1 --points local
expect_rc 0 "kmeans --points local in one rank driving two devices, made in pieces of 40 bytes"
expect_out "^worksize,kmeans,5000x4-k5-i5,1 ranks,[0-9.e+-]+,verified$" "kmeans --points local in pieces, two devices: verified"
# Its 1.6 MB of points in pinned memory (the example's default, Cluster::host_vector): each
# device's written straight from it; and in pageable memory.
for host in pinned pageable; do
  POCL_DEVICES="basic pthread" run 120 "$kmeans" 100000 4 5 5 --select 0=0+1 --host $host
  expect_rc 0 "kmeans in one rank driving two devices, points in $host memory"
  expect_out "^worksize,kmeans,100000x4-k5-i5,1 ranks,[0-9.e+-]+,verified$" "kmeans, two devices, $host points: verified"
  expect_err "^kmeans: 1.52588 MiB of points in $host memory" "kmeans: its points in $host memory"
done
# The pinned points written in pieces of 333 bytes (WORKSIZE_PINNED_WRITE_BYTES, an experiment).
POCL_DEVICES="basic pthread" WORKSIZE_PINNED_WRITE_BYTES=333 run 120 "$kmeans" 100000 4 5 5 --select 0=0+1
expect_rc 0 "kmeans, two devices, pinned points written in pieces of 333 bytes"
expect_out "^worksize,kmeans,100000x4-k5-i5,1 ranks,[0-9.e+-]+,verified$" "kmeans, pinned points in pieces: verified"
# The step log (WORKSIZE_STEP_LOG): a row per step of both runs (warm-up and measured), each run's
# setup lines, and one line per input rank 0 wrote onto each device, with its device times for
# the pinned points; k-means' labels, an output declared no_init, are not written at all.
steplog=$(mktemp)
POCL_DEVICES="basic pthread" WORKSIZE_STEP_LOG="$steplog" run 120 "$kmeans" 100000 4 5 5 --select 0=0+1
expect_rc 0 "kmeans, two devices, with a step log"
steps_logged=$(grep -Ec '^0,[0-9]+,[0-9.]+,[0-9.]+$' "$steplog")
points_lines=$(grep -Ec "^# rank 0's slice [01]: input 'points': [0-9]+ bytes pinned, host [0-9.]+-[0-9.]+ ms, device: queued [0-9.]+, start [0-9.]+, end [0-9.]+ ms$" "$steplog")
if [ "$steps_logged" -eq 10 ] && [ "$(grep -c '^# setup of rank 0: ' "$steplog")" -eq 2 ] && [ "$points_lines" -eq 4 ]; then
  ok "step log: 10 step rows, 2 setups, the points' 4 writes with device times"
else bad "step log: $steps_logged step rows (want 10), $points_lines points lines (want 4): $(head -c 2000 "$steplog")"; fi
if grep -q "input 'labels'" "$steplog"; then bad "step log: k-means' labels (no_init, an output) were written onto a device"
else ok "step log: k-means' labels, an output declared no_init, not written onto the devices"; fi
rm -f "$steplog"
# Rank 0's own inputs through two pinned halves (as onto a GPU; a CPU device takes them in one
# write), in pieces of 1000 bytes: 2 rows of heat, 62 points of k-means, a last piece shorter.
for app in heat kmeans; do
  args="96 90 6"; [ $app = kmeans ] && args="5000 4 5 5 --host pageable"
  # shellcheck disable=SC2086
  POCL_DEVICES="basic pthread" WORKSIZE_STAGED_UPLOADS=1 WORKSIZE_PIECE_BYTES=1000 run 120 "${!app}" $args --select 0=0+1
  expect_rc 0 "$app in one rank driving two devices, inputs staged in pieces"
  expect_out "^worksize,$app,[^,]+,1 ranks,[0-9.e+-]+,verified$" "$app with staged inputs in pieces: verified"
done
mpmd_cmd "$mpx" "$heat" "1 1" 96 90 6 --select all --instructions; run 120 "${MPMD[@]}"
expect_rc 0 "heat --instructions on 2 ranks"
expect_out "^rank 1:$" "--instructions lists rank 1's instructions"
expect_out "^    [0-9]+: launch heat_step slice 0 units \[44, 45\) bottom$" "rank 0 launches its bottom boundary row first"
expect_out "^    [0-9]+: launch heat_step slice 0 units \[0, 44\) interior$" "then its interior"
if grep -q '^worksize,heat' "$out"; then bad "--instructions ran the job"; else ok "--instructions did not run the job"; fi

# Ghost zones: halos every 4th step, 4 rows deep; the same result, 4 rows per neighbour.
mpmd_cmd "$mpx" "$heat" "$cus" 96 90 200 4 --select all; run 120 "${MPMD[@]}"
expect_rc 0 "heat with ghost zones (k 4) on 3 ranks"
expect_out "^worksize,heat,96x90x200,3 ranks,[0-9.e+-]+,verified$" "heat with ghost zones (k 4): verified"
rank_line 0 0 $((4 * 384)) $((4 * 384))
rank_line 1 0 $((8 * 384)) $((8 * 384))
rank_line 2 0 $((4 * 384)) $((4 * 384))

# The heat stencil with the default selection: two slices (ranks 1 and 2), one row each way.
mpmd_cmd "$mpx" "$heat" "$cus" 96 90 200; run 120 "${MPMD[@]}"
expect_rc 0 "heat on 3 ranks, default selection"
if ! grep -Eq '^  rank 0: ' "$out"; then ok "heat, default selection: no report line for rank 0"
else bad "heat, default selection: rank 0 has a report line"; fi
rank_line 1 0 384 384
rank_line 2 0 384 384

# --- A wrong data job: one line on stderr, exit 2, on every rank, no hang. ----------------------

# Lines on stderr that are not the program's: the launcher's, the oversubscription warning (the
# 1-, 2- and 1-CU ranks exceed this machine's cores by design) and PoCL's build diagnostics.
noise='^(worksize: warning: node |[0-9]+ errors? generated\.|application called MPI_Abort|=+$|\[(mpiexec|proxy)|(BAD TERMINATION|PID [0-9]+ RUNNING AT|EXIT CODE:|CLEANING UP REMAINING|YOU CAN IGNORE)|[[:space:]]*$)'

# error_case CASE REGEX [OPTIONS...]: on 3 ranks, exit 2 and exactly one line on stderr, which
# starts with "data_errors: error:" and matches REGEX.
error_case() {
  local c=$1 want=$2; shift 2
  mpmd_cmd "$mpx" "$errors" "$cus" "$c" "$@"; run 60 "${MPMD[@]}"
  local lines first
  lines=$(grep -Ev -e "$noise" "$err" | grep -c . || true)
  first=$(grep -Ev -e "$noise" "$err" | head -n 1)
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [[ $first == "data_errors: error:"* ]] && grep -Eq -e "$want" <<<"$first"; then
    ok "data_errors $c $*: exit 2, one line: $first"
  else
    bad "data_errors $c $*: exit $rc (expected 2), $lines stderr line(s) besides the launcher's, want one 'data_errors: error:' line matching /$want/"
  fi
}

# The program itself is right: its correct case runs on 3 ranks.
mpmd_cmd "$mpx" "$errors" "$cus" ok --select all; run 60 "${MPMD[@]}"
expect_rc 0 "data_errors ok: the correct job runs on 3 ranks"
expect_out "^data_errors: ok, 3 rank\(s\) ran slices$" "data_errors ok: 3 ranks ran slices"

error_case overlap "kernel 'copy', argument 2 \('b'\): overlapping writes: the kernel writes 'b' twice"
error_case halo-write "kernel 'smooth', argument 2 \('a'\): overlapping writes: the kernel reads 'a' with a halo and writes it"
error_case past-end "buffer 'a': rank 0's data holds 3996 bytes; the declaration reads 4000 \(past its end\)"
error_case deep-halo "kernel 'smooth', argument 0 \('a'\): a halo of 6 rows is deeper than the slice of device [0-9]+ \(rank [0-2], [0-9]+ rows\)" --select all
# Found only when each rank builds the program: by rank 1 (rank 0 drives no device) or rank 0.
error_case arg-count "rank 1: .*kernel 'smooth' takes 6 arguments; the job declares 5"
error_case arg-count "rank 0: .*kernel 'smooth' takes 6 arguments; the job declares 5" --select all
error_case no-kernel "rank 1: .*the source has no kernel 'stencil'"
error_case no-kernel "rank 0: .*the source has no kernel 'stencil'" --select all
error_case step-int "kernel 'copy', argument 4: step \* 2000000000 \+ 0 leaves an int within 3 steps; declare it long"
error_case expr-name "kernel 'copy', argument 4: expression 'end \+ n', at 7: unknown name 'n'"
error_case expr-range "kernel 'copy', argument 4: expression 'end \+ step \* big' is [0-9]+ in step 2, beyond an int; declare it long" --select all
error_case host-split "buffer 'a': a host step writes shared inputs only, in a job with host steps"
error_case whole-ghost "kernel 'smooth': a kernel of whole arrays runs without ghost zones \(exchange_every 2\)"
error_case relative "kernel 'copy': a slice-relative kernel needs its work-group size \(required_local\)"
error_case value-split "kernel 'copy', argument 4 \(value_of\): takes a shared buffer of at least one element; 'a' is split"
# --kernel-timeout in a data job: a kernel that never ends (each worker's, PoCL cannot stop it)
# ends the job with a line naming the kernel, the rank and the device, a non-zero exit and no
# rank left behind, within the limit per step (2 s, the steps the host ran ahead) and a few s.
mpmd_cmd "$mpx" "$errors" "$cus" spin --kernel-timeout 2; run 40 "${MPMD[@]}"
if [ "$rc" -ne 0 ] && grep -Eq "^worksize: error: data job 'errors-spin', rank [12]: kernel 'spin' on device '.*' has not finished after [0-9.]+ s \(--kernel-timeout 2 s per step\)" "$err"; then
  ok "a data job's kernel past --kernel-timeout ends the job (exit $rc), named with its rank and device"
else
  bad "data_errors spin --kernel-timeout 2: exit $rc; $(grep -Ev -e "$noise" "$err" | head -n 2)"
fi
# (A rank that mpiexec has just killed may take a moment to go: up to 3 s.)
for _ in $(seq 30); do left=$(pgrep -f -- "$errors spin" || true); [ -z "$left" ] && break; sleep 0.1; done
if [ -n "$left" ]; then bad "data_errors spin: a rank was left running"; kill -9 $left 2>/dev/null; else ok "data_errors spin: no rank left running"; fi

fi  # part jobs

if [ "$part" != jobs ]; then
# A rank that stops answering in the middle of the steps (SIGSTOP, as a hung node, until the job
# has ended) is found by its neighbours by their --rank-timeout (2 s) deadline (without it, the
# job would hang until the guard's 120 s, exit 124): rank 0 names it (found itself, or told by the rank
# next to it), the job ends with exit 1 on every rank, no hang. hung_step R: stop rank R of a
# long heat run once it has spent 3 s of CPU: past the start (device discovery and the inventory
# are collectives, not survived: docs/cluster.md), in its setup or its steps. (Before the data
# jobs' deadlines, a stop that landed in the setup, a cold PoCL cache's compile under load,
# hung the job: rank 0's scatter waited for the stopped rank without a deadline.)
hung_step() {
  local victim=$1 tag="WORKSIZE_TEST_VICTIM=$$.$RANDOM" pid=""
  local RANK_ENV_0="" RANK_ENV_1="" RANK_ENV_2=""
  printf -v "RANK_ENV_$victim" '%s' "$tag"
  mpmd_cmd "$mpx" "$heat" "$cus" 256 256 2000000 --select all --rank-timeout 2
  EXAMPLE_NOVERIFY=1 timeout --kill-after=10 120 "${MPMD[@]}" >"$out" 2>"$err" &
  local job=$!
  for _ in $(seq 600); do
    for p in $(pgrep -f -- "$heat 256 256 2000000"); do
      if grep -qz "$tag" /proc/"$p"/environ 2>/dev/null && [ "$(cat /proc/"$p"/comm)" != env ]; then pid=$p; fi
    done
    if [ -n "$pid" ]; then
      local ticks; ticks=$(awk '{print $14 + $15}' /proc/"$pid"/stat 2>/dev/null || echo 0)
      [ "$ticks" -ge $((3 * $(getconf CLK_TCK))) ] && break
    fi
    sleep 0.1
  done
  if [ -z "$pid" ]; then bad "hung rank $victim: its process was not found"; wait "$job"; return; fi
  kill -STOP "$pid"
  rc=0; wait "$job" || rc=$?
  kill -CONT "$pid" 2>/dev/null
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
    ok "hung rank $victim: the job ended while it was stopped, exit $rc"
  else
    bad "hung rank $victim: exit $rc (want non-zero before the guard's 120 s)"
  fi
  if grep -Eq "^heat: error: rank $victim on host [^ ]+ \(device '[^']+'\) is lost: " "$err"; then
    ok "hung rank $victim: rank 0 names it: $(grep -E 'error: rank' "$err" | head -n 1)"
  else
    bad "hung rank $victim: no line naming rank $victim: $(head -c 600 "$err")"
  fi
}
hung_step 1  # in the middle: both neighbours wait on it
hung_step 2  # the last slice: rank 1 waits on it

# hang_data PHASE: rank 1 of three (the default selection: rank 0 holds no slice) hangs in PHASE
# (WORKSIZE_FAULT=hang-data:PHASE, docs/testing.md; it would hang for 600 s): rank 0 names it
# once --rank-timeout (2 s) has passed since its last sign of life (a heartbeat, a message), exit
# 1, and the job ends, long before the guard's 120 s.
hang_data() {
  local phase=$1 RANK_ENV_1="WORKSIZE_FAULT=hang-data:$1"
  mpmd_cmd "$mpx" "$heat" "$cus" 96 90 200 --rank-timeout 2
  run 120 "${MPMD[@]}"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
    ok "rank 1 hung in the $phase: the job ended, exit $rc"
  else
    bad "rank 1 hung in the $phase: exit $rc (want non-zero before the guard)"
  fi
  if [ "$(grep -Ec 'error: ' "$err")" -eq 1 ] &&
     grep -Eq "^heat: error: rank 1 on host [^ ]+ \(device '[^']+'\) is lost: " "$err"; then
    ok "rank 1 hung in the $phase: one line names it: $(grep -E 'error: ' "$err")"
  else
    bad "rank 1 hung in the $phase: not one error line naming rank 1, its host and device"
  fi
}
hang_data scatter
hang_data steps
hang_data gather

# slow_neighbour SELECTION: rank 1's every step takes 1.5 s longer (WORKSIZE_FAULT=slow-data:1.5,
# as a slow kernel), more than --rank-timeout 1: its neighbours wait on it beyond the timeout
# while its signs of life (wire::kAlive) come, and the job verifies; before, a neighbour took it
# for lost ("rank 2: rank 1 sent nothing for 1 s", issue 28 item 11). SELECTION "all": rank 0
# holds a slice and waits on rank 1 too.
slow_neighbour() {
  local sel=() RANK_ENV_1="WORKSIZE_FAULT=slow-data:1.5"
  [ "$1" = all ] && sel=(--select all)
  mpmd_cmd "$mpx" "$heat" "$cus" 96 90 3 --rank-timeout 1 "${sel[@]}"
  run 120 "${MPMD[@]}"
  expect_rc 0 "slow rank 1 (--select ${1}): not lost"
  expect_out "^worksize,heat,96x90x3,[23] ranks,[0-9.e+-]+,verified$" "slow rank 1 (--select ${1}): verified"
  # The case shows what it claims: rank 2 waited on rank 1 longer than --rank-timeout.
  if grep -Eq "^  rank 2: steps ([0-9]{5,}|[1-9][0-9]{3})\.[0-9]+ ms" "$out"; then ok "slow rank 1 (--select ${1}): rank 2 waited over 1 s on it"
  else bad "slow rank 1 (--select ${1}): rank 2's steps took under --rank-timeout: the fault did not act"; fi
}
slow_neighbour all
if full_tier; then slow_neighbour auto; fi
fi  # part faults
finish
