//===- Layers.cpp - Linear maps, embeddings, norms, activations -*- C++ -*-===//
//
// The weight-holding modules of Layers.h and softmax. Tensors keep HF's
// layout ([B, S, H] activations, [out, in] Linear and [in, out] Conv1D
// weights) so that shapes in the IR read like the reference model.
//
//===----------------------------------------------------------------------===//

#include "Layers.h"

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ftpipe;

/// Product of all but the last dimension: the number of tokens.
static int64_t leadingElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape.drop_back())
    n *= d;
  return n;
}

/// `shape` with its last dimension replaced by `last`.
static llvm::SmallVector<int64_t> withLast(llvm::ArrayRef<int64_t> shape,
                                           int64_t last) {
  llvm::SmallVector<int64_t> out(shape);
  out.back() = last;
  return out;
}

/// Reshapes a per-feature vector [H] so that it broadcasts against a tensor
/// of rank `rank`: [1, ..., 1, H].
static Value broadcastVector(GraphBuilder &b, Value vector, int64_t rank) {
  llvm::SmallVector<int64_t> shape(rank, 1);
  shape.back() = GraphBuilder::shapeOf(vector)[0];
  return b.reshape(vector, shape);
}

/// x [..., in] times `weight` [in, out] (+ `bias` [out] when given) as
/// tosa.matmul on the flattened tokens [1, tokens, in].
static Value matmulTokens(GraphBuilder &b, Value x, Value weight, Value bias) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  llvm::ArrayRef<int64_t> w = GraphBuilder::shapeOf(weight);
  Value rhs = b.reshape(weight, {1, w[0], w[1]});
  Value flat = b.reshape(x, {1, leadingElements(shape), shape.back()});
  Value y = b.reshape(b.matmul(flat, rhs), withLast(shape, w[1]));
  if (!bias)
    return y;
  return b.add(y, broadcastVector(b, bias, shape.size()));
}

/// nn.Linear's x W^T: TOSA's fully_connected wants constant weights
/// (tosa-validate's strict spec alignment rejects arguments), so the
/// weight [out, in] is transposed and fed to tosa.matmul.
static Value linearWithTransposedWeight(GraphBuilder &b, Value x, Value weight,
                                        Value bias) {
  return matmulTokens(b, x, b.transpose(weight, {1, 0}), bias);
}

Value mlir::ftpipe::linear(GraphBuilder &b, llvm::StringRef attrName, Value x,
                           int64_t outFeatures, bool withBias) {
  auto scope = b.enter("Linear", attrName);
  int64_t in = GraphBuilder::shapeOf(x).back();
  Value weight = b.addParam("weight", {outFeatures, in});
  Value bias = withBias ? b.addParam("bias", {outFeatures}) : Value();
  return linearWithTransposedWeight(b, x, weight, bias);
}

Value mlir::ftpipe::linearWithWeight(GraphBuilder &b, llvm::StringRef attrName,
                                     Value x, Value weight) {
  auto scope = b.enter("Linear", attrName);
  return linearWithTransposedWeight(b, x, weight, Value());
}

Value mlir::ftpipe::conv1d(GraphBuilder &b, llvm::StringRef attrName, Value x,
                           int64_t nf) {
  auto scope = b.enter("Conv1D", attrName);
  int64_t nx = GraphBuilder::shapeOf(x).back();
  Value weight = b.addParam("weight", {nx, nf});
  Value bias = b.addParam("bias", {nf});
  return matmulTokens(b, x, weight, bias);
}

Value mlir::ftpipe::embeddingLookup(GraphBuilder &b, Value table, Value ids,
                                    std::optional<int64_t> paddingIdx) {
  llvm::ArrayRef<int64_t> tableShape = GraphBuilder::shapeOf(table);
  llvm::ArrayRef<int64_t> idShape = GraphBuilder::shapeOf(ids);
  int64_t tokens = idShape[0] * idShape[1];
  Value values = b.reshape(table, {1, tableShape[0], tableShape[1]});
  Value rows = b.gather(values, b.reshape(ids, {1, tokens}));
  if (paddingIdx) {
    Operation *gather = rows.getDefiningOp();
    gather->setAttr(FTPipeDialect::kPaddingRowAttrName,
                    IntegerAttr::get(IntegerType::get(gather->getContext(), 64),
                                     *paddingIdx));
  }
  return b.reshape(rows, {idShape[0], idShape[1], tableShape[1]});
}

