//===- GraphBuilder.cpp - Scoped TOSA builder for model IR ------*- C++ -*-===//
//
// Implements GraphBuilder: scope bookkeeping, argument creation and the TOSA
// op wrappers. Result types are derived here from static shapes, so that the
// layer code reads like the reference implementations.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Dialect/FTPipe/StageAttrs.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace mlir;
using namespace mlir::ftpipe;

GraphBuilder::Scope::Scope(GraphBuilder &builder, llvm::StringRef moduleType,
                           llvm::StringRef attrName,
                           llvm::StringRef nameSegment)
    : builder(builder) {
  std::string segment = moduleType.str();
  if (!attrName.empty())
    segment += "[" + attrName.str() + "]";
  bool isRoot = builder.scopes.empty();
  builder.scopes.emplace_back(std::move(segment), nameSegment.str());
  builder.updateLoc();
  if (isRoot)
    builder.rootLoc = builder.currentLoc;
}

GraphBuilder::Scope::~Scope() {
  builder.scopes.pop_back();
  builder.updateLoc();
}

GraphBuilder::GraphBuilder(func::FuncOp func, FloatType floatType)
    : builder(func.getContext()), func(func), floatType(floatType),
      currentLoc(UnknownLoc::get(func.getContext())),
      rootLoc(UnknownLoc::get(func.getContext())) {
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
}

void GraphBuilder::updateLoc() {
  std::string path;
  for (const auto &scope : scopes) {
    if (!path.empty())
      path += "/";
    path += scope.first;
  }
  currentLoc =
      path.empty()
          ? Location(UnknownLoc::get(getContext()))
          : Location(NameLoc::get(StringAttr::get(getContext(), path)));
}

Value GraphBuilder::addInput(llvm::StringRef name,
                             llvm::ArrayRef<int64_t> shape, Type elementType) {
  Block &entry = func.getBody().front();
  Value arg = entry.addArgument(RankedTensorType::get(shape, elementType),
                                NameLoc::get(builder.getStringAttr(name)));
  argAttrs.push_back(builder.getDictionaryAttr({}));
  return arg;
}

Value GraphBuilder::addParam(llvm::StringRef leaf,
                             llvm::ArrayRef<int64_t> shape) {
  std::string name;
  for (const auto &scope : scopes) {
    if (scope.second.empty())
      continue;
    name += scope.second + ".";
  }
  name += leaf.str();
  Block &entry = func.getBody().front();
  Value arg =
      entry.addArgument(RankedTensorType::get(shape, floatType), currentLoc);
  argAttrs.push_back(builder.getDictionaryAttr(
      {builder.getNamedAttr(FTPipeDialect::kParamAttrName,
                            builder.getUnitAttr()),
       builder.getNamedAttr(FTPipeDialect::kNameAttrName,
                            builder.getStringAttr(name))}));
  return arg;
}

void GraphBuilder::finish(ValueRange results) {
  builder.create<func::ReturnOp>(rootLoc, results);
  Block &entry = func.getBody().front();
  func.setFunctionType(
      builder.getFunctionType(entry.getArgumentTypes(), TypeRange(results)));
  func.setAllArgAttrs(argAttrs);
}

void GraphBuilder::finishWithMetrics(
    Value loss, llvm::ArrayRef<std::pair<llvm::StringRef, Value>> metrics) {
  llvm::SmallVector<Value> results{loss};
  for (const auto &metric : metrics)
    results.push_back(metric.second);
  finish(results);
  for (auto [i, metric] : llvm::enumerate(metrics))
    func.setResultAttr(i + 1, stage_attrs::kMetric,
                       builder.getStringAttr(metric.first));
}

llvm::ArrayRef<int64_t> GraphBuilder::shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

Value GraphBuilder::splat(double value, llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, floatType);
  auto attr =
      DenseElementsAttr::get(type, builder.getFloatAttr(floatType, value));
  return builder.create<tosa::ConstOp>(currentLoc, type, attr);
}

Value GraphBuilder::constFloat(llvm::ArrayRef<float> values,
                               llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, floatType);
  DenseElementsAttr attr;
  if (floatType.isF32()) {
    attr = DenseElementsAttr::get(type, values);
  } else {
    llvm::SmallVector<double> wide(values.begin(), values.end());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<double>(wide));
  }
  return builder.create<tosa::ConstOp>(currentLoc, type, attr);
}

Value GraphBuilder::scalar(double value, int64_t rank) {
  return splat(value, llvm::SmallVector<int64_t>(rank, 1));
}

