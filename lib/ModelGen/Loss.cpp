//===- Loss.cpp - Cross-entropy loss ----------------------------*- C++ -*-===//
//
// HF's CrossEntropyLoss (mean over the labels that are not `ignore_index`)
// and the causal LMs' shifted version of it, where a training graph ends:
// log-sum-exp minus the label's logit, picked with tosa.gather so no one-hot
// tensor of the vocabulary's size is built; and the metrics a model returns
// beside its loss for evaluation (`--metrics`): token accuracy's counts.
//
//===----------------------------------------------------------------------===//

#include "Layers.h"

using namespace mlir;
using namespace mlir::ftpipe;

Value mlir::ftpipe::crossEntropy(GraphBuilder &b, Value logits, Value labels,
                                 int32_t ignoreIndex) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(logits);
  int64_t n = shape[0], classes = shape[1];

  Value shifted = b.sub(logits, b.reduceMax(logits, 1));
  Value logSumExp = b.log(b.reduceSum(b.exp(shifted), 1));

  Value label = b.reshape(labels, {n, 1});
  Value valid = b.logicalNot(b.equal(label, b.scalarI32(ignoreIndex, 2)));
  Value safeLabel = b.select(valid, label, b.scalarI32(0, 2));
  Value picked = b.gather(b.reshape(shifted, {n, classes, 1}), safeLabel);
  Value nll = b.sub(logSumExp, b.reshape(picked, {n, 1}));
  nll = b.select(valid, nll, b.scalar(0.0, 2));

  Value total = b.reduceSum(nll, 0);
  Value count = b.reduceSum(b.convert(valid, b.getFloatType()), 0);
  return b.reshape(b.mul(total, b.reciprocal(count)), {});
}

void mlir::ftpipe::addTokenAccuracy(GraphBuilder &b, Value logits, Value labels,
                                    int32_t ignoreIndex, LossWithMetrics &out) {
  Type i32 = IntegerType::get(b.getContext(), 32);
  // An argmax is an index in [0, C), never the (negative or out of range)
  // ignored label, so no mask is needed for the correct ones.
  Value correct = b.convert(b.equal(b.argMax(logits, 1), labels), i32);
  Value counted = b.convert(
      b.logicalNot(b.equal(labels, b.scalarI32(ignoreIndex, 1))), i32);
  out.metrics.push_back(
      {"correct_tokens", b.reshape(b.reduceSum(correct, 0), {})});
  out.metrics.push_back(
      {"counted_tokens", b.reshape(b.reduceSum(counted, 0), {})});
}

LossWithMetrics mlir::ftpipe::causalLMLoss(GraphBuilder &b, Value logits,
                                           Value labels, bool withMetrics) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(logits);
  int64_t batch = shape[0], seqLen = shape[1], vocab = shape[2];
  // Token t predicts label t + 1.
  int64_t predicted = batch * (seqLen - 1);
  Value shiftedLogits =
      b.reshape(b.slice(logits, {0, 0, 0}, {batch, seqLen - 1, vocab}),
                {predicted, vocab});
  Value shiftedLabels =
      b.reshape(b.slice(labels, {0, 1}, {batch, seqLen - 1}), {predicted});
  LossWithMetrics out;
  out.loss = crossEntropy(b, shiftedLogits, shiftedLabels, -100);
  if (withMetrics)
    addTokenAccuracy(b, shiftedLogits, shiftedLabels, -100, out);
  return out;
}
