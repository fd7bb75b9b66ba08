//===- T5Builder.cpp - T5 v1.0, v1.1 and Flan-T5 ----------------*- C++ -*-===//
//
// T5ForConditionalGeneration as in HF transformers: one `shared` embedding
// for both stacks and, when tied (v1.0), the LM head (whose input is then
// scaled by d_model^-0.5; v1.1 and Flan-T5 have their own `lm_head`),
// T5LayerNorm (RMS, no bias), bias-free linears, unscaled attention, a ReLU
// (v1.0) or gated GELU (v1.1, Flan-T5) feed-forward, cross-attention in the
// decoder, and the relative position bias: computed by the first block of
// each stack (with the attention mask folded in) and reused by all the
// others. Dropout is the identity here.
//
//===----------------------------------------------------------------------===//

#include "FamilyBuilders.h"
#include "Layers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::ftpipe;

/// HF's `T5Attention._relative_position_bucket` for one relative position
/// (key minus query), with its float32 arithmetic.
static int32_t relativePositionBucket(int64_t relative, bool bidirectional,
                                      int64_t numBuckets, int64_t maxDistance) {
  int64_t bucket = 0;
  if (bidirectional) {
    numBuckets /= 2;
    if (relative > 0)
      bucket += numBuckets;
    relative = std::abs(relative);
  } else {
    relative = -std::min<int64_t>(relative, 0);
  }
  int64_t maxExact = numBuckets / 2;
  if (relative < maxExact)
    return bucket + relative;
  float ratio = static_cast<float>(relative) / static_cast<float>(maxExact);
  float logRange =
      static_cast<float>(std::log(static_cast<double>(maxDistance) / maxExact));
  float scaled =
      std::log(ratio) / logRange * static_cast<float>(numBuckets - maxExact);
  int64_t large = maxExact + static_cast<int64_t>(scaled);
  return bucket + std::min(large, numBuckets - 1);
}

/// `T5Attention.compute_bias`: the learned bias [1, nh, Sq, Sk] of the
/// relative position buckets. The bucket of each relative distance is a
/// constant table (it depends on shapes only), looked up by key - query.
static Value relativePositionBias(GraphBuilder &b, const T5Config &c,
                                  int64_t queryLen, int64_t keyLen,
                                  bool bidirectional) {
  int64_t distances = queryLen + keyLen - 1;
  llvm::SmallVector<int32_t> table;
  for (int64_t d = -(queryLen - 1); d < keyLen; ++d)
    table.push_back(relativePositionBucket(d, bidirectional,
                                           c.relativeAttentionNumBuckets,
                                           c.relativeAttentionMaxDistance));
  Value memory = b.reshape(b.iota(keyLen), {1, keyLen});
  Value context = b.reshape(b.iota(queryLen), {queryLen, 1});
  Value relative = b.sub(memory, context);
  Value index = b.add(relative, b.scalarI32(queryLen - 1, 2));
  index = b.reshape(index, {1, queryLen * keyLen});
  Value buckets = b.gather(b.constI32(table, {1, distances, 1}), index);
  buckets = b.reshape(buckets, {1, queryLen * keyLen});
  Value values;
  {
    auto scope = b.enter("Embedding", "relative_attention_bias");
    Value weight =
        b.addParam("weight", {c.relativeAttentionNumBuckets, c.numHeads});
    values = b.gather(
        b.reshape(weight, {1, c.relativeAttentionNumBuckets, c.numHeads}),
        buckets);
  }
  values = b.reshape(values, {queryLen, keyLen, c.numHeads});
  values = b.transpose(values, {2, 0, 1});
  return b.reshape(values, {1, c.numHeads, queryLen, keyLen});
}

namespace {
/// How one T5Attention module is wired.
struct AttentionRole {
  llvm::StringRef attrName;
  /// Whether it owns `relative_attention_bias` (first block's self-attention).
  bool hasRelativeBias;
  bool bidirectional;
};
} // namespace

