// RUN: split-file --leading-lines %s %t
// RUN: not ftpipe-opt %t/transpose.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSE --implicit-check-not=error: --implicit-check-not=Stack
// RUN: not ftpipe-opt < %t/broadcast.mlir 2>&1 | FileCheck %s --check-prefix=BROADCAST --implicit-check-not=error: --implicit-check-not=Stack
// RUN: not ftpipe-opt %t/reduce.mlir 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not=error: --implicit-check-not=Stack
// RUN: not ftpipe-opt --split-input-file %t/split.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT --implicit-check-not=error: --implicit-check-not=Stack
// RUN: not ftpipe-compile %t/transpose.mlir -o %t/out 2>&1 | FileCheck %s --check-prefix=TRANSPOSE --implicit-check-not=error: --implicit-check-not=Stack
// RUN: ftpipe-opt %t/valid.mlir | FileCheck %s --check-prefix=VALID
// RUN: ftpipe-opt --irdl-file=%t/irdl.mlir %t/irdl-use.mlir | FileCheck %s --check-prefix=IRDL
// RUN: printf I > %t/fuzz-input && cat %t/transpose.mlir >> %t/fuzz-input
// RUN: ftpipe-fuzz --replay %t/fuzz-input 2>&1 | FileCheck %s --check-prefix=FUZZ
// RUN: ftpipe-fuzz --replay %t/fuzz-input -v 2>&1 | FileCheck %s --check-prefixes=FUZZ-V,FUZZ

// MLIR 19's custom parsers of linalg.transpose, linalg.broadcast and
// linalg.reduce report a bad element of `permutation = [...]` or
// `dimensions = [...]` and then dereference the null attribute that the
// failed parse returned (mlir-opt-19 dies with SIGSEGV on each file below).
// FTPipe's tools parse under a ParseGuard (include/FTPipe/ParseGuard.h): the
// first parse error is printed, located, and the tool exits with status 1;
// valid input parses as before.

//--- transpose.mlir
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // TRANSPOSE: transpose.mlir:[[@LINE+1]]:93: error: custom op 'linalg.transpose' expected integer value
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [inf, 0]
  return %0 : tensor<3x2xf32>
}

//--- broadcast.mlir
func.func @f(%v: tensor<3xf32>, %m: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // BROADCAST: <stdin>:[[@LINE+1]]:90: error: custom op 'linalg.broadcast' expected integer value
  %0 = linalg.broadcast ins(%v : tensor<3xf32>) outs(%m : tensor<2x3xf32>) dimensions = [x]
  return %0 : tensor<2x3xf32>
}

//--- reduce.mlir
func.func @f(%a: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // REDUCE: reduce.mlir:[[@LINE+1]]:87: error: custom op 'linalg.reduce' integer value too large
  %0 = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%v : tensor<3xf32>) dimensions = [99999999999999999999]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<3xf32>
}

//--- split.mlir
// With --split-input-file, the first chunk that fails to parse ends the
// tool, before any chunk is processed.
func.func @ok(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0]
  return %0 : tensor<3x2xf32>
}
// -----
func.func @bad(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // SPLIT: split.mlir:[[@LINE-2]] offset :4:94: error: expected integer value
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [-inf, 0]
  return %0 : tensor<3x2xf32>
}

//--- valid.mlir
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // VALID: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0]
  return %0 : tensor<3x2xf32>
}

// ftpipe-opt's first, guarded parse accepts the ops and types of dialects
// it does not know, such as those of an --irdl-file, which only
// MlirOptMain's parse loads.
//--- irdl.mlir
irdl.dialect @cmath {
  irdl.type @complex {
    %0 = irdl.is f32
    irdl.parameters(%0)
  }
}

//--- irdl-use.mlir
// IRDL: func.func @f(%{{.*}}: !cmath.complex<f32>)
func.func @f(%c: !cmath.complex<f32>) {
  return
}

// The fuzz target refuses such an input (its child process ends at the
// error) instead of reporting a crash.
// FUZZ-V: fuzz-input:{{[0-9]+}}:93: error: custom op 'linalg.transpose' expected integer value
// FUZZ: ftpipe-fuzz: the input ran without a finding
