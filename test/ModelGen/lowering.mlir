// Tests that the generated IR is valid TOSA for training graphs (tosa-validate
// with the main inference profile, the 8K level and strict spec alignment,
// which rejects e.g. fully_connected on non-constant weights) and lowers
// through TOSA-to-linalg with no TOSA op left; with --loss, on to the LLVM
// dialect with the CPU pipeline of TOOLCHAIN-NOTES (math-to-llvm placed
// before math-to-libm, which rejects math.rsqrt in MLIR 19).

// RUN: ftpipe-model-gen bert-tiny --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// RUN: ftpipe-model-gen gpt2-tiny --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// RUN: ftpipe-model-gen flan-t5-tiny --loss --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// RUN: ftpipe-model-gen llama-tiny --loss --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// LINALG: func.func
// LINALG: linalg.batch_matmul
// LINALG: return

// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet \
// RUN:   | mlir-opt --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-deallocation-pipeline,convert-bufferization-to-memref,func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,convert-index-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not=tosa.
// LLVM: llvm.func @GPT2LMHeadModel(
// LLVM: llvm.call @tanhf
// LLVM-NOT: func.func