/// T5Attention: q/k/v/o without bias and no 1/sqrt(d) scaling. `bias` is
/// the position bias (+ mask) of the stack: null in the first block, which
/// computes it (zeros for cross-attention), set for the blocks after it.
static Value t5Attention(GraphBuilder &b, const T5Config &c,
                         const AttentionRole &role, Value x, Value keyValue,
                         Value mask, Value &bias) {
  auto scope = b.enter("T5Attention", role.attrName);
  int64_t inner = c.numHeads * c.dKv;
  Value q = linear(b, "q", x, inner, false);
  Value k = linear(b, "k", keyValue, inner, false);
  Value v = linear(b, "v", keyValue, inner, false);
  if (!bias) {
    int64_t queryLen = GraphBuilder::shapeOf(x)[1];
    int64_t keyLen = GraphBuilder::shapeOf(keyValue)[1];
    bias =
        role.hasRelativeBias
            ? relativePositionBias(b, c, queryLen, keyLen, role.bidirectional)
            : b.splat(0.0, {1, c.numHeads, queryLen, keyLen});
    bias = b.add(bias, mask);
  }
  Value context = attention(b, q, k, v, c.numHeads, 1.0, nullptr, bias);
  return linear(b, "o", context, c.dModel, false);
}

namespace {
/// What the blocks of one stack share.
struct StackState {
  bool isDecoder;
  Value selfMask, crossMask, encoderHidden;
  /// Computed by block 0, reused by the others.
  Value selfBias, crossBias;
};
} // namespace

/// The feed-forward module (attribute `DenseReluDense` whatever the
/// activation, as in HF): T5DenseActDense, act(wi x) -> wo, or
/// T5DenseGatedActDense, act(wi_0 x) * (wi_1 x) -> wo.
static Value t5FeedForward(GraphBuilder &b, const T5Config &c, Value x) {
  Activation act = Activation::Relu;
  switch (c.denseActFn) {
  case T5Activation::Relu:
    act = Activation::Relu;
    break;
  case T5Activation::Gelu:
    act = Activation::Gelu;
    break;
  case T5Activation::GeluNew:
    act = Activation::GeluTanh;
    break;
  case T5Activation::Silu:
    act = Activation::Silu;
    break;
  }
  if (!c.isGatedAct) {
    auto dense = b.enter("T5DenseActDense", "DenseReluDense");
    x = linear(b, "wi", x, c.dFf, false);
    x = activation(b, act, "act", x);
    return linear(b, "wo", x, c.dModel, false);
  }
  auto dense = b.enter("T5DenseGatedActDense", "DenseReluDense");
  Value gate = activation(b, act, "act", linear(b, "wi_0", x, c.dFf, false));
  Value up = linear(b, "wi_1", x, c.dFf, false);
  return linear(b, "wo", b.mul(gate, up), c.dModel, false);
}

static Value t5Block(GraphBuilder &b, const T5Config &c, int64_t index, Value h,
                     StackState &stack) {
  auto scope = b.enter("T5Block", index);
  bool first = index == 0;
  // T5Block.layer is a ModuleList that the tracer's scope omits.
  {
    auto layer = b.enter("T5LayerSelfAttention", "0", "layer.0");
    Value normed =
        rmsNorm(b, "T5LayerNorm", "layer_norm", h, c.layerNormEpsilon);
    AttentionRole role{"SelfAttention", first, !stack.isDecoder};
    h = b.add(h, t5Attention(b, c, role, normed, normed, stack.selfMask,
                             stack.selfBias));
  }
  if (stack.isDecoder) {
    auto layer = b.enter("T5LayerCrossAttention", "1", "layer.1");
    Value normed =
        rmsNorm(b, "T5LayerNorm", "layer_norm", h, c.layerNormEpsilon);
    AttentionRole role{"EncDecAttention", false, true};
    h = b.add(h, t5Attention(b, c, role, normed, stack.encoderHidden,
                             stack.crossMask, stack.crossBias));
  }
  std::string ff = stack.isDecoder ? "2" : "1";
  auto layer = b.enter("T5LayerFF", ff, "layer." + ff);
  Value x = rmsNorm(b, "T5LayerNorm", "layer_norm", h, c.layerNormEpsilon);
  x = t5FeedForward(b, c, x);
  return b.add(h, x);
}

