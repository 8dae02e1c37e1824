#!/usr/bin/env bash
# Overlapped distribution: rank 0 posts the sends to all workers at once, and `run` reports when
# each worker's send started and ended; with two workers and a 32 MiB input each, the two send
# intervals overlap (each starts before the other ends), and the text report shows them too.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

mpmd_cmd "$mpx" "$ws" "1 1 1" run interp --size 4096 --strategy even --warmup 0 --json
run 300 "${MPMD[@]}"
expect_rc 0 "interp 4096 on two workers"
expect_jq '.verified == true' "verified"
expect_jq '[.devices[] | select(.units > 0 and .rank > 0)] | length == 2' "two workers took part"
expect_jq '[.devices[] | select(.rank > 0) | .transfer | .send_start_s < .send_end_s and .send_end_s <= .recv_start_s and .recv_start_s < .recv_end_s] | all' \
  "each worker's send and receive intervals are ordered (send before receive)"
expect_jq '[.devices[] | select(.rank > 0) | .transfer] as $t | ($t[0].send_start_s < $t[1].send_end_s) and ($t[1].send_start_s < $t[0].send_end_s)' \
  "the sends to the two workers overlap"
expect_jq '[.devices[] | select(.rank > 0) | (.transfer.send_end_s - .transfer.send_start_s - .times.send) | fabs < 1e-6] | all' \
  "times.send is the reported send interval"

mpmd_cmd "$mpx" "$ws" "1 1 1" run interp --size 2048 --strategy even --warmup 0
run 300 "${MPMD[@]}"
expect_rc 0 "text report"
expect_out 'send at ms +recv at ms' "the text report has the send and receive intervals"
expect_out '^[01]: .* [0-9.]+\.\.[0-9.]+ +[0-9.]+\.\.[0-9.]+ *$' "each worker's row shows both intervals"
finish
