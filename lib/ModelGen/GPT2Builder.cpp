//===- GPT2Builder.cpp - GPT-2 with its tied LM head ------------*- C++ -*-===//
//
// GPT2LMHeadModel as in HF transformers: token + position embeddings, pre-LN
// blocks (ln_1, causal self-attention through Conv1D c_attn/c_proj, ln_2,
// MLP with the tanh GELU), the final ln_f and the LM head, whose weight is
// the token embedding `wte` (one argument used by the lookup and the head).
// Dropout is the identity here.
//
//===----------------------------------------------------------------------===//

#include "FamilyBuilders.h"
#include "Layers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ftpipe;

static Value gpt2Attention(GraphBuilder &b, const GPT2Config &c, Value x,
                           Value mask) {
  auto scope = b.enter("GPT2Attention", "attn");
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  int64_t batch = shape[0], seqLen = shape[1], embd = c.nEmbd;
  Value qkv = conv1d(b, "c_attn", x, 3 * embd);
  Value q = b.slice(qkv, {0, 0, 0}, {batch, seqLen, embd});
  Value k = b.slice(qkv, {0, 0, embd}, {batch, seqLen, embd});
  Value v = b.slice(qkv, {0, 0, 2 * embd}, {batch, seqLen, embd});
  // Each layer slices its own `bias` buffer in HF; so does each layer here.
  Value causal = causalPredicate(b, seqLen, seqLen);
  double headDim = embd / c.nHead;
  Value context =
      attention(b, q, k, v, c.nHead, 1.0 / std::sqrt(headDim), causal, mask);
  return conv1d(b, "c_proj", context, embd);
}

static Value gpt2Block(GraphBuilder &b, const GPT2Config &c, int64_t index,
                       Value h, Value mask) {
  auto scope = b.enter("GPT2Block", index);
  Value a = layerNorm(b, "ln_1", h, c.layerNormEpsilon);
  h = b.add(gpt2Attention(b, c, a, mask), h);
  Value m = layerNorm(b, "ln_2", h, c.layerNormEpsilon);
  {
    auto mlp = b.enter("GPT2MLP", "mlp");
    m = conv1d(b, "c_fc", m, c.nInner);
    m = activation(b, Activation::GeluTanh, "act", m);
    m = conv1d(b, "c_proj", m, c.nEmbd);
  }
  return b.add(h, m);
}

/// GPT2Model; `attrName` is empty when it is the top module. Returns the
/// final hidden state and sets `wte` to the token embedding weight.
static Value gpt2Model(GraphBuilder &b, const GPT2Config &c, Value inputIds,
                       Value attentionMask, llvm::StringRef attrName,
                       Value &wte) {
  auto scope = b.enter("GPT2Model", attrName);
  int64_t seqLen = GraphBuilder::shapeOf(inputIds)[1];
  Value h;
  {
    auto embed = b.enter("Embedding", "wte");
    wte = b.addParam("weight", {c.vocabSize, c.nEmbd});
    h = embeddingLookup(b, wte, inputIds);
  }
  h = b.add(h, positionEmbedding(b, "wpe", c.nPositions, c.nEmbd, seqLen));
  Value mask = extendedAttentionMask(b, attentionMask);
  {
    auto blocks = b.enter("ModuleList", "h");
    for (int64_t i = 0; i < c.nLayer; ++i)
      h = gpt2Block(b, c, i, h, mask);
  }
  return layerNorm(b, "ln_f", h, c.layerNormEpsilon);
}

void mlir::ftpipe::buildGPT2(GraphBuilder &b, const GPT2Config &c,
                             const ResolvedShapes &shapes,
                             const ModelGenOptions &options) {
  int64_t batch = shapes.microBatchSize, seqLen = shapes.seqLen;
  Type i32 = IntegerType::get(b.getContext(), 32);
  Value inputIds = b.addInput("input_ids", {batch, seqLen}, i32);
  Value attentionMask = b.addInput("attention_mask", {batch, seqLen}, i32);
  Value wte;
  if (options.head == ModelHead::None) {
    b.finish(gpt2Model(b, c, inputIds, attentionMask, "", wte));
    return;
  }
  Value labels;
  if (options.withLoss)
    labels = b.addInput("labels", {batch, seqLen}, i32);

  auto scope = b.enter(getTopModuleName(ModelFamily::GPT2, ModelHead::Task));
  Value h = gpt2Model(b, c, inputIds, attentionMask, "transformer", wte);
  Value logits = c.tieWordEmbeddings
                     ? linearWithWeight(b, "lm_head", h, wte)
                     : linear(b, "lm_head", h, c.vocabSize, false);
  if (!options.withLoss) {
    b.finish(logits);
    return;
  }
  LossWithMetrics out = causalLMLoss(b, logits, labels, options.withMetrics);
  b.finishWithMetrics(out.loss, out.metrics);
}
