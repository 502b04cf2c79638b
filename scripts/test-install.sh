#!/usr/bin/env bash
# Tests that wsc installs the way MLIR does (cmake/WSCInstall.cmake):
#
#   scripts/test-install.sh install BUILD_DIR
#       installs BUILD_DIR into a temporary prefix, builds
#       examples/standalone-consumer against it (find_package(WSC)) and runs
#       its wsc-consumer-opt;
#   scripts/test-install.sh package BUILD_DIR
#       unpacks the Debian package `make package` left in BUILD_DIR/package
#       with dpkg -x and runs its wsc-opt --version and wsc-opt.
#
# Either tool runs the compile pipeline on a small training step, and its
# output must equal that of BUILD_DIR's own wsc-opt.
set -euo pipefail

if [ $# -ne 2 ] || { [ "$1" != install ] && [ "$1" != package ]; }; then
  echo "usage: $0 install|package BUILD_DIR" >&2
  exit 2
fi
mode=$1
build=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
input=$root/test/Transforms/Inputs/mlp-mse-train.mlir
pipeline="--wsc-pipeline=mode=weight_streaming systems=1"

fail() {
  echo "test-$mode: FAIL: $*" >&2
  exit 1
}
[ -x "$build/bin/wsc-opt" ] || fail "no $build/bin/wsc-opt: build first (make build)"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || fail "no project version in $build/CMakeCache.txt"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wsc-test-$mode.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run_logged WHAT LOG CMD...: runs CMD with its output in LOG; if CMD fails,
# shows LOG and fails with WHAT.
run_logged() {
  local what=$1 log=$tmp/$2
  shift 2
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "$what"; }
}

# check_files DIR FILE...: each FILE exists under DIR.
check_files() {
  local dir=$1
  shift
  for f in "$@"; do
    [ -e "$dir/$f" ] || fail "$dir/$f is missing"
  done
}

# check_pipeline TOOL: TOOL compiles the input as the build's wsc-opt does.
check_pipeline() {
  local tool=$1
  run_logged "$tool exited with an error" pipeline.log "$tool" "$input" "$pipeline" -o "$tmp/out.mlir"
  grep -q "wsc.kernel" "$tmp/out.mlir" || fail "$tool formed no wsc.kernel"
  "$build/bin/wsc-opt" "$input" "$pipeline" -o "$tmp/expected.mlir" 2>/dev/null
  diff -u "$tmp/expected.mlir" "$tmp/out.mlir" >&2 ||
    fail "$tool's output differs from $build/bin/wsc-opt's"
}

installed_files=(
  bin/wsc-opt bin/wsc-translate bin/wsc-run bin/wsc-place
  include/wsc/Transforms/Passes.h include/wsc/Transforms/Passes.td
  include/wsc/Transforms/Passes.h.inc include/wsc/Dialect/WSC/WSCOps.td
  include/wsc/Dialect/WSC/WSCOps.h.inc include/wsc/Runtime/Session.h
  lib/libWSCSupport.a lib/libWSCRuntime.a lib/libMLIRWSCTransforms.a lib/libMLIRWSCTarget.a
  lib/cmake/wsc/WSCConfig.cmake lib/cmake/wsc/WSCConfigVersion.cmake
  lib/cmake/wsc/WSCTargets.cmake
)

case $mode in
install)
  prefix=$tmp/prefix
  run_logged "cmake --install failed" install.log cmake --install "$build" --prefix "$prefix"
  check_files "$prefix" "${installed_files[@]}"
  run_logged "configuring the consumer failed" configure.log \
    cmake -G Ninja -S "$root/examples/standalone-consumer" -B "$tmp/consumer" \
      -DCMAKE_BUILD_TYPE=Release -DWSC_DIR="$prefix/lib/cmake/wsc"
  grep -q "Using WSCConfig.cmake in: $prefix/lib/cmake/wsc" "$tmp/configure.log" ||
    fail "the consumer did not use the WSCConfig.cmake under $prefix"
  run_logged "building the consumer failed" consumer-build.log ninja -C "$tmp/consumer" -j2
  check_pipeline "$tmp/consumer/wsc-consumer-opt"
  ;;
package)
  deb=$build/package/wsc_${version}_$(dpkg --print-architecture).deb
  [ -f "$deb" ] || fail "no $deb: run make package"
  depends=$(dpkg-deb --field "$deb" Depends)
  for dep in libmlir- libllvm libopenblas0; do
    [[ $depends == *"$dep"* ]] || fail "$deb does not depend on $dep (Depends: $depends)"
  done
  dpkg -x "$deb" "$tmp/root"
  check_files "$tmp/root/usr" "${installed_files[@]}"
  for tool in "$tmp"/root/usr/bin/*; do
    if ldd "$tool" | grep -q "not found"; then
      ldd "$tool" >&2
      fail "$tool needs a library that is not installed"
    fi
  done
  "$tmp/root/usr/bin/wsc-opt" --version >"$tmp/version.txt" || fail "wsc-opt --version failed"
  grep -q "wsc version $version" "$tmp/version.txt" ||
    fail "wsc-opt --version does not say 'wsc version $version': $(cat "$tmp/version.txt")"
  check_pipeline "$tmp/root/usr/bin/wsc-opt"
  ;;
esac
echo "test-$mode: OK ($mode of wsc $version)"
