// Tests ftpipe-compile --index-guards (docs/Compile.md): by default every
// tosa.gather's indices are clamped to its table (ftpipe-clamp-gather-indices)
// and, where the model computes them, checked by a call of the runtime's
// trap; --index-guards=false leaves both out (only to measure their cost on
// bench/compiled_bert_layer.sh). The model is test/Runtime's, whose gather
// reads the data's ids plus one.

// RUN: rm -rf %t && mkdir -p %t
// RUN: ftpipe-compile %S/../Runtime/Inputs/computed-index.mlir --devices=1 -O0 --keep-ir -o %t/guarded 2> /dev/null
// RUN: ftpipe-compile %S/../Runtime/Inputs/computed-index.mlir --devices=1 -O0 --keep-ir --index-guards=false -o %t/bare 2> /dev/null

// RUN: FileCheck %s --check-prefix=GUARDED < %t/guarded/device0.mlir
// GUARDED: tosa.clamp {{.*}}ftpipe.index_guard
// GUARDED: tosa.gather
// RUN: nm -D --undefined-only %t/guarded/device0.so | FileCheck %s --check-prefix=TRAP
// TRAP: U ftpipe_rt_index_error

// RUN: FileCheck %s --check-prefix=BARE < %t/bare/device0.mlir
// BARE-NOT: tosa.clamp
// BARE: tosa.gather
// BARE-NOT: tosa.clamp
// RUN: nm -D --undefined-only %t/bare/device0.so | FileCheck %s --check-prefix=NOTRAP
// NOTRAP-NOT: ftpipe_rt_index_error
// NOTRAP: U
// NOTRAP-NOT: ftpipe_rt_index_error
