#!/usr/bin/env bash
# A user's own kernel (examples/saxpy) split over three PoCL ranks of 2, 1 and 2 CUs, verified.
ex=$1; mpx=$2
source "$(dirname "$0")/lib.sh"
mpmd_cmd "$mpx" "$ex" "2 1 2" 100003; run 120 "${MPMD[@]}"
expect_rc 0 "saxpy through the porting API"
expect_out "^rank 1 .* items" "rank 1 ran a slice"
expect_out "^rank 2 .* items" "rank 2 ran a slice"
expect_out "verified: 100003 elements exact" "result verified"
finish
