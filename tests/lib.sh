# Shell helpers for the CLI and MPI tests: run a command with a hang guard and check its exit
# code and output. Sourced by tests/cli/*.sh and tests/mpi/*.sh.
set -u
fails=0
checks=0
out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# run TIMEOUT CMD...: runs CMD with a time limit, stdout in $out, stderr in $err, code in $rc.
run() {
  local limit=$1; shift
  rc=0
  timeout --kill-after=10 "$limit" "$@" >"$out" 2>"$err" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "HANG: '$*' ran past ${limit}s"; fails=$((fails+1))
  fi
}
# full_tier: whether the suite runs its full tier (scripts/test.sh --full, WORKSIZE_TEST_TIER=full):
# the scripts' long sweeps run only then; the default tier keeps one case of each behaviour.
full_tier() { [ "${WORKSIZE_TEST_TIER:-default}" = full ]; }

ok()   { checks=$((checks+1)); echo "ok: $1"; }
bad()  { checks=$((checks+1)); fails=$((fails+1)); echo "FAIL: $1"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; }
expect_rc() { # expect_rc CODE DESCRIPTION
  if [ "$rc" -eq "$1" ]; then ok "$2 (exit $rc)"; else bad "$2: exit $rc, expected $1"; fi
}
expect_fail_line() { # expect_fail_line CODE REGEX DESCRIPTION: exit CODE (any: non-zero) and one stderr line matching REGEX
  # Not counted: the warnings that the ranks' PoCL threads exceed the cores (issue 16) or leave
  # none to a GPU rank, which the MPI tests' 2-, 1- and 2-CU ranks (some reporting GPUs,
  # WORKSIZE_FAULT=as-gpu) on a small test machine raise by design.
  local lines; lines=$(grep -Ev 'compute units in all on [0-9]* cores(; timings will interfere| beside)' "$err" | grep -c . || true)
  local code_ok=no; if [ "$1" = any ]; then [ "$rc" -ne 0 ] && code_ok=yes; elif [ "$rc" -eq "$1" ]; then code_ok=yes; fi
  if [ "$code_ok" = yes ] && grep -Eq -e "$2" "$err" && [ "$lines" -eq 1 ]; then ok "$3"
  else bad "$3: exit $rc (expected $1), $lines stderr line(s), want /$2/"; fi
}
expect_out() { # expect_out REGEX DESCRIPTION
  if grep -Eq -e "$1" "$out"; then ok "$2"; else bad "$2: stdout lacks /$1/"; fi
}
expect_err() { # expect_err REGEX DESCRIPTION
  if grep -Eq -e "$1" "$err"; then ok "$2"; else bad "$2: stderr lacks /$1/"; fi
}
expect_jq() { # expect_jq FILTER DESCRIPTION: jq -e FILTER on stdout is true (jq 1.6 -e exits 0 on no input)
  if [ -s "$out" ] && jq -e "$1" "$out" >/dev/null 2>&1; then ok "$2"; else bad "$2: jq '$1' is not true"; fi
}
finish() {
  echo "$((checks-fails)) passed, $fails failed"
  [ "$fails" -eq 0 ]
}

# mpmd MPIEXEC WS "CU0 CU1 ..." ARGS...: one rank per CU count, each seeing PoCL with that many
# compute units (PoCL 3 reads POCL_MAX_PTHREAD_COUNT, PoCL 4+ POCL_CPU_MAX_CU_NUM). Extra
# per-rank environment: RANK_ENV_<r>="VAR=value ...".
mpmd_cmd() {
  local mpx=$1 ws=$2 cus=$3; shift 3
  local cmd=("$mpx") r=0 sep=()
  for cu in $cus; do
    local extra_var="RANK_ENV_$r"
    # shellcheck disable=SC2206
    local extra=(${!extra_var:-})
    cmd+=("${sep[@]}" -n 1 env POCL_MAX_PTHREAD_COUNT="$cu" POCL_CPU_MAX_CU_NUM="$cu" "${extra[@]}" "$ws" "$@")
    sep=(:); r=$((r+1))
  done
  printf '%s\n' "${cmd[@]}" >/dev/null
  MPMD=("${cmd[@]}")
}
