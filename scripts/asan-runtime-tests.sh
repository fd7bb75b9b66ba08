#!/usr/bin/env bash
# The runtime under AddressSanitizer and UBSan against hostile input, without
# a whole second build: builds ftpipe-run, communicator-mpi-check and the
# runtime's GoogleTests in a sanitizer build (FTPIPE_SANITIZE=ON), runs those
# tests, then runs the lit tests of test/Runtime (hostile files, manifests
# and values, output links, the computed-index trap, checkpoints,
# evaluation, ...) with the sanitizer build's ftpipe-run and
# communicator-mpi-check in place of the normal build's, every other tool (the
# compiler that makes the artifacts, ftpipe-opt, ftpipe-model-gen) from the
# normal build (lit's `--param ftpipe_tools_dir`). The artifacts' own code is
# not instrumented; the runtime that loads them, reads every file and calls
# them is.
#
#   scripts/asan-runtime-tests.sh [BUILD [ASAN_BUILD [LIT_PATH...]]]
#
# BUILD (default build) must be built; ASAN_BUILD (default build-asan) is
# configured as docs/Robustness.md says when it is not yet. LIT_PATH: the
# tests to run (default test/Runtime). Reports are not allowed to hide behind
# an expected failure (`not ftpipe-run ...`): ASan writes them under
# ASAN_BUILD/asan-logs and aborts, UBSan aborts, and the script fails when
# that directory is not empty afterwards. Leak detection is off, as in the
# sanitizer build's own test/Runtime: ftpipe-run --np's processes end with
# OpenMPI's and NCCL's allocations, which LeakSanitizer cannot attribute.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(realpath "${1:-$root/build}")"
asan="$(realpath -m "${2:-$root/build-asan}")"
shift $(($# < 2 ? $# : 2))
tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=("$build/test/Runtime")
lit=/usr/lib/llvm-19/build/utils/lit/lit.py

[[ -x "$build/bin/ftpipe-run" ]] || {
  echo "asan-runtime-tests: $build/bin/ftpipe-run is missing: build $build first" >&2
  exit 1
}
# A build directory copied from another checkout still builds that one (and
# regenerates its files there): refuse it.
if [[ -f "$asan/CMakeCache.txt" ]]; then
  source_dir="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$asan/CMakeCache.txt")"
  if [[ "$(realpath "$source_dir")" != "$root" ]]; then
    echo "asan-runtime-tests: $asan is configured for $source_dir, not $root" >&2
    exit 1
  fi
else
  cmake -G Ninja -S "$root" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFTPIPE_SANITIZE=ON \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
fi
nice -n 10 ninja -C "$asan" -j2 ftpipe-run communicator-mpi-check \
  FTPipeRuntimeTests FTPipeSupportTests

logs="$asan/asan-logs"
rm -rf "$logs" && mkdir -p "$logs"
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=0:abort_on_error=1:log_path=$logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"

echo "== the runtime's GoogleTests under the sanitizers"
"$asan/bin/FTPipeRuntimeTests" --gtest_brief=1
"$asan/bin/FTPipeSupportTests" --gtest_brief=1

# This build's tools, with the sanitizer build's ftpipe-run.
tools="$asan/asan-tools"
rm -rf "$tools" && mkdir -p "$tools"
for tool in "$build"/bin/*; do
  ln -s "$tool" "$tools/$(basename "$tool")"
done
ln -sf "$asan/bin/ftpipe-run" "$tools/ftpipe-run"
ln -sf "$asan/bin/communicator-mpi-check" "$tools/communicator-mpi-check"

echo "== lit with $asan/bin/ftpipe-run: ${tests[*]}"
status=0
python3 "$lit" -sv --param ftpipe_tools_dir="$tools" "${tests[@]}" || status=$?
if [[ -n "$(ls -A "$logs")" ]]; then
  echo "asan-runtime-tests: sanitizer reports in $logs:" >&2
  ls "$logs" >&2
  status=1
fi
echo "== asan-runtime-tests: $([[ $status -eq 0 ]] && echo "no sanitizer report, every test passed" || echo FAILED)"
exit $status
