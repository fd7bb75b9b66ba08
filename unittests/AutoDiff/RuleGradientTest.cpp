//===- RuleGradientTest.cpp - Every rule against f64 central differences --===//
//
// Torch-free numerical tests of lib/AutoDiff's rules: for each rule, a small
// f64 function using the op, differentiated by differentiateFunction, lowered
// by FTPipe's own CPU lowering (ftpipe-lower-cpu without BLAS) and run in
// MLIR's ExecutionEngine. The vector-Jacobian product the adjoint returns for
// a random output gradient dy is compared, element by element of every
// argument, with central differences of <f(x), dy> (step 1e-5, tolerance
// 1e-6 relative to the larger of the two and 1). Inputs are random with a
// fixed seed, in a range where the op is smooth. Each family runs twice: the
// adjoint recomputing the forward, and taking the values the forward saved.
// RuleFamilies.CoverEveryRule checks that the cases name every op with a
// registered rule, less the precision conversions listed there.
//
//===----------------------------------------------------------------------===//

#include "RuleTestUtil.h"

#include "FTPipe/AutoDiff/ReverseMode.h"
#include "FTPipe/Runtime/HostAllocator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;
using namespace mlir::ftpipe::autodiff::test;

namespace {

constexpr double kStep = 1e-5;
constexpr double kTolerance = 1e-6;

/// One rule's check: `source` defines `@name` (f64) using `op`.
struct RuleCase {
  std::string op;
  std::string name;
  std::string source;
  /// Float inputs are uniform in [lo, hi]; integer inputs in [0, intBound).
  double lo = -1.0, hi = 1.0;
  int64_t intBound = 2;
};

/// `@NAME` in `text` becomes `@name` (the op's name with '_' for '.').
RuleCase makeCase(const std::string &op, std::string text, double lo = -1.0,
                  double hi = 1.0, int64_t intBound = 2) {
  std::string name = op;
  std::replace(name.begin(), name.end(), '.', '_');
  for (size_t at = text.find("NAME"); at != std::string::npos;
       at = text.find("NAME"))
    text.replace(at, 4, name);
  return {op, name, text, lo, hi, intBound};
}

/// `%y = <op> %x` on a 2x3 tensor.
RuleCase tosaUnary(const std::string &op, double lo = -1.0, double hi = 1.0,
                   const std::string &attrs = "") {
  return makeCase(op,
                  "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {\n"
                  "  %y = " +
                      op + " %x " + attrs +
                      " : (tensor<2x3xf64>) -> tensor<2x3xf64>\n"
                      "  return %y : tensor<2x3xf64>\n}\n",
                  lo, hi);
}

/// `%y = <op> %a, %b` with %b (1x3) broadcast against %a (2x3).
RuleCase tosaBinary(const std::string &op, double lo = -1.0, double hi = 1.0,
                    const std::string &attrs = "") {
  return makeCase(op,
                  "func.func @NAME(%a: tensor<2x3xf64>, %b: tensor<1x3xf64>) "
                  "-> tensor<2x3xf64> {\n"
                  "  %y = " +
                      op + " %a, %b " + attrs +
                      " : (tensor<2x3xf64>, tensor<1x3xf64>) -> "
                      "tensor<2x3xf64>\n"
                      "  return %y : tensor<2x3xf64>\n}\n",
                  lo, hi);
}

/// A linalg.generic map over 5 elements whose body computes `%r` from `%a`
/// (and `%b` when `binary`) with `body`.
RuleCase scalarBody(const std::string &op, const std::string &body, bool binary,
                    double lo = -1.0, double hi = 1.0) {
  std::string args =
      binary ? "%x: tensor<5xf64>, %z: tensor<5xf64>" : "%x: tensor<5xf64>";
  std::string id = "affine_map<(i) -> (i)>";
  std::string maps = binary ? id + ", " + id + ", " + id : id + ", " + id;
  std::string ins =
      binary ? "%x, %z : tensor<5xf64>, tensor<5xf64>" : "%x : tensor<5xf64>";
  std::string blockArgs =
      binary ? "%a: f64, %b: f64, %o: f64" : "%a: f64, %o: f64";
  return makeCase(op,
                  "func.func @NAME(" + args +
                      ") -> tensor<5xf64> {\n"
                      "  %e = tensor.empty() : tensor<5xf64>\n"
                      "  %y = linalg.generic {indexing_maps = [" +
                      maps +
                      "], "
                      "iterator_types = [\"parallel\"]} ins(" +
                      ins +
                      ") "
                      "outs(%e : tensor<5xf64>) {\n"
                      "  ^bb0(" +
                      blockArgs + "):\n" + body +
                      "    linalg.yield %r : f64\n"
                      "  } -> tensor<5xf64>\n"
                      "  return %y : tensor<5xf64>\n}\n",
                  lo, hi);
}

/// A named element-wise linalg op on 5 elements, unary or binary.
RuleCase linalgElementwise(const std::string &op, bool binary, double lo = -1.0,
                           double hi = 1.0) {
  std::string args =
      binary ? "%a: tensor<5xf64>, %b: tensor<5xf64>" : "%a: tensor<5xf64>";
  std::string ins =
      binary ? "%a, %b : tensor<5xf64>, tensor<5xf64>" : "%a : tensor<5xf64>";
  return makeCase(op,
                  "func.func @NAME(" + args +
                      ") -> tensor<5xf64> {\n"
                      "  %e = tensor.empty() : tensor<5xf64>\n"
                      "  %y = " +
                      op + " ins(" + ins +
                      ") outs(%e : tensor<5xf64>) -> tensor<5xf64>\n"
                      "  return %y : tensor<5xf64>\n}\n",
                  lo, hi);
}

/// A contraction `op` of `a` and `b` accumulated into the argument `c`.
RuleCase contraction(const std::string &op, const std::string &a,
                     const std::string &b, const std::string &c) {
  return makeCase(op, "func.func @NAME(%a: " + a + ", %b: " + b + ", %c: " + c +
                          ") -> " + c + " {\n  %y = " + op +
                          " ins(%a, %b : " + a + ", " + b + ") outs(%c : " + c +
                          ") -> " + c + "\n  return %y : " + c + "\n}\n");
}

std::vector<RuleCase> tosaCases() {
  return {
      tosaBinary("tosa.add"),
      tosaBinary("tosa.sub"),
      tosaBinary("tosa.mul", -1.0, 1.0, "{shift = 0 : i8}"),
      tosaUnary("tosa.negate"),
      tosaUnary("tosa.identity"),
      tosaUnary("tosa.exp"),
      tosaUnary("tosa.log", 0.5, 2.0),
      tosaUnary("tosa.tanh"),
      tosaUnary("tosa.rsqrt", 0.5, 2.0),
      tosaUnary("tosa.reciprocal", 0.5, 2.0),
      tosaBinary("tosa.pow", 0.5, 2.0),
      tosaUnary("tosa.erf"),
      tosaUnary("tosa.sigmoid"),
      tosaBinary("tosa.maximum"),
      tosaBinary("tosa.minimum"),
      tosaUnary("tosa.clamp", -3.0, 3.0,
                "{min_int = -1 : i64, max_int = 2 : i64, min_fp = -1.0 : "
                "f64, max_fp = 2.0 : f64}"),
      tosaUnary("tosa.abs"),
      makeCase("tosa.select",
               "func.func @NAME(%p: tensor<2x3xi1>, %a: tensor<2x3xf64>, %b: "
               "tensor<1x3xf64>) -> tensor<2x3xf64> {\n"
               "  %y = tosa.select %p, %a, %b : (tensor<2x3xi1>, "
               "tensor<2x3xf64>, tensor<1x3xf64>) -> tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      makeCase("tosa.matmul",
               "func.func @NAME(%a: tensor<2x2x3xf64>, %b: tensor<2x3x4xf64>) "
               "-> tensor<2x2x4xf64> {\n"
               "  %y = tosa.matmul %a, %b : (tensor<2x2x3xf64>, "
               "tensor<2x3x4xf64>) -> tensor<2x2x4xf64>\n"
               "  return %y : tensor<2x2x4xf64>\n}\n"),
      makeCase("tosa.reshape",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<3x2xf64> {\n"
               "  %y = tosa.reshape %x {new_shape = array<i64: 3, 2>} : "
               "(tensor<2x3xf64>) -> tensor<3x2xf64>\n"
               "  return %y : tensor<3x2xf64>\n}\n"),
      makeCase("tosa.transpose",
               "func.func @NAME(%x: tensor<2x3x4xf64>) -> tensor<3x4x2xf64> "
               "{\n"
               "  %p = \"tosa.const\"() <{value = dense<[1, 2, 0]> : "
               "tensor<3xi32>}> : () -> tensor<3xi32>\n"
               "  %y = tosa.transpose %x, %p : (tensor<2x3x4xf64>, "
               "tensor<3xi32>) -> tensor<3x4x2xf64>\n"
               "  return %y : tensor<3x4x2xf64>\n}\n"),
      makeCase("tosa.slice",
               "func.func @NAME(%x: tensor<4x5xf64>) -> tensor<2x3xf64> {\n"
               "  %y = tosa.slice %x {start = array<i64: 1, 2>, size = "
               "array<i64: 2, 3>} : (tensor<4x5xf64>) -> tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      makeCase("tosa.concat",
               "func.func @NAME(%a: tensor<2x3xf64>, %b: tensor<2x2xf64>) -> "
               "tensor<2x5xf64> {\n"
               "  %y = tosa.concat %a, %b {axis = 1 : i32} : "
               "(tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x5xf64>\n"
               "  return %y : tensor<2x5xf64>\n}\n"),
      // Six rows read from four, so rows repeat and their gradients add up.
      makeCase("tosa.gather",
               "func.func @NAME(%v: tensor<1x4x3xf64>, %i: tensor<1x6xi32>) "
               "-> tensor<1x6x3xf64> {\n"
               "  %y = tosa.gather %v, %i : (tensor<1x4x3xf64>, "
               "tensor<1x6xi32>) -> tensor<1x6x3xf64>\n"
               "  return %y : tensor<1x6x3xf64>\n}\n",
               -1.0, 1.0, /*intBound=*/4),
      makeCase("tosa.reduce_sum",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<2x1xf64> {\n"
               "  %y = tosa.reduce_sum %x {axis = 1 : i32} : "
               "(tensor<2x3xf64>) -> tensor<2x1xf64>\n"
               "  return %y : tensor<2x1xf64>\n}\n"),
      // From f32 (exact in f64): the gradient is dy rounded to f32.
      makeCase("tosa.cast",
               "func.func @NAME(%x: tensor<2x3xf32>) -> tensor<2x3xf64> {\n"
               "  %y = tosa.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      makeCase("tosa.reduce_max",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<1x3xf64> {\n"
               "  %y = tosa.reduce_max %x {axis = 0 : i32} : "
               "(tensor<2x3xf64>) -> tensor<1x3xf64>\n"
               "  return %y : tensor<1x3xf64>\n}\n"),
  };
}

std::vector<RuleCase> tensorCases() {
  return {
      makeCase("tensor.extract_slice",
               "func.func @NAME(%x: tensor<4x5xf64>) -> tensor<2x3xf64> {\n"
               "  %y = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : "
               "tensor<4x5xf64> to tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      makeCase("tensor.insert_slice",
               "func.func @NAME(%s: tensor<2x3xf64>, %d: tensor<4x5xf64>) -> "
               "tensor<4x5xf64> {\n"
               "  %y = tensor.insert_slice %s into %d[1, 2] [2, 3] [1, 1] : "
               "tensor<2x3xf64> into tensor<4x5xf64>\n"
               "  return %y : tensor<4x5xf64>\n}\n"),
      makeCase("tensor.expand_shape",
               "func.func @NAME(%x: tensor<6xf64>) -> tensor<2x3xf64> {\n"
               "  %y = tensor.expand_shape %x [[0, 1]] output_shape [2, 3] : "
               "tensor<6xf64> into tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      makeCase("tensor.collapse_shape",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<6xf64> {\n"
               "  %y = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf64> "
               "into tensor<6xf64>\n"
               "  return %y : tensor<6xf64>\n}\n"),
      makeCase("tensor.cast",
               // Entry points pass static shapes (ftpipe-record-entry-abi):
               // the cast goes to a dynamic shape and back.
               "func.func @NAME(%x: tensor<4xf64>) -> tensor<4xf64> {\n"
               "  %y = tensor.cast %x : tensor<4xf64> to tensor<?xf64>\n"
               "  %z = tensor.cast %y : tensor<?xf64> to tensor<4xf64>\n"
               "  return %z : tensor<4xf64>\n}\n"),
      makeCase("tensor.pad",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<5x4xf64> {\n"
               "  %zero = arith.constant 0.0 : f64\n"
               "  %y = tensor.pad %x low[1, 0] high[2, 1] {\n"
               "  ^bb0(%i: index, %j: index):\n"
               "    tensor.yield %zero : f64\n"
               "  } : tensor<2x3xf64> to tensor<5x4xf64>\n"
               "  return %y : tensor<5x4xf64>\n}\n"),
      makeCase("tensor.concat",
               "func.func @NAME(%a: tensor<2x3xf64>, %b: tensor<1x3xf64>) -> "
               "tensor<3x3xf64> {\n"
               "  %y = tensor.concat dim(0) %a, %b : (tensor<2x3xf64>, "
               "tensor<1x3xf64>) -> tensor<3x3xf64>\n"
               "  return %y : tensor<3x3xf64>\n}\n"),
      makeCase("tensor.extract",
               "func.func @NAME(%x: tensor<2x3xf64>) -> f64 {\n"
               "  %i = arith.constant 1 : index\n"
               "  %j = arith.constant 2 : index\n"
               "  %y = tensor.extract %x[%i, %j] : tensor<2x3xf64>\n"
               "  return %y : f64\n}\n"),
  };
}

std::vector<RuleCase> linalgCases() {
  return {
      // x * w with w read along rows (a loop absent from w's map reduces).
      makeCase("linalg.generic",
               "#map = affine_map<(i, j) -> (i, j)>\n"
               "#row = affine_map<(i, j) -> (i)>\n"
               "func.func @NAME(%x: tensor<2x3xf64>, %w: tensor<2xf64>) -> "
               "tensor<2x3xf64> {\n"
               "  %e = tensor.empty() : tensor<2x3xf64>\n"
               "  %y = linalg.generic {indexing_maps = [#map, #row, #map], "
               "iterator_types = [\"parallel\", \"parallel\"]} ins(%x, %w : "
               "tensor<2x3xf64>, tensor<2xf64>) outs(%e : tensor<2x3xf64>) {\n"
               "  ^bb0(%a: f64, %b: f64, %o: f64):\n"
               "    %m = arith.mulf %a, %b : f64\n"
               "    linalg.yield %m : f64\n"
               "  } -> tensor<2x3xf64>\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      contraction("linalg.matmul", "tensor<2x3xf64>", "tensor<3x4xf64>",
                  "tensor<2x4xf64>"),
      contraction("linalg.batch_matmul", "tensor<2x2x3xf64>",
                  "tensor<2x3x4xf64>", "tensor<2x2x4xf64>"),
      contraction("linalg.matmul_transpose_a", "tensor<3x2xf64>",
                  "tensor<3x4xf64>", "tensor<2x4xf64>"),
      contraction("linalg.matmul_transpose_b", "tensor<2x3xf64>",
                  "tensor<4x3xf64>", "tensor<2x4xf64>"),
      contraction("linalg.batch_matmul_transpose_a", "tensor<2x3x2xf64>",
                  "tensor<2x3x4xf64>", "tensor<2x2x4xf64>"),
      contraction("linalg.batch_matmul_transpose_b", "tensor<2x2x3xf64>",
                  "tensor<2x4x3xf64>", "tensor<2x2x4xf64>"),
      contraction("linalg.matvec", "tensor<2x3xf64>", "tensor<3xf64>",
                  "tensor<2xf64>"),
      contraction("linalg.vecmat", "tensor<2xf64>", "tensor<2x3xf64>",
                  "tensor<3xf64>"),
      contraction("linalg.dot", "tensor<3xf64>", "tensor<3xf64>",
                  "tensor<f64>"),
      makeCase("linalg.transpose",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<3x2xf64> {\n"
               "  %e = tensor.empty() : tensor<3x2xf64>\n"
               "  %y = linalg.transpose ins(%x : tensor<2x3xf64>) outs(%e : "
               "tensor<3x2xf64>) permutation = [1, 0]\n"
               "  return %y : tensor<3x2xf64>\n}\n"),
      makeCase("linalg.broadcast",
               "func.func @NAME(%x: tensor<3xf64>) -> tensor<2x3xf64> {\n"
               "  %e = tensor.empty() : tensor<2x3xf64>\n"
               "  %y = linalg.broadcast ins(%x : tensor<3xf64>) outs(%e : "
               "tensor<2x3xf64>) dimensions = [0]\n"
               "  return %y : tensor<2x3xf64>\n}\n"),
      // A max reduction: the gradient goes to the maximum of each row.
      makeCase("linalg.reduce",
               "func.func @NAME(%x: tensor<2x3xf64>) -> tensor<2xf64> {\n"
               "  %low = arith.constant -1.0e30 : f64\n"
               "  %e = tensor.empty() : tensor<2xf64>\n"
               "  %init = linalg.fill ins(%low : f64) outs(%e : "
               "tensor<2xf64>) -> tensor<2xf64>\n"
               "  %y = linalg.reduce ins(%x : tensor<2x3xf64>) outs(%init : "
               "tensor<2xf64>) dimensions = [1]\n"
               "    (%in: f64, %acc: f64) {\n"
               "      %m = arith.maximumf %in, %acc : f64\n"
               "      linalg.yield %m : f64\n"
               "    }\n"
               "  return %y : tensor<2xf64>\n}\n"),
      makeCase("linalg.map",
               "func.func @NAME(%a: tensor<5xf64>, %b: tensor<5xf64>) -> "
               "tensor<5xf64> {\n"
               "  %e = tensor.empty() : tensor<5xf64>\n"
               "  %y = linalg.map ins(%a, %b : tensor<5xf64>, tensor<5xf64>) "
               "outs(%e : tensor<5xf64>)\n"
               "    (%x: f64, %z: f64) {\n"
               "      %m = arith.mulf %x, %z : f64\n"
               "      linalg.yield %m : f64\n"
               "    }\n"
               "  return %y : tensor<5xf64>\n}\n"),
      linalgElementwise("linalg.copy", /*binary=*/false),
      linalgElementwise("linalg.add", /*binary=*/true),
      linalgElementwise("linalg.sub", /*binary=*/true),
      linalgElementwise("linalg.mul", /*binary=*/true),
      linalgElementwise("linalg.div", /*binary=*/true, 0.5, 2.0),
      linalgElementwise("linalg.exp", /*binary=*/false),
      linalgElementwise("linalg.log", /*binary=*/false, 0.5, 2.0),
      linalgElementwise("linalg.negf", /*binary=*/false),
      linalgElementwise("linalg.max", /*binary=*/true),
      linalgElementwise("linalg.min", /*binary=*/true),
  };
}

/// The arith and math rules are tangents inside linalg bodies.
std::vector<RuleCase> arithMathCases() {
  auto binary = [](const std::string &op, double lo = -1.0, double hi = 1.0) {
    return scalarBody(op, "    %r = " + op + " %a, %b : f64\n", true, lo, hi);
  };
  auto unary = [](const std::string &op, double lo = -1.0, double hi = 1.0) {
    return scalarBody(op, "    %r = " + op + " %a : f64\n", false, lo, hi);
  };
  return {
      binary("arith.addf"),
      binary("arith.subf"),
      binary("arith.mulf"),
      binary("arith.divf", 0.5, 2.0),
      unary("arith.negf"),
      binary("arith.maximumf"),
      binary("arith.maxnumf"),
      binary("arith.minimumf"),
      binary("arith.minnumf"),
      scalarBody("arith.select",
                 "    %zero = arith.constant 0.0 : f64\n"
                 "    %p = arith.cmpf ogt, %a, %zero : f64\n"
                 "    %r = arith.select %p, %a, %b : f64\n",
                 true),
      // The comparison's tangent is zero: relu(a) * a.
      scalarBody("arith.cmpf",
                 "    %zero = arith.constant 0.0 : f64\n"
                 "    %p = arith.cmpf olt, %a, %zero : f64\n"
                 "    %m = arith.select %p, %zero, %a : f64\n"
                 "    %r = arith.mulf %m, %a : f64\n",
                 false),
      // Conversions to integers have zero tangents: trunc(a) * a.
      scalarBody("arith.fptosi",
                 "    %i = arith.fptosi %a : f64 to i32\n"
                 "    %f = arith.sitofp %i : i32 to f64\n"
                 "    %r = arith.mulf %f, %a : f64\n",
                 false, 0.2, 3.8),
      scalarBody("arith.fptoui",
                 "    %i = arith.fptoui %a : f64 to i32\n"
                 "    %f = arith.uitofp %i : i32 to f64\n"
                 "    %r = arith.mulf %f, %a : f64\n",
                 false, 0.2, 3.8),
      unary("math.exp"),
      unary("math.log", 0.5, 2.0),
      unary("math.tanh"),
      unary("math.sqrt", 0.5, 2.0),
      unary("math.rsqrt", 0.5, 2.0),
      unary("math.erf"),
      scalarBody("math.fpowi",
                 "    %n = arith.constant 3 : i32\n"
                 "    %r = math.fpowi %a, %n : f64, i32\n",
                 false),
      binary("math.powf", 0.5, 2.0),
      unary("math.absf"),
      unary("math.sin"),
      unary("math.cos"),
  };
}

/// Rules whose cases compute in a narrower float: central differences
/// through a rounded intermediate cannot reach 1e-6, so only their lit cases
/// (test/AutoDiff) check them.
const char *const kPrecisionConversions[] = {"arith.extf", "arith.truncf"};

/// A tensor (or scalar) of doubles with its shape; stored in the element type
/// the function expects when passed.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t elementBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// `value` as the element type `type` holds it (f32 rounds).
double representable(Type type, double value) {
  return type.isF32() ? static_cast<double>(static_cast<float>(value)) : value;
}

void store(Type type, double value, char *at) {
  if (type.isF64()) {
    std::memcpy(at, &value, 8);
  } else if (type.isF32()) {
    float f = static_cast<float>(value);
    std::memcpy(at, &f, 4);
  } else if (type.isInteger(1) || type.isInteger(8)) {
    *reinterpret_cast<int8_t *>(at) = static_cast<int8_t>(value);
  } else if (type.isInteger(32)) {
    int32_t i = static_cast<int32_t>(value);
    std::memcpy(at, &i, 4);
  } else {
    int64_t i = static_cast<int64_t>(value);
    std::memcpy(at, &i, 8);
  }
}

double load(Type type, const char *at) {
  if (type.isF64()) {
    double d;
    std::memcpy(&d, at, 8);
    return d;
  }
  float f;
  std::memcpy(&f, at, 4);
  return f;
}

/// A module of forward functions and their adjoints, lowered and compiled.
class Compiled {
public:
  /// Parses `cases`' functions into one module, differentiates each with
  /// respect to all its float arguments (adjoint `@<name>_adjoint`), with
  /// recomputation or with saved values, lowers and compiles it. Records a
  /// failure and returns null on error.
  static std::unique_ptr<Compiled>
  build(MLIRContext &context, ArrayRef<RuleCase> cases, bool recompute);

  /// Runs `@name` on `args`; returns its results (freeing their buffers).
  std::vector<Tensor> call(const std::string &name,
                           ArrayRef<Tensor> args) const;

  /// The forward's argument and result types (before lowering).
  SmallVector<Type> argTypes(const std::string &name) const {
    return types.lookup(name).first;
  }
  SmallVector<Type> resultTypes(const std::string &name) const {
    return types.lookup(name).second;
  }
  /// How many saved values `@name` returns after its result.
  unsigned numSaved(const std::string &name) const {
    return saved.lookup(name);
  }

private:
  std::unique_ptr<ExecutionEngine> engine;
  llvm::StringMap<std::pair<SmallVector<Type>, SmallVector<Type>>> types;
  llvm::StringMap<unsigned> saved;
};

std::unique_ptr<Compiled> Compiled::build(MLIRContext &context,
                                          ArrayRef<RuleCase> cases,
                                          bool recompute) {
  std::string source;
  for (const RuleCase &c : cases)
    source += c.source;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module) {
    ADD_FAILURE() << "cannot parse the cases";
    return nullptr;
  }
  auto result = std::make_unique<Compiled>();
  SmallVector<func::FuncOp> forwards(module->getOps<func::FuncOp>());
  for (func::FuncOp forward : forwards) {
    ReverseModeOptions options;
    for (Type type : forward.getArgumentTypes())
      options.activeArguments.push_back(isDifferentiable(type));
    options.activeResults.assign(forward.getNumResults(), true);
    options.backwardName = (forward.getSymName() + "_adjoint").str();
    options.recompute = recompute;
    FailureOr<ReverseModeResult> adjoint =
        differentiateFunction(forward, options);
    if (failed(adjoint)) {
      ADD_FAILURE() << "cannot differentiate @" << forward.getSymName().str();
      return nullptr;
    }
    adjoint->backward.setPublic();
    result->saved[forward.getSymName()] = adjoint->numSaved;
    for (func::FuncOp f : {forward, adjoint->backward})
      result->types[f.getSymName()] = {SmallVector<Type>(f.getArgumentTypes()),
                                       SmallVector<Type>(f.getResultTypes())};
  }
  // ftpipe-lower-cpu does not bufferize tensor.concat (MLIR 19 has no
  // bufferization model for it), so it becomes insert_slice ops first.
  RewritePatternSet patterns(&context);
  tensor::populateDecomposeTensorConcatPatterns(patterns);
  if (failed(applyPatternsAndFoldGreedily(*module, std::move(patterns)))) {
    ADD_FAILURE() << "cannot decompose tensor.concat";
    return nullptr;
  }
  PassManager pm(&context);
  CPULoweringOptions lowering;
  lowering.blas = false;
  lowering.cInterface = false;
  buildCPULoweringPipeline(pm, lowering);
  if (failed(pm.run(*module))) {
    ADD_FAILURE() << "the CPU lowering failed";
    return nullptr;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions options;
  // memrefCopy; libFTPipeCPUKernels (linked) has the allocator.
  StringRef libraries[] = {FTPIPE_MLIR_C_RUNNER_UTILS};
  options.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    ADD_FAILURE() << llvm::toString(engine.takeError());
    return nullptr;
  }
  result->engine = std::move(*engine);
  return result;
}

std::vector<Tensor> Compiled::call(const std::string &name,
                                   ArrayRef<Tensor> args) const {
  // Lowered, a memref argument is (allocated, aligned, offset, sizes...,
  // strides...) and a scalar one itself; results come back as one struct of
  // the same 8-byte fields.
  SmallVector<Type> argTy = argTypes(name), resultTy = resultTypes(name);
  std::vector<std::vector<char>> storage(args.size());
  std::vector<std::vector<int64_t>> words(args.size());
  SmallVector<void *> packed;
  for (auto [i, type] : llvm::enumerate(argTy)) {
    const Tensor &arg = args[i];
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor) {
      words[i].resize(1);
      store(type, arg.values.front(), reinterpret_cast<char *>(&words[i][0]));
      packed.push_back(&words[i][0]);
      continue;
    }
    Type element = tensor.getElementType();
    storage[i].resize(arg.values.size() * elementBytes(element) + 1);
    for (auto [k, v] : llvm::enumerate(arg.values))
      store(element, v, &storage[i][k * elementBytes(element)]);
    int64_t rank = arg.shape.size();
    std::vector<int64_t> &w = words[i];
    w.assign(3 + 2 * rank, 0);
    int64_t base = reinterpret_cast<int64_t>(storage[i].data());
    w[0] = w[1] = base;
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      w[3 + d] = arg.shape[d];
      w[3 + rank + d] = stride;
      stride *= arg.shape[d];
    }
    for (int64_t &field : w)
      packed.push_back(&field);
  }
  size_t resultWords = 0;
  for (Type type : resultTy)
    resultWords += isa<RankedTensorType>(type)
                       ? 3 + 2 * cast<RankedTensorType>(type).getRank()
                       : 1;
  std::vector<int64_t> results(resultWords);
  packed.push_back(results.data());
  if (llvm::Error error = engine->invokePacked(name, packed)) {
    ADD_FAILURE() << "@" << name << ": " << llvm::toString(std::move(error));
    return {};
  }
  std::vector<Tensor> out;
  std::set<void *> buffers;
  size_t at = 0;
  for (Type type : resultTy) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor) {
      out.push_back({{}, {load(type, reinterpret_cast<char *>(&results[at]))}});
      ++at;
      continue;
    }
    int64_t rank = tensor.getRank();
    void *allocated = reinterpret_cast<void *>(results[at]);
    const char *aligned = reinterpret_cast<const char *>(results[at + 1]);
    int64_t offset = results[at + 2];
    Tensor t;
    t.shape.assign(&results[at + 3], &results[at + 3] + rank);
    std::vector<int64_t> strides(&results[at + 3 + rank],
                                 &results[at + 3 + 2 * rank]);
    size_t bytes = elementBytes(tensor.getElementType());
    for (int64_t k = 0, n = numElements(t.shape); k < n; ++k) {
      int64_t position = offset, rest = k;
      for (int64_t d = rank - 1; d >= 0; --d) {
        position += rest % t.shape[d] * strides[d];
        rest /= t.shape[d];
      }
      t.values.push_back(
          load(tensor.getElementType(), aligned + position * bytes));
    }
    out.push_back(std::move(t));
    buffers.insert(allocated);
    at += 3 + 2 * rank;
  }
  // Results are the caller's to free, once each and only after all are read:
  // several may share a buffer (a forward returning its result also as a
  // saved value).
  for (void *buffer : buffers)
    _mlir_memref_to_llvm_free(buffer);
  return out;
}

