#!/usr/bin/env bash
# The installed package: installs the already-built tree BUILD into a fresh prefix, then builds
# and runs tests/package/main.cpp against it twice, through find_package(worksize) (the CMake
# project beside this script) and through pkg-config, and checks the prefix and the outputs.
# Needs no device. Usage: check.sh SRC BUILD
set -u
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd)
here="$src/tests/package"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
fails=0
ok()  { echo "ok: $1"; }
bad() { fails=$((fails+1)); echo "FAIL: $1"; }
# step DESCRIPTION CMD...: runs CMD with its output in $tmp/log, shown on failure.
step() {
  local what=$1; shift
  if timeout --kill-after=10 300 "$@" >"$tmp/log" 2>&1; then ok "$what"
  else bad "$what"; cat "$tmp/log"; echo "package.install: $fails failure(s)"; exit 1; fi
}
# expect_plan FILE HOW: the consumer's output has the plan over both devices and the kernels.
expect_plan() {
  local file=$1 how=$2
  if grep -Eq '^plan matmul 2048x2048 ' "$file" &&
     grep -Eq '^device consumer-gpu units [0-9]+ ' "$file" &&
     grep -Eq '^device consumer-cpu units [0-9]+ ' "$file" &&
     [ "$(grep -c '^device ' "$file")" -eq 2 ] &&
     grep -Eq '^kernels( .*)? matmul( |$)' "$file"; then
    ok "$how: the plan has both devices and the kernel list has matmul"
  else
    bad "$how: unexpected output"; cat "$file"
  fi
}

# expect_log FILE HOW: the consumer's stderr is its two log lines (the level filters the third).
expect_log() {
  local file=$1 how=$2
  if [ "$(cat "$file")" = "$(printf 'worksize: info: consumer: shown at the default level\nworksize: warning: consumer: 2 assignments')" ]; then
    ok "$how: the log writes its lines and filters by level"
  else
    bad "$how: unexpected log output"; cat "$file"
  fi
}

step "cmake --install into a fresh prefix" cmake --install "$build" --prefix "$prefix"

# The prefix: headers, libraries, CMake package and pkg-config file; no tests or examples.
for f in include/worksize/scheduler/planner.hpp include/worksize/runtime/kernel_job.hpp \
         lib/cmake/worksize/worksizeConfig.cmake lib/cmake/worksize/worksizeConfigVersion.cmake \
         lib/cmake/worksize/worksizeTargets.cmake lib/pkgconfig/worksize.pc bin/worksize; do
  if [ -f "$prefix/$f" ]; then ok "installed $f"; else bad "$f is not installed"; fi
done
if ls "$prefix"/lib/libworksize_scheduler.* "$prefix"/lib/libworksize_runtime.* >/dev/null 2>&1; then
  ok "installed both libraries"; else bad "a library is not installed"; fi
extra=$(find "$prefix" -type f | grep -Ev "^$prefix/(bin/worksize|include/worksize/(scheduler|runtime)/[a-z_]+\.hpp|lib/libworksize_(scheduler|runtime)\.(a|so[.0-9]*)|lib/cmake/worksize/worksize[A-Za-z-]*\.cmake|lib/pkgconfig/worksize\.pc)$" || true)
if [ -z "$extra" ]; then ok "nothing else is installed"; else bad "unexpected files installed:"; echo "$extra"; fi
if grep -Eq "#[[:space:]]*include.*(spdlog|fmt/)" "$prefix"/include/worksize/*/*.hpp; then bad "an installed header includes spdlog or fmt"
else ok "no installed header includes spdlog or fmt"; fi
leaks=$(grep -rlF -e "$src" -e "$build" "$prefix/include" "$prefix/lib/cmake" "$prefix/lib/pkgconfig" || true)
if [ -z "$leaks" ]; then ok "no build-tree or source-tree paths in headers, config, .pc"
else bad "build-tree paths in:"; echo "$leaks"; fi

# find_package(worksize 0.1 REQUIRED).
gen=(); if command -v ninja >/dev/null; then gen=(-G Ninja); fi
step "configure the consumer with find_package(worksize)" \
  cmake -S "$here" -B "$tmp/cmake" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
step "build the consumer (CMake)" cmake --build "$tmp/cmake"
step "run the consumer (CMake)" sh -c "'$tmp/cmake/worksize_consumer' > '$tmp/cmake.out' 2> '$tmp/cmake.err'"
expect_plan "$tmp/cmake.out" "find_package"
expect_log "$tmp/cmake.err" "find_package"

# pkg-config: one plain compiler command. LD_LIBRARY_PATH: a shared build's libraries.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
step "pkg-config --modversion worksize is 0.1.0" sh -c '[ "$(pkg-config --modversion worksize)" = 0.1.0 ]'
flags=$(pkg-config --cflags --libs worksize) || { bad "pkg-config --cflags --libs worksize"; exit 1; }
echo "pkg-config --cflags --libs worksize: $flags"
step "build the consumer (pkg-config)" sh -c "\${CXX:-c++} -std=c++20 -O1 '$here/main.cpp' -o '$tmp/pc_consumer' $flags"
step "run the consumer (pkg-config)" \
  sh -c "LD_LIBRARY_PATH='$prefix/lib' '$tmp/pc_consumer' > '$tmp/pc.out' 2> '$tmp/pc.err'"
expect_plan "$tmp/pc.out" "pkg-config"
expect_log "$tmp/pc.err" "pkg-config"
if cmp -s "$tmp/cmake.out" "$tmp/pc.out"; then ok "both builds print the same"
else bad "the two builds differ"; diff "$tmp/cmake.out" "$tmp/pc.out"; fi

echo "package.install: $fails failure(s)"
[ "$fails" -eq 0 ]