Value mlir::ftpipe::embedding(GraphBuilder &b, llvm::StringRef attrName,
                              Value ids, int64_t num, int64_t dim,
                              std::optional<int64_t> paddingIdx) {
  auto scope = b.enter("Embedding", attrName);
  Value weight = b.addParam("weight", {num, dim});
  return embeddingLookup(b, weight, ids, paddingIdx);
}

Value mlir::ftpipe::positionEmbedding(GraphBuilder &b, llvm::StringRef attrName,
                                      int64_t num, int64_t dim,
                                      int64_t seqLen) {
  auto scope = b.enter("Embedding", attrName);
  Value weight = b.addParam("weight", {num, dim});
  Value rows = b.slice(weight, {0, 0}, {seqLen, dim});
  return b.reshape(rows, {1, seqLen, dim});
}

/// x * rsqrt(mean_last(v) + eps) where `v` is what the variance is taken
/// of; shared by LayerNorm (centred) and the RMS norms (raw).
static Value normalize(GraphBuilder &b, Value x, double eps) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  int64_t rank = shape.size();
  int32_t axis = rank - 1;
  Value sumSquare = b.reduceSum(b.mul(x, x), axis);
  Value meanSquare = b.mul(sumSquare, b.scalar(1.0 / shape.back(), rank));
  Value inv = b.rsqrt(b.add(meanSquare, b.scalar(eps, rank)));
  return b.mul(x, inv);
}

Value mlir::ftpipe::layerNorm(GraphBuilder &b, llvm::StringRef attrName,
                              Value x, double eps) {
  auto scope = b.enter("LayerNorm", attrName);
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  int64_t rank = shape.size();
  Value weight = b.addParam("weight", {shape.back()});
  Value bias = b.addParam("bias", {shape.back()});
  Value sum = b.reduceSum(x, rank - 1);
  Value mean = b.mul(sum, b.scalar(1.0 / shape.back(), rank));
  Value y = normalize(b, b.sub(x, mean), eps);
  y = b.mul(y, broadcastVector(b, weight, rank));
  return b.add(y, broadcastVector(b, bias, rank));
}

Value mlir::ftpipe::rmsNorm(GraphBuilder &b, llvm::StringRef moduleType,
                            llvm::StringRef attrName, Value x, double eps) {
  auto scope = b.enter(moduleType, attrName);
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  Value weight = b.addParam("weight", {shape.back()});
  Value y = normalize(b, x, eps);
  return b.mul(broadcastVector(b, weight, shape.size()), y);
}

Value mlir::ftpipe::activation(GraphBuilder &b, Activation kind,
                               llvm::StringRef attrName, Value x) {
  int64_t rank = GraphBuilder::shapeOf(x).size();
  switch (kind) {
  case Activation::Gelu: {
    // x * 0.5 * (1 + erf(x / sqrt(2)))
    auto scope = b.enter("GELUActivation", attrName);
    Value e = b.erf(b.mul(x, b.scalar(1.0 / std::sqrt(2.0), rank)));
    Value half = b.mul(x, b.scalar(0.5, rank));
    return b.mul(half, b.add(e, b.scalar(1.0, rank)));
  }
  case Activation::GeluTanh: {
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    auto scope = b.enter("NewGELUActivation", attrName);
    Value cube = b.mul(b.mul(x, x), x);
    Value inner = b.add(x, b.mul(cube, b.scalar(0.044715, rank)));
    Value t = b.tanh(b.mul(inner, b.scalar(std::sqrt(2.0 / M_PI), rank)));
    Value half = b.mul(x, b.scalar(0.5, rank));
    return b.mul(half, b.add(t, b.scalar(1.0, rank)));
  }
  case Activation::Relu: {
    // tosa.clamp takes only f32 bounds; maximum works for f32 and f64.
    auto scope = b.enter("ReLU", attrName);
    return b.maximum(x, b.scalar(0.0, rank));
  }
  case Activation::Silu: {
    auto scope = b.enter("SiLUActivation", attrName);
    return b.mul(x, b.sigmoid(x));
  }
  }
  llvm_unreachable("unknown activation");
}

Value mlir::ftpipe::softmax(GraphBuilder &b, Value x) {
  int32_t axis = GraphBuilder::shapeOf(x).size() - 1;
  Value e = b.exp(b.sub(x, b.reduceMax(x, axis)));
  return b.mul(e, b.reciprocal(b.reduceSum(e, axis)));
}