Value GraphBuilder::scalarI32(int32_t value, int64_t rank) {
  auto type = RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1),
                                    builder.getI32Type());
  auto attr = DenseElementsAttr::get(type, builder.getI32IntegerAttr(value));
  return builder.create<tosa::ConstOp>(currentLoc, type, attr);
}

Value GraphBuilder::lowest(int64_t rank) {
  auto type =
      RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1), floatType);
  llvm::APFloat min =
      llvm::APFloat::getLargest(floatType.getFloatSemantics(), true);
  auto attr =
      DenseElementsAttr::get(type, builder.getFloatAttr(floatType, min));
  return builder.create<tosa::ConstOp>(currentLoc, type, attr);
}

Value GraphBuilder::constI32(llvm::ArrayRef<int32_t> values,
                             llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder.getI32Type());
  auto attr = DenseElementsAttr::get(type, values);
  return builder.create<tosa::ConstOp>(currentLoc, type, attr);
}

Value GraphBuilder::iota(int64_t n) {
  llvm::SmallVector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = static_cast<int32_t>(i);
  return constI32(values, {n});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Value GraphBuilder::reshape(Value value, llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementTypeOf(value));
  return builder.create<tosa::ReshapeOp>(currentLoc, type, value, shape);
}

Value GraphBuilder::transpose(Value value, llvm::ArrayRef<int32_t> perms) {
  llvm::ArrayRef<int64_t> in = shapeOf(value);
  assert(perms.size() == in.size() && "transpose rank mismatch");
  llvm::SmallVector<int64_t> out;
  for (int32_t p : perms)
    out.push_back(in[p]);
  Value permsValue = constI32(perms, {static_cast<int64_t>(perms.size())});
  auto type = RankedTensorType::get(out, elementTypeOf(value));
  return builder.create<tosa::TransposeOp>(currentLoc, type, value, permsValue);
}

Value GraphBuilder::slice(Value value, llvm::ArrayRef<int64_t> start,
                          llvm::ArrayRef<int64_t> size) {
  auto type = RankedTensorType::get(size, elementTypeOf(value));
  return builder.create<tosa::SliceOp>(currentLoc, type, value, start, size);
}

Value GraphBuilder::convert(Value value, Type elementType) {
  auto type = RankedTensorType::get(shapeOf(value), elementType);
  return builder.create<tosa::CastOp>(currentLoc, type, value);
}

Value GraphBuilder::gather(Value values, Value indices) {
  llvm::ArrayRef<int64_t> v = shapeOf(values);
  llvm::ArrayRef<int64_t> i = shapeOf(indices);
  assert(v.size() == 3 && i.size() == 2 && v[0] == i[0] && "bad gather");
  auto type = RankedTensorType::get({v[0], i[1], v[2]}, elementTypeOf(values));
  return builder.create<tosa::GatherOp>(currentLoc, type, values, indices);
}

Value GraphBuilder::concat(ValueRange values, int32_t axis) {
  llvm::SmallVector<int64_t> shape(shapeOf(values.front()));
  shape[axis] = 0;
  for (Value value : values)
    shape[axis] += shapeOf(value)[axis];
  auto type = RankedTensorType::get(shape, elementTypeOf(values.front()));
  return builder.create<tosa::ConcatOp>(currentLoc, type, values,
                                        builder.getI32IntegerAttr(axis));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The equal-rank broadcast of two static shapes.
static llvm::SmallVector<int64_t> broadcastShape(llvm::ArrayRef<int64_t> lhs,
                                                 llvm::ArrayRef<int64_t> rhs) {
  assert(lhs.size() == rhs.size() && "TOSA broadcasting needs equal ranks");
  llvm::SmallVector<int64_t> out;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs)) {
    assert((l == r || l == 1 || r == 1) && "shapes do not broadcast");
    out.push_back(l == 1 ? r : l);
  }
  return out;
}

template <typename OpTy>
Value GraphBuilder::createBinary(Value lhs, Value rhs, Type elementType) {
  auto type = RankedTensorType::get(broadcastShape(shapeOf(lhs), shapeOf(rhs)),
                                    elementType);
  return builder.create<OpTy>(currentLoc, type, lhs, rhs);
}

template <typename OpTy> Value GraphBuilder::createUnary(Value value) {
  return builder.create<OpTy>(currentLoc, value.getType(), value);
}