/// One T5Stack. The encoder gets `encoderHidden` null; the decoder gets the
/// encoder's output and its attention mask for cross-attention.
static Value t5Stack(GraphBuilder &b, const T5Config &c, Value shared,
                     Value inputIds, Value encoderMask, Value encoderHidden) {
  bool isDecoder = static_cast<bool>(encoderHidden);
  auto scope = b.enter("T5Stack", isDecoder ? "decoder" : "encoder");
  Value h;
  {
    auto embed = b.enter("Embedding", "embed_tokens");
    h = embeddingLookup(b, shared, inputIds);
  }
  StackState stack;
  stack.isDecoder = isDecoder;
  stack.encoderHidden = encoderHidden;
  if (isDecoder) {
    // No decoder attention mask: the causal mask alone, as HF with ones.
    int64_t len = GraphBuilder::shapeOf(inputIds)[1];
    stack.selfMask = additiveMask(b, causalPredicate(b, len, len));
    stack.crossMask = extendedAttentionMask(b, encoderMask);
  } else {
    stack.selfMask = extendedAttentionMask(b, encoderMask);
  }
  {
    auto blocks = b.enter("ModuleList", "block");
    int64_t numBlocks = isDecoder ? c.numDecoderLayers : c.numLayers;
    for (int64_t i = 0; i < numBlocks; ++i)
      h = t5Block(b, c, i, h, stack);
  }
  return rmsNorm(b, "T5LayerNorm", "final_layer_norm", h, c.layerNormEpsilon);
}

void mlir::ftpipe::buildT5(GraphBuilder &b, const T5Config &c,
                           const ResolvedShapes &shapes,
                           const ModelGenOptions &options) {
  int64_t batch = shapes.microBatchSize;
  int64_t encLen = shapes.seqLen, decLen = shapes.decoderSeqLen;
  Type i32 = IntegerType::get(b.getContext(), 32);
  Value inputIds = b.addInput("input_ids", {batch, encLen}, i32);
  Value attentionMask = b.addInput("attention_mask", {batch, encLen}, i32);
  Value decoderInputIds = b.addInput("decoder_input_ids", {batch, decLen}, i32);
  bool lmHead = options.head == ModelHead::Task;
  Value labels;
  if (lmHead && options.withLoss)
    labels = b.addInput("labels", {batch, decLen}, i32);

  auto scope = b.enter(getTopModuleName(ModelFamily::T5, options.head));
  Value shared;
  {
    auto embed = b.enter("Embedding", "shared");
    shared = b.addParam("weight", {c.vocabSize, c.dModel});
  }
  Value encoded = t5Stack(b, c, shared, inputIds, attentionMask, nullptr);
  Value h = t5Stack(b, c, shared, decoderInputIds, attentionMask, encoded);
  if (!lmHead) {
    b.finish(h);
    return;
  }
  Value logits;
  if (c.tieWordEmbeddings) {
    h = b.mul(h, b.scalar(1.0 / std::sqrt(static_cast<double>(c.dModel)), 3));
    logits = linearWithWeight(b, "lm_head", h, shared);
  } else {
    logits = linear(b, "lm_head", h, c.vocabSize, false);
  }
  if (!options.withLoss) {
    b.finish(logits);
    return;
  }
  int64_t tokens = batch * decLen;
  logits = b.reshape(logits, {tokens, c.vocabSize});
  labels = b.reshape(labels, {tokens});
  LossWithMetrics out;
  out.loss = crossEntropy(b, logits, labels, -100);
  if (options.withMetrics)
    addTokenAccuracy(b, logits, labels, -100, out);
  b.finishWithMetrics(out.loss, out.metrics);
}
