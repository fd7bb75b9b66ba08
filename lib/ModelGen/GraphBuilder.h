//===- GraphBuilder.h - Scoped TOSA builder for model IR --------*- C++ -*-===//
//
// The one place where ftpipe-model-gen creates IR. It keeps the module scope
// stack (for NameLocs in FTPipe's tracer format, "Type[attr]/Type[attr]/...")
// and the matching state-dict prefix (for `ftpipe.name`), turns weights into
// marked function arguments, and wraps the TOSA ops the layers use with result
// types computed from static shapes (equal-rank broadcasting, as TOSA wants).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_MODELGEN_GRAPHBUILDER_H
#define FTPIPE_LIB_MODELGEN_GRAPHBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace ftpipe {

/// Builds the body of one function on static-shaped tensors.
class GraphBuilder {
public:
  /// Builds into the (empty) body of `func`; floats are of `floatType`.
  GraphBuilder(func::FuncOp func, FloatType floatType);

  /// RAII guard for one module scope; see `enter`.
  class [[nodiscard]] Scope {
  public:
    Scope(GraphBuilder &builder, llvm::StringRef moduleType,
          llvm::StringRef attrName, llvm::StringRef nameSegment);
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    ~Scope();

  private:
    GraphBuilder &builder;
  };

  /// Enters submodule `attrName` of class `moduleType`: ops get the location
  /// ".../moduleType[attrName]" and parameters the name prefix
  /// "...attrName.". An empty `attrName` is the root module ("moduleType").
  Scope enter(llvm::StringRef moduleType, llvm::StringRef attrName = {}) {
    return Scope(*this, moduleType, attrName, attrName);
  }
  /// Same with an index as the attribute (ModuleList entries: "T5Block[3]").
  Scope enter(llvm::StringRef moduleType, int64_t index) {
    std::string attr = std::to_string(index);
    return Scope(*this, moduleType, attr, attr);
  }
  /// Same where the state-dict path differs from the scope path: a module
  /// list the tracer does not record (T5Block's `layer`: scope
  /// "T5LayerFF[2]", names "layer.2.").
  Scope enter(llvm::StringRef moduleType, llvm::StringRef attrName,
              llvm::StringRef nameSegment) {
    return Scope(*this, moduleType, attrName, nameSegment);
  }

  /// The current scope path as a location.
  Location getLoc() const { return currentLoc; }
  FloatType getFloatType() const { return floatType; }
  MLIRContext *getContext() const { return builder.getContext(); }

  /// Adds a data input argument (no `ftpipe.param`).
  Value addInput(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                 Type elementType);
  /// Adds a trainable weight of the current scope: an argument with
  /// `ftpipe.param` and `ftpipe.name` = state-dict prefix + `leaf`.
  Value addParam(llvm::StringRef leaf, llvm::ArrayRef<int64_t> shape);

  /// Ends the function with `return results` (located at the top module)
  /// and fixes its type and argument attributes.
  void finish(ValueRange results);
  /// Ends the function with `return loss, metrics...`, each metric result
  /// named by `ftpipe.metric` (StageAttrs.h).
  void
  finishWithMetrics(Value loss,
                    llvm::ArrayRef<std::pair<llvm::StringRef, Value>> metrics);

  /// Static shape of a ranked tensor value.
  static llvm::ArrayRef<int64_t> shapeOf(Value value);

  // Constants, all in the current scope.
  /// A float tensor of `shape` filled with `value`.
  Value splat(double value, llvm::ArrayRef<int64_t> shape);
  /// A float tensor of `shape` holding `values` (row-major).
  Value constFloat(llvm::ArrayRef<float> values, llvm::ArrayRef<int64_t> shape);
  /// A float tensor of rank `rank`, all dimensions 1, holding `value`.
  Value scalar(double value, int64_t rank);
  /// An i32 tensor of rank `rank`, all dimensions 1, holding `value`.
  Value scalarI32(int32_t value, int64_t rank);
  /// The lowest finite float (torch.finfo(dtype).min), rank `rank`.
  Value lowest(int64_t rank);
  /// An i32 tensor of `shape` holding `values` (row-major).
  Value constI32(llvm::ArrayRef<int32_t> values, llvm::ArrayRef<int64_t> shape);
  /// 0, 1, ..., n-1 as i32 of shape [n].
  Value iota(int64_t n);

  // Data movement.
  Value reshape(Value value, llvm::ArrayRef<int64_t> shape);
  Value transpose(Value value, llvm::ArrayRef<int32_t> perms);
  Value slice(Value value, llvm::ArrayRef<int64_t> start,
              llvm::ArrayRef<int64_t> size);
  Value convert(Value value, Type elementType);
  /// tosa.gather: values [N,K,C], indices [N,W] (i32) -> [N,W,C].
  Value gather(Value values, Value indices);
  /// tosa.concat of equal-rank tensors along `axis`.
  Value concat(ValueRange values, int32_t axis);

  // Elementwise with broadcasting over equal ranks.
  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value maximum(Value lhs, Value rhs);
  Value minimum(Value lhs, Value rhs);
  Value pow(Value lhs, Value rhs);
  Value greater(Value lhs, Value rhs);
  Value greaterEqual(Value lhs, Value rhs);
  Value equal(Value lhs, Value rhs);
  Value logicalNot(Value value);
  Value select(Value pred, Value onTrue, Value onFalse);
  Value exp(Value value);
  Value log(Value value);
  Value tanh(Value value);
  Value erf(Value value);
  Value rsqrt(Value value);
  Value reciprocal(Value value);
  Value sigmoid(Value value);

  // Reductions (the axis is kept with size 1, as TOSA does).
  Value reduceSum(Value value, int32_t axis);
  /// tosa.argmax: i32 indices of the largest values along `axis`, which is
  /// dropped from the shape (the first index among equal values).
  Value argMax(Value value, int32_t axis);
  Value reduceMax(Value value, int32_t axis);

  // Contractions.
  /// tosa.matmul: [N,H,C] x [N,C,W] -> [N,H,W].
  Value matmul(Value lhs, Value rhs);

private:
  template <typename OpTy>
  Value createBinary(Value lhs, Value rhs, Type elementType);
  template <typename OpTy> Value createUnary(Value value);
  template <typename OpTy> Value createReduce(Value value, int32_t axis);
  void updateLoc();

  OpBuilder builder;
  func::FuncOp func;
  FloatType floatType;
  Location currentLoc;
  /// The scope of the first module entered: the top module.
  Location rootLoc;
  /// One entry per open scope: its path segment and state-dict segment.
  llvm::SmallVector<std::pair<std::string, std::string>> scopes;
  llvm::SmallVector<DictionaryAttr> argAttrs;
};

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_MODELGEN_GRAPHBUILDER_H
