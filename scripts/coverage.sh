#!/usr/bin/env bash
# Line coverage of scheduler/, runtime/, kernels/ and apps/ by the test suite (docs/testing.md,
# "Coverage"): installs gcovr (Debian's) when missing, builds ./build-cov with gcov's
# instrumentation (WORKSIZE_COVERAGE=ON, -O0), runs the default tier's tests and reports, then
# the full tier's on top (the full tier runs every case of the default one, so the union is its
# own coverage) and reports again. Each report: gcovr's per-file table and total, and a line
# "coverage: TIER lines N of M (P %)"; the summaries land in build-cov/coverage-TIER.txt.
# package.install does not run here: the consumer it builds from the installed static libraries
# would need gcov's runtime too (it installs, and checks, no source line of ours).
#
#   bash scripts/coverage.sh [--default-only]
set -euo pipefail
cd "$(dirname "$0")/.."
only_default=0
case "${1:-}" in
  '') ;;
  --default-only) only_default=1 ;;
  *) echo "coverage: unknown option '$1' (--default-only)" >&2; exit 2 ;;
esac
scripts/setup.sh --packages  # the Debian packages worksize needs
if ! command -v gcovr >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends gcovr >/dev/null
fi
cov=${WORKSIZE_COVERAGE_BUILD_DIR:-build-cov}
cmake -S . -B "$cov" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWORKSIZE_WERROR=ON -DWORKSIZE_COVERAGE=ON >/dev/null
cmake --build "$cov" -j "$(nproc)"
export POCL_CACHE_DIR="$PWD/$cov/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"
find "$cov" -name '*.gcda' -delete
jobs=${WORKSIZE_TEST_JOBS:-$(($(nproc) + 1))}

report() {  # report TIER
  local tier=$1 summary="$cov/coverage-$1.txt"
  # (gcovr warns of GCC 12's negative branch counts in a few files; lines are unaffected)
  gcovr --root . --object-directory "$cov" --filter 'scheduler/' --filter 'runtime/' --filter 'kernels/' \
        --filter 'apps/' --exclude '.*test_.*' --gcov-ignore-parse-errors --sort-percentage >"$summary"
  # the last line of gcovr's table: TOTAL lines, executed, percent
  grep '^TOTAL' "$summary" | awk -v t="$tier" '{printf "coverage: %s lines %d of %d (%.1f %%)\n", t, $3, $2, 100 * $3 / $2}' |
    tee -a "$summary"
}

rc=0
WORKSIZE_TEST_TIER=default ctest --test-dir "$cov" -E '^package\.install$' -j "$jobs" --timeout 1800 --output-on-failure >"$cov/tests-default.log" 2>&1 || rc=1
tail -n 3 "$cov/tests-default.log"
report default
if [ "$only_default" = 0 ]; then
  WORKSIZE_TEST_TIER=full ctest --test-dir "$cov" -E '^package\.install$' -j "$jobs" --timeout 1800 --output-on-failure >"$cov/tests-full.log" 2>&1 || rc=1
  tail -n 3 "$cov/tests-full.log"
  report full
fi
grep -h '^coverage:' "$cov"/coverage-*.txt
exit "$rc"