Value GraphBuilder::add(Value lhs, Value rhs) {
  return createBinary<tosa::AddOp>(lhs, rhs, elementTypeOf(lhs));
}
Value GraphBuilder::sub(Value lhs, Value rhs) {
  return createBinary<tosa::SubOp>(lhs, rhs, elementTypeOf(lhs));
}
Value GraphBuilder::mul(Value lhs, Value rhs) {
  auto type = RankedTensorType::get(broadcastShape(shapeOf(lhs), shapeOf(rhs)),
                                    elementTypeOf(lhs));
  return builder.create<tosa::MulOp>(currentLoc, type, lhs, rhs,
                                     /*shift=*/uint8_t(0));
}
Value GraphBuilder::maximum(Value lhs, Value rhs) {
  return createBinary<tosa::MaximumOp>(lhs, rhs, elementTypeOf(lhs));
}
Value GraphBuilder::minimum(Value lhs, Value rhs) {
  return createBinary<tosa::MinimumOp>(lhs, rhs, elementTypeOf(lhs));
}
Value GraphBuilder::pow(Value lhs, Value rhs) {
  return createBinary<tosa::PowOp>(lhs, rhs, elementTypeOf(lhs));
}
Value GraphBuilder::greater(Value lhs, Value rhs) {
  return createBinary<tosa::GreaterOp>(lhs, rhs, builder.getI1Type());
}
Value GraphBuilder::greaterEqual(Value lhs, Value rhs) {
  return createBinary<tosa::GreaterEqualOp>(lhs, rhs, builder.getI1Type());
}
Value GraphBuilder::equal(Value lhs, Value rhs) {
  return createBinary<tosa::EqualOp>(lhs, rhs, builder.getI1Type());
}
Value GraphBuilder::logicalNot(Value value) {
  return createUnary<tosa::LogicalNotOp>(value);
}
Value GraphBuilder::select(Value pred, Value onTrue, Value onFalse) {
  llvm::SmallVector<int64_t> shape = broadcastShape(
      broadcastShape(shapeOf(pred), shapeOf(onTrue)), shapeOf(onFalse));
  auto type = RankedTensorType::get(shape, elementTypeOf(onTrue));
  return builder.create<tosa::SelectOp>(currentLoc, type, pred, onTrue,
                                        onFalse);
}
Value GraphBuilder::exp(Value value) { return createUnary<tosa::ExpOp>(value); }
Value GraphBuilder::log(Value value) { return createUnary<tosa::LogOp>(value); }
Value GraphBuilder::tanh(Value value) {
  return createUnary<tosa::TanhOp>(value);
}
Value GraphBuilder::erf(Value value) { return createUnary<tosa::ErfOp>(value); }
Value GraphBuilder::rsqrt(Value value) {
  return createUnary<tosa::RsqrtOp>(value);
}
Value GraphBuilder::reciprocal(Value value) {
  return createUnary<tosa::ReciprocalOp>(value);
}
Value GraphBuilder::sigmoid(Value value) {
  return createUnary<tosa::SigmoidOp>(value);
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

template <typename OpTy>
Value GraphBuilder::createReduce(Value value, int32_t axis) {
  llvm::SmallVector<int64_t> shape(shapeOf(value));
  assert(axis >= 0 && axis < static_cast<int32_t>(shape.size()));
  shape[axis] = 1;
  auto type = RankedTensorType::get(shape, elementTypeOf(value));
  return builder.create<OpTy>(currentLoc, type, value,
                              builder.getI32IntegerAttr(axis));
}

Value GraphBuilder::reduceSum(Value value, int32_t axis) {
  return createReduce<tosa::ReduceSumOp>(value, axis);
}
Value GraphBuilder::reduceMax(Value value, int32_t axis) {
  return createReduce<tosa::ReduceMaxOp>(value, axis);
}

Value GraphBuilder::argMax(Value value, int32_t axis) {
  llvm::SmallVector<int64_t> shape(shapeOf(value));
  assert(axis >= 0 && axis < static_cast<int32_t>(shape.size()));
  shape.erase(shape.begin() + axis);
  auto type = RankedTensorType::get(shape, builder.getI32Type());
  return builder.create<tosa::ArgMaxOp>(currentLoc, type, value,
                                        builder.getI32IntegerAttr(axis));
}

Value GraphBuilder::matmul(Value lhs, Value rhs) {
  llvm::ArrayRef<int64_t> a = shapeOf(lhs);
  llvm::ArrayRef<int64_t> b = shapeOf(rhs);
  assert(a.size() == 3 && b.size() == 3 && a[0] == b[0] && a[2] == b[1] &&
         "bad matmul shapes");
  auto type = RankedTensorType::get({a[0], a[1], b[2]}, elementTypeOf(lhs));
  return builder.create<tosa::MatMulOp>(currentLoc, type, lhs, rhs);
}