/// Random inputs for `types` (static shapes): floats in [lo, hi], i1 and
/// integers in [0, intBound).
std::vector<Tensor> randomInputs(ArrayRef<Type> types, const RuleCase &c,
                                 std::mt19937_64 &rng) {
  std::vector<Tensor> inputs;
  for (Type type : types) {
    Tensor t;
    Type element = type;
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
      element = tensor.getElementType();
    }
    std::uniform_real_distribution<double> real(c.lo, c.hi);
    std::uniform_int_distribution<int64_t> integer(
        0, element.isInteger(1) ? 1 : c.intBound - 1);
    for (int64_t k = 0, n = numElements(t.shape); k < n; ++k)
      t.values.push_back(isa<FloatType>(element)
                             ? representable(element, real(rng))
                             : static_cast<double>(integer(rng)));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

double dot(const Tensor &a, const Tensor &b) {
  double sum = 0;
  for (auto [x, y] : llvm::zip_equal(a.values, b.values))
    sum += x * y;
  return sum;
}

/// Checks the adjoint of `c` against central differences of its forward;
/// raises `worst` to the largest error seen (relative to the scale).
void checkRule(const Compiled &compiled, const RuleCase &c, uint64_t seed,
               double &worst) {
  SCOPED_TRACE("rule of " + c.op + " (@" + c.name + ")");
  std::mt19937_64 rng(seed);
  SmallVector<Type> types = compiled.argTypes(c.name);
  std::vector<Tensor> x = randomInputs(types, c, rng);
  // The result, then the values the adjoint needs without recomputation.
  std::vector<Tensor> y = compiled.call(c.name, x);
  ASSERT_EQ(y.size(), 1u + compiled.numSaved(c.name));
  Tensor dy = y.front();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (double &v : dy.values)
    v = real(rng);
  std::vector<Tensor> adjointArgs = x;
  adjointArgs.insert(adjointArgs.end(), y.begin() + 1, y.end());
  adjointArgs.push_back(dy);
  std::vector<Tensor> gradients =
      compiled.call(c.name + "_adjoint", adjointArgs);
  // <f(at), dy>; NaN (failing the comparison) if the call failed.
  auto objective = [&](ArrayRef<Tensor> at) {
    std::vector<Tensor> out = compiled.call(c.name, at);
    return out.empty() ? std::nan("") : dot(out.front(), dy);
  };
  size_t next = 0, compared = 0;
  for (auto [i, type] : llvm::enumerate(types)) {
    if (!isDifferentiable(type))
      continue;
    ASSERT_LT(next, gradients.size());
    const Tensor &gradient = gradients[next++];
    ASSERT_EQ(gradient.values.size(), x[i].values.size()) << "argument " << i;
    for (size_t k = 0; k < x[i].values.size(); ++k) {
      std::vector<Tensor> plus = x, minus = x;
      // Divided by the step the argument's type can hold (an f32 argument
      // rounds x +- 1e-5).
      Type element = getElementTypeOrSelf(type);
      plus[i].values[k] = representable(element, x[i].values[k] + kStep);
      minus[i].values[k] = representable(element, x[i].values[k] - kStep);
      double difference = (objective(plus) - objective(minus)) /
                          (plus[i].values[k] - minus[i].values[k]);
      double derived = gradient.values[k];
      double scale = std::max({1.0, std::fabs(difference), std::fabs(derived)});
      EXPECT_LE(std::fabs(derived - difference), kTolerance * scale)
          << "argument " << i << " element " << k << ": adjoint " << derived
          << ", central difference " << difference;
      worst = std::max(worst, std::fabs(derived - difference) / scale);
      ++compared;
    }
  }
  EXPECT_EQ(next, gradients.size());
  EXPECT_GT(compared, 0u);
}

/// Parameter: whether the adjoint recomputes the forward (else it takes the
/// values the forward saved).
class RuleGradients : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { initRuleContext(context); }

  void checkFamily(const std::vector<RuleCase> &cases) {
    std::unique_ptr<Compiled> compiled =
        Compiled::build(context, cases, /*recompute=*/GetParam());
    ASSERT_TRUE(compiled);
    uint64_t seed = 1;
    double worst = 0;
    for (const RuleCase &c : cases)
      checkRule(*compiled, c, seed++, worst);
    // The margin below the tolerance, for the docs.
    llvm::outs() << cases.size() << " rules, worst error " << worst << "\n";
  }

  MLIRContext context;
};

TEST_P(RuleGradients, Tosa) { checkFamily(tosaCases()); }
TEST_P(RuleGradients, Tensor) { checkFamily(tensorCases()); }
TEST_P(RuleGradients, Linalg) { checkFamily(linalgCases()); }
TEST_P(RuleGradients, ArithMath) { checkFamily(arithMathCases()); }

INSTANTIATE_TEST_SUITE_P(, RuleGradients, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "Recompute" : "SavedValues";
                         });

TEST(RuleFamilies, CoverEveryRule) {
  MLIRContext context;
  initRuleContext(context);
  std::set<std::string> tested(std::begin(kPrecisionConversions),
                               std::end(kPrecisionConversions));
  for (auto family : {tosaCases, tensorCases, linalgCases, arithMathCases})
    for (const RuleCase &c : family())
      tested.insert(c.op);
  std::set<std::string> rules = opsWithRules(context);
  EXPECT_GT(rules.size(), 80u);
  for (const std::string &op : rules)
    EXPECT_TRUE(tested.count(op)) << "no numerical case for the rule of " << op;
  for (const std::string &op : tested)
    EXPECT_TRUE(rules.count(op)) << op << " has a case but no rule";
}

} // namespace
