//===- ParameterCount.cpp - Parameter counts by formula ---------*- C++ -*-===//
//
// The parameter count of each family written out from its modules' shapes,
// independently of the IR builders, so that tests can check the generated
// IR against it for any config.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelConfig.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// nn.Linear(in, out) with or without bias.
static uint64_t linearParams(uint64_t in, uint64_t out, bool bias) {
  return in * out + (bias ? out : 0);
}

static uint64_t bertParams(const BertConfig &c, bool withHead) {
  uint64_t h = c.hiddenSize, inter = c.intermediateSize;
  uint64_t embeddings =
      (c.vocabSize + c.maxPositionEmbeddings + c.typeVocabSize) * h + 2 * h;
  uint64_t layer = 4 * linearParams(h, h, true) + 2 * (2 * h) +
                   linearParams(h, inter, true) + linearParams(inter, h, true);
  uint64_t head = withHead ? linearParams(h, 2, true) : 0;
  return embeddings + c.numHiddenLayers * layer + head;
}

static uint64_t gpt2Params(const GPT2Config &c, bool withHead) {
  uint64_t e = c.nEmbd, inner = c.nInner;
  uint64_t embeddings = (c.vocabSize + c.nPositions) * e;
  uint64_t block = 2 * (2 * e) + linearParams(e, 3 * e, true) +
                   linearParams(e, e, true) + linearParams(e, inner, true) +
                   linearParams(inner, e, true);
  uint64_t head = withHead && !c.tieWordEmbeddings ? c.vocabSize * e : 0;
  return embeddings + c.nLayer * block + 2 * e + head;
}

static uint64_t t5Params(const T5Config &c, bool withHead) {
  uint64_t d = c.dModel, inner = c.numHeads * c.dKv, ff = c.dFf;
  uint64_t attention = 4 * d * inner;
  uint64_t feedForward = (c.isGatedAct ? 3 : 2) * d * ff;
  uint64_t positionBias = c.relativeAttentionNumBuckets * c.numHeads;
  uint64_t encoderBlock = attention + feedForward + 2 * d;
  uint64_t decoderBlock = 2 * attention + feedForward + 3 * d;
  uint64_t encoder = c.numLayers * encoderBlock + positionBias + d;
  uint64_t decoder = c.numDecoderLayers * decoderBlock + positionBias + d;
  uint64_t head = withHead && !c.tieWordEmbeddings ? c.vocabSize * d : 0;
  return c.vocabSize * d + encoder + decoder + head;
}

static uint64_t llamaParams(const LlamaConfig &c, bool withHead) {
  uint64_t h = c.hiddenSize, inter = c.intermediateSize;
  uint64_t qWidth = c.numAttentionHeads * c.headDim;
  uint64_t kvWidth = c.numKeyValueHeads * c.headDim;
  uint64_t attention = linearParams(h, qWidth, c.attentionBias) +
                       2 * linearParams(h, kvWidth, c.attentionBias) +
                       linearParams(qWidth, h, c.attentionBias);
  uint64_t mlp =
      2 * linearParams(h, inter, c.mlpBias) + linearParams(inter, h, c.mlpBias);
  uint64_t layer = attention + mlp + 2 * h;
  uint64_t head = withHead && !c.tieWordEmbeddings ? c.vocabSize * h : 0;
  return c.vocabSize * h + c.numHiddenLayers * layer + h + head;
}

uint64_t mlir::ftpipe::computeParameterCount(const ModelConfig &config,
                                             bool withHead) {
  if (const auto *bert = std::get_if<BertConfig>(&config.family))
    return bertParams(*bert, withHead);
  if (const auto *gpt2 = std::get_if<GPT2Config>(&config.family))
    return gpt2Params(*gpt2, withHead);
  if (const auto *t5 = std::get_if<T5Config>(&config.family))
    return t5Params(*t5, withHead);
  return llamaParams(std::get<LlamaConfig>(config.family), withHead);
}
