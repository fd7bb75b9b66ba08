//===- BertBuilder.cpp - BERT with a question-answering head ----*- C++ -*-===//
//
// BertForQuestionAnswering as in HF transformers: word + token-type +
// position embeddings and LayerNorm, post-LN encoder layers (self-attention,
// residual + LayerNorm, GELU feed-forward, residual + LayerNorm) and the QA
// span head `qa_outputs` (no pooler). Dropout is the identity here.
//
//===----------------------------------------------------------------------===//

#include "FamilyBuilders.h"
#include "Layers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
/// Data inputs of BERT.
struct BertInputs {
  Value inputIds, attentionMask, tokenTypeIds;
};
} // namespace

static Value bertEmbeddings(GraphBuilder &b, const BertConfig &c,
                            const BertInputs &in, int64_t seqLen) {
  auto scope = b.enter("BertEmbeddings", "embeddings");
  Value h = embedding(b, "word_embeddings", in.inputIds, c.vocabSize,
                      c.hiddenSize, c.padTokenId);
  h = b.add(h, embedding(b, "token_type_embeddings", in.tokenTypeIds,
                         c.typeVocabSize, c.hiddenSize));
  h = b.add(h,
            positionEmbedding(b, "position_embeddings", c.maxPositionEmbeddings,
                              c.hiddenSize, seqLen));
  return layerNorm(b, "LayerNorm", h, c.layerNormEps);
}

static Value bertAttention(GraphBuilder &b, const BertConfig &c, Value h,
                           Value mask) {
  auto scope = b.enter("BertAttention", "attention");
  Value context;
  {
    auto self = b.enter("BertSelfAttention", "self");
    Value q = linear(b, "query", h, c.hiddenSize, true);
    Value k = linear(b, "key", h, c.hiddenSize, true);
    Value v = linear(b, "value", h, c.hiddenSize, true);
    double headDim = c.hiddenSize / c.numAttentionHeads;
    context = attention(b, q, k, v, c.numAttentionHeads,
                        1.0 / std::sqrt(headDim), nullptr, mask);
  }
  auto output = b.enter("BertSelfOutput", "output");
  Value dense = linear(b, "dense", context, c.hiddenSize, true);
  return layerNorm(b, "LayerNorm", b.add(dense, h), c.layerNormEps);
}

static Value bertLayer(GraphBuilder &b, const BertConfig &c, int64_t index,
                       Value h, Value mask) {
  auto scope = b.enter("BertLayer", index);
  Value attended = bertAttention(b, c, h, mask);
  Value inner;
  {
    auto intermediate = b.enter("BertIntermediate", "intermediate");
    inner = linear(b, "dense", attended, c.intermediateSize, true);
    inner = activation(b, Activation::Gelu, "intermediate_act_fn", inner);
  }
  auto output = b.enter("BertOutput", "output");
  Value dense = linear(b, "dense", inner, c.hiddenSize, true);
  return layerNorm(b, "LayerNorm", b.add(dense, attended), c.layerNormEps);
}

/// BertModel without the pooler (as the QA model builds it); `attrName` is
/// empty when it is the top module.
static Value bertModel(GraphBuilder &b, const BertConfig &c,
                       const BertInputs &in, int64_t seqLen,
                       llvm::StringRef attrName) {
  auto scope = b.enter("BertModel", attrName);
  Value mask = extendedAttentionMask(b, in.attentionMask);
  Value h = bertEmbeddings(b, c, in, seqLen);
  auto encoder = b.enter("BertEncoder", "encoder");
  auto layers = b.enter("ModuleList", "layer");
  for (int64_t i = 0; i < c.numHiddenLayers; ++i)
    h = bertLayer(b, c, i, h, mask);
  return h;
}

/// HF clamps span positions to [0, S] and ignores S (outside the sequence).
static Value clampPosition(GraphBuilder &b, Value positions, int64_t seqLen) {
  Value low = b.maximum(positions, b.scalarI32(0, 1));
  return b.minimum(low, b.scalarI32(seqLen, 1));
}

void mlir::ftpipe::buildBert(GraphBuilder &b, const BertConfig &c,
                             const ResolvedShapes &shapes,
                             const ModelGenOptions &options) {
  int64_t batch = shapes.microBatchSize, seqLen = shapes.seqLen;
  Type i32 = IntegerType::get(b.getContext(), 32);
  BertInputs in;
  in.inputIds = b.addInput("input_ids", {batch, seqLen}, i32);
  in.attentionMask = b.addInput("attention_mask", {batch, seqLen}, i32);
  in.tokenTypeIds = b.addInput("token_type_ids", {batch, seqLen}, i32);

  if (options.head == ModelHead::None) {
    b.finish(bertModel(b, c, in, seqLen, ""));
    return;
  }
  Value startPositions, endPositions;
  if (options.withLoss) {
    startPositions = b.addInput("start_positions", {batch}, i32);
    endPositions = b.addInput("end_positions", {batch}, i32);
  }

  auto scope = b.enter(getTopModuleName(ModelFamily::Bert, ModelHead::Task));
  Value h = bertModel(b, c, in, seqLen, "bert");
  Value logits = linear(b, "qa_outputs", h, 2, true);
  Value start = b.reshape(b.slice(logits, {0, 0, 0}, {batch, seqLen, 1}),
                          {batch, seqLen});
  Value end = b.reshape(b.slice(logits, {0, 0, 1}, {batch, seqLen, 1}),
                        {batch, seqLen});
  if (!options.withLoss) {
    b.finish({start, end});
    return;
  }
  int32_t ignored = seqLen;
  startPositions = clampPosition(b, startPositions, seqLen);
  endPositions = clampPosition(b, endPositions, seqLen);
  Value startLoss = crossEntropy(b, start, startPositions, ignored);
  Value endLoss = crossEntropy(b, end, endPositions, ignored);
  Value total = b.add(startLoss, endLoss);
  LossWithMetrics out;
  out.loss = b.mul(total, b.scalar(0.5, 0));
  // The predicted span of each sample; exact match and F1 against the
  // labels are the host's (Evaluation.h).
  if (options.withMetrics) {
    out.metrics.push_back({"start_prediction", b.argMax(start, 1)});
    out.metrics.push_back({"end_prediction", b.argMax(end, 1)});
  }
  b.finishWithMetrics(out.loss, out.metrics);
}
