#!/usr/bin/env bash
# Golden instruction lists of a kernel job (worksize plan --instructions, no device): matmul 4096
# split evenly over the three ranks of hetero.json (rank 0 sends each worker its rows of A and B
# in 16 MiB pieces, each worker uploads a piece as it comes, launches, downloads and sends C
# back), compared to instructions_matmul.txt; the JSON form names the same instructions; a job
# that is not declared (sort) is refused with one line.
# Usage: instructions.sh WORKSIZE SRC [--write]
ws=$1; src=$2; write=${3:-}
here="$src/tests/golden"
args=(plan --kernel matmul --size 4096 --strategy even --devices "$here/hetero.json")
text=$("$ws" "${args[@]}" --instructions) || { echo "FAIL: plan --instructions exited $?"; exit 1; }
if [ "$write" = --write ]; then printf '%s\n' "$text" >"$here/instructions_matmul.txt"; echo "wrote instructions_matmul.txt"; exit 0; fi
if ! diff <(printf '%s\n' "$text") "$here/instructions_matmul.txt"; then
  echo "FAIL: the lists differ from tests/golden/instructions_matmul.txt (instructions.sh WS SRC --write rewrites it)"; exit 1
fi
json=$("$ws" "${args[@]}" --instructions json) || { echo "FAIL: --instructions json exited $?"; exit 1; }
lines=$(printf '%s\n' "$text" | grep -c '^  [0-9]*: ')
count=$(printf '%s' "$json" | jq '[.ranks[].list | length] | add')
[ "$lines" = "$count" ] || { echo "FAIL: $lines instructions in text, $count in JSON"; exit 1; }
[ "$(printf '%s' "$json" | jq -r '[.ranks[].rank] | join(",")')" = "0,1,2" ] || { echo "FAIL: JSON ranks"; exit 1; }
out=$("$ws" plan --kernel sort --devices "$here/hetero.json" --instructions 2>&1); rc=$?
if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] || ! grep -q "not a declared job" <<<"$out"; then
  echo "FAIL: sort --instructions: rc $rc, '$out'"; exit 1
fi
out=$("$ws" "${args[@]}" --instructions yaml 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "text or json" <<<"$out" || { echo "FAIL: --instructions yaml: rc $rc, '$out'"; exit 1; }
echo "instructions: matmul lists as golden ($lines instructions), JSON the same, sort refused"
