#!/usr/bin/env bash
# Golden plans: the offline plans of every sample kernel over two profiles, for each split strategy
# that needs no measurement and each local policy that needs no database, at power-of-two and
# awkward sizes, compared to the row with plans.expected (written by this script with --write
# from a known-good build). A change that moves any row or local size fails here.
# Usage: plans.sh WORKSIZE SRC [--write]
ws=$1; src=$2; write=${3:-}
here="$src/tests/golden"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
actual=$tmp/actual
# Each plan's JSON (null when it fails) in plans.json and its row's words in keys, then one jq
# over all of them (a jq per plan cost as much as the plans).
for prof in "$src/docs/profiles/paper-2015.json" "$here/hetero.json"; do
  for kernel in matmul interp sort quad; do
    case $kernel in
      matmul|interp) sizes="1024 1531 512x300" ;;
      *) sizes="1048576 3000017 12345679 1000" ;;
    esac
    for size in $sizes; do
      for strategy in even pe-ratio paper; do
        for local in null paper; do
          for ops in "" 5e11; do
            args=(plan --kernel "$kernel" --size "$size" --strategy "$strategy" --local "$local"
                  --devices "$prof" --json)
            [ -n "$ops" ] && args+=(--ops "$ops")
            "$ws" "${args[@]}" 2>/dev/null >"$tmp/one" && [ -s "$tmp/one" ] || echo null >"$tmp/one"
            cat "$tmp/one" >>"$tmp/plans.json"
            echo "$(basename "$prof") $kernel $size $strategy $local ${ops:-default}" >>"$tmp/keys"
          done
        done
      done
    done
  done
done
jq -r 'if . == null then "error" else
         ({kernel, global, ops, compute_class, k, strategy, priority,
           a: [.assignments[] | [.device, .offset, .units, .global, .padded_global, .local, .local_rule]]} | tojson)
       end' "$tmp/plans.json" >"$tmp/lines"
if [ "$(wc -l <"$tmp/lines")" -ne "$(wc -l <"$tmp/keys")" ]; then
  echo "FAIL: $(wc -l <"$tmp/keys") plans asked for, $(wc -l <"$tmp/lines") read back"; exit 1
fi
paste -d ' ' "$tmp/keys" "$tmp/lines" >"$actual"
if [ "$write" = "--write" ]; then cp "$actual" "$here/plans.expected"; echo "wrote $(wc -l <"$actual") plans"; exit 0; fi
if diff -u "$here/plans.expected" "$actual" >/dev/null; then
  echo "ok: $(wc -l <"$actual") plans equal to the row"; exit 0
fi
echo "FAIL: plans differ from tests/golden/plans.expected:"; diff -u "$here/plans.expected" "$actual" | head -40; exit 1
