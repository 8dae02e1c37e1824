#!/usr/bin/env bash
# matmul split over two worker ranks (PoCL devices of 2 and 1 compute units; rank 0 the master)
# with a different backend per device: CLBlast on one, the kernel on the other, at awkward sizes,
# verified by rank 0 against the CPU reference. Skipped (77) in a build without CLBlast.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

run 60 "$ws" plan --kernel matmul --size 8 --backend clblast
if grep -q "built without CLBlast" "$err"; then echo "skip: built without CLBlast"; exit 77; fi

for case in "0=clblast,1=kernel|67x23|5|[\"clblast\",\"kernel\"]" "1=clblast|131x41|29|[\"kernel\",\"clblast\"]" \
            "clblast|17|17|[\"clblast\",\"clblast\"]"; do
  IFS='|' read -r spec size k want <<<"$case"
  mpmd_cmd "$mpx" "$ws" "2 2 1" run matmul --size "$size" --param k="$k" --strategy pe-ratio --backend "$spec" \
    --iterations 2 --json
  run 300 "${MPMD[@]}"
  if [ "$rc" -eq 0 ] && jq -e ".verified == true and ([.devices[].rank] == [1,2]) and ([.devices[].backend] == $want)" \
       "$out" >/dev/null; then
    ok "--backend $spec size $size k $k: verified on ranks 1 and 2 with backends $want"
  else
    bad "--backend $spec size $size k $k"
  fi
done
# A device index past the plan's: refused on every rank, exit 2, no hang.
mpmd_cmd "$mpx" "$ws" "2 2 1" run matmul --size 17 --backend 2=clblast; run 120 "${MPMD[@]}"
expect_rc 2 "--backend naming device 2 of two"
finish
