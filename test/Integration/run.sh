#!/usr/bin/env bash
# Driver of the integration tests (test/Integration/CMakeLists.txt).
#
#   run.sh install BUILD_DIR PREFIX
#       cmake --install BUILD_DIR into a fresh PREFIX, then checks the layout
#       and that libFTPipe-C.so carries no static copy of MLIR.
#   run.sh EXAMPLE SOURCE_DIR PREFIX WORK_DIR
#       configures and builds examples/EXAMPLE as its own CMake project
#       against the installed package only, runs it, and checks its links.
#
# The compiler, generator and compiler launcher come from the environment
# (FTPIPE_CC, FTPIPE_CXX, FTPIPE_GENERATOR, FTPIPE_MAKE_PROGRAM,
# FTPIPE_LAUNCHER), set by CTest to the main build's.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Prints the NEEDED entries of an ELF file.
needed() {
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# has TEXT REGEX: whether TEXT has a line matching the extended REGEX (no
# pipe into `grep -q`, which would kill the writer under pipefail).
has() {
  grep -Eq -- "$2" <<<"$1"
}

install_package() {
  local build="$1" prefix="$2"
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 ||
    { cat "$prefix.log"; fail "cmake --install"; }
  local config
  config="$(find "$prefix" -name FTPipeConfig.cmake -print -quit)"
  [[ -n "$config" ]] || fail "no FTPipeConfig.cmake under $prefix"
  local dir
  dir="$(dirname "$config")"
  for file in FTPipeConfigVersion.cmake FTPipeTargets.cmake \
      FTPipePartitionTargets.cmake; do
    [[ -f "$dir/$file" ]] || fail "missing $dir/$file"
  done
  for header in FTPipe/InitAllFTPipe.h FTPipe/Transforms/Pipelines.h \
      FTPipe/Transforms/Passes.h.inc FTPipe/Dialect/FTPipe/FTPipeAttrs.h.inc \
      FTPipe/Partition/MixedPipe.h FTPipe-c/FTPipe.h; do
    [[ -f "$prefix/include/$header" ]] || fail "missing include/$header"
  done
  for tool in ftpipe-opt ftpipe-model-gen; do
    [[ -x "$prefix/bin/$tool" ]] || fail "missing bin/$tool"
  done
  # The C API library: MLIR's C functions in it, MLIR itself from libMLIR.so.
  local capi
  capi="$(find "$prefix" -name 'libFTPipe-C.so*' -type f -print -quit)"
  [[ -n "$capi" ]] || fail "no libFTPipe-C.so"
  has "$(needed "$capi")" '^libMLIR\.so' || fail "$capi does not need libMLIR.so"
  local symbols
  symbols="$(nm -D --defined-only -C "$capi")"
  has "$symbols" ' T mlirContextCreate$' ||
    fail "$capi does not export mlirContextCreate"
  has "$symbols" ' T mlirFTPipeRunPartitionPipeline$' ||
    fail "$capi does not export mlirFTPipeRunPartitionPipeline"
  # Strong definitions of MLIR's core classes would mean a second, static
  # MLIR in the process (two TypeID and dialect registries): every strong
  # symbol must be a C API function or FTPipe's own (or, in a sanitizer
  # build, ASan's ODR indicator of one of FTPipe's globals).
  local foreign
  foreign="$(grep -E ' [TDBR] ' <<<"$symbols" |
    grep -Ev ' (mlir[A-Z_]|mlir::ftpipe::|ftpipe::|mlir::detail::TypeIDResolver<mlir::ftpipe::|__odr_asan\._ZN4mlir6detail14TypeIDResolverINS_6ftpipe|_edata|_end|__bss_start)' || true)"
  [[ -z "$foreign" ]] ||
    fail "$capi defines symbols of MLIR or LLVM (static MLIR linked in?):
$(head -20 <<<"$foreign")"
  echo "installed into $prefix"
}

build_example() {
  local name="$1" source="$2" prefix="$3" work="$4"
  rm -rf "$work"
  mkdir -p "$work"
  local args=(-S "$source" -B "$work/build" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH="$prefix")
  [[ -n "${FTPIPE_GENERATOR:-}" ]] && args+=(-G "$FTPIPE_GENERATOR")
  [[ -n "${FTPIPE_MAKE_PROGRAM:-}" ]] &&
    args+=(-DCMAKE_MAKE_PROGRAM="$FTPIPE_MAKE_PROGRAM")
  [[ -n "${FTPIPE_CC:-}" ]] && args+=(-DCMAKE_C_COMPILER="$FTPIPE_CC")
  [[ -n "${FTPIPE_CXX:-}" ]] && args+=(-DCMAKE_CXX_COMPILER="$FTPIPE_CXX")
  if [[ -n "${FTPIPE_LAUNCHER:-}" ]]; then
    args+=(-DCMAKE_C_COMPILER_LAUNCHER="$FTPIPE_LAUNCHER"
      -DCMAKE_CXX_COMPILER_LAUNCHER="$FTPIPE_LAUNCHER")
  fi
  echo "== configuring $name against $prefix"
  cmake "${args[@]}" || fail "configuring $name"
  echo "== building $name"
  cmake --build "$work/build" || fail "building $name"
  local program="$work/build/$name"
  [[ -x "$program" ]] || fail "no $program"

  case "$name" in
  partition-from-arrays)
    # The plain partition library must not bring MLIR, even indirectly.
    local libraries
    libraries="$(ldd "$program")"
    if has "$libraries" '[Mm][Ll][Ii][Rr]'; then
      fail "$name links MLIR: $libraries"
    fi
    has "$libraries" 'libLLVM' || fail "$name does not link libLLVM"
    "$program" | tee "$work/out.txt"
    grep -q '^mixed-pipe: ' "$work/out.txt" || fail "no mixed-pipe plan"
    grep -q '^seq-dp: ' "$work/out.txt" || fail "no seq-dp plan"
    ;;
  runtime-hardware)
    # The runtime links LLVM (and CUDA), never MLIR.
    local libraries
    libraries="$(ldd "$program")"
    if has "$libraries" '[Mm][Ll][Ii][Rr]'; then
      fail "$name links MLIR: $libraries"
    fi
    "$program" | tee "$work/out.txt"
    grep -q ' devices$' "$work/out.txt" || fail "no hardware description"
    ;;
  pipeline-from-cxx | pipeline-from-c)
    if [[ "$name" == pipeline-from-c ]]; then
      # A C program on the C API only: libFTPipe-C.so is all it names.
      has "$(needed "$program")" '^libFTPipe-C\.so' ||
        fail "$name does not link libFTPipe-C.so"
    fi
    # The installed model generator, run from the prefix.
    "$prefix/bin/ftpipe-model-gen" t5-tiny --loss --quiet -o "$work/t5-tiny.mlir" ||
      fail "installed ftpipe-model-gen"
    "$program" "$work/t5-tiny.mlir" || fail "$name"
    ;;
  *)
    fail "unknown example $name"
    ;;
  esac
  echo "PASS: $name"
}

case "${1:-}" in
install)
  install_package "$2" "$3"
  ;;
*)
  [[ $# -eq 4 ]] || fail "usage: run.sh install BUILD PREFIX | run.sh EXAMPLE SOURCE PREFIX WORK"
  build_example "$@"
  ;;
esac
