//===- Attention.cpp - Multi-head attention and masks -----------*- C++ -*-===//
//
// Scaled dot-product attention over heads, written once for BERT, GPT-2, T5
// and LLaMA (which differ in their projections, scaling, masks and key/value
// heads), and the masks HF builds: the extended (additive) padding mask, the
// causal predicate and Mistral's sliding window.
//
//===----------------------------------------------------------------------===//

#include "Layers.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// [B, S, nh*dh] -> [B*nh, S, dh] (`keyLayout`: [B*nh, dh, S], i.e. k^T).
static Value splitHeads(GraphBuilder &b, Value x, int64_t numHeads,
                        bool keyLayout) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  int64_t batch = shape[0], len = shape[1];
  int64_t headDim = shape[2] / numHeads;
  Value heads = b.reshape(x, {batch, len, numHeads, headDim});
  if (keyLayout) {
    heads = b.transpose(heads, {0, 2, 3, 1});
    return b.reshape(heads, {batch * numHeads, headDim, len});
  }
  heads = b.transpose(heads, {0, 2, 1, 3});
  return b.reshape(heads, {batch * numHeads, len, headDim});
}

Value mlir::ftpipe::attention(GraphBuilder &b, Value q, Value k, Value v,
                              int64_t numHeads, double scale, Value causal,
                              Value bias, int64_t numKeyValueHeads) {
  llvm::ArrayRef<int64_t> qShape = GraphBuilder::shapeOf(q);
  int64_t batch = qShape[0], queryLen = qShape[1], inner = qShape[2];
  int64_t keyLen = GraphBuilder::shapeOf(k)[1];
  int64_t headDim = inner / numHeads;
  int64_t kvHeads = numKeyValueHeads ? numKeyValueHeads : numHeads;
  // Query heads per key/value head. The heads of one group are adjacent, so
  // [B*nh, Sq, dh] is [B*nkv, group*Sq, dh]: one matmul per key/value head
  // serves its whole group.
  int64_t group = numHeads / kvHeads;

  // Operands are built one statement at a time so that the op order does
  // not depend on the compiler's argument evaluation order.
  Value queries = splitHeads(b, q, numHeads, false);
  if (group > 1)
    queries = b.reshape(queries, {batch * kvHeads, group * queryLen, headDim});
  Value keys = splitHeads(b, k, kvHeads, true);
  Value scores = b.matmul(queries, keys);
  scores = b.reshape(scores, {batch, numHeads, queryLen, keyLen});
  if (scale != 1.0)
    scores = b.mul(scores, b.scalar(scale, 4));
  if (causal)
    scores = b.select(causal, scores, b.lowest(4));
  if (bias)
    scores = b.add(scores, bias);
  Value probs = softmax(b, scores);

  probs = b.reshape(probs, {batch * kvHeads, group * queryLen, keyLen});
  Value context = b.matmul(probs, splitHeads(b, v, kvHeads, false));
  context = b.reshape(context, {batch, numHeads, queryLen, headDim});
  context = b.transpose(context, {0, 2, 1, 3});
  return b.reshape(context, {batch, queryLen, inner});
}

Value mlir::ftpipe::additiveMask(GraphBuilder &b, Value keep) {
  Value m = b.convert(keep, b.getFloatType());
  int64_t rank = GraphBuilder::shapeOf(keep).size();
  Value dropped = b.sub(b.scalar(1.0, rank), m);
  Value lowest = b.lowest(rank);
  return b.mul(dropped, lowest);
}

Value mlir::ftpipe::extendedAttentionMask(GraphBuilder &b, Value mask) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(mask);
  return additiveMask(b, b.reshape(mask, {shape[0], 1, 1, shape[1]}));
}

Value mlir::ftpipe::causalPredicate(GraphBuilder &b, int64_t queryLen,
                                    int64_t keyLen) {
  Value rows = b.reshape(b.iota(queryLen), {1, 1, queryLen, 1});
  if (keyLen != queryLen)
    rows = b.add(rows, b.scalarI32(keyLen - queryLen, 4));
  Value cols = b.reshape(b.iota(keyLen), {1, 1, 1, keyLen});
  return b.greaterEqual(rows, cols);
}

Value mlir::ftpipe::slidingWindowPredicate(GraphBuilder &b, int64_t seqLen,
                                           int64_t window) {
  // d = i - j; kept iff min(d, window - 1 - d) >= 0.
  Value rows = b.reshape(b.iota(seqLen), {1, 1, seqLen, 1});
  Value cols = b.reshape(b.iota(seqLen), {1, 1, 1, seqLen});
  Value distance = b.sub(rows, cols);
  Value toEdge =
      b.sub(b.scalarI32(static_cast<int32_t>(window - 1), 4), distance);
  return b.greaterEqual(b.minimum(distance, toEdge), b.scalarI32(0, 4));
}
