//===- LlamaBuilder.cpp - The LLaMA family (Llama, Mistral) -----*- C++ -*-===//
//
// LlamaForCausalLM and MistralForCausalLM as in HF transformers: token
// embedding, pre-norm decoder layers (RMSNorm, causal self-attention with
// rotary position embeddings and grouped-query heads, RMSNorm, the SwiGLU
// MLP), the final norm and the LM head (own weight, or the embedding when
// tied). Mistral differs in its class names and an optional sliding window.
// Dropout is the identity here.
//
//===----------------------------------------------------------------------===//

#include "FamilyBuilders.h"
#include "Layers.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::ftpipe;

/// The family's class named `suffix`: "LlamaMLP" or "MistralMLP".
static std::string className(const LlamaConfig &c, llvm::StringRef suffix) {
  return (llvm::Twine(c.isMistral ? "Mistral" : "Llama") + suffix).str();
}

namespace {
/// The rotary tables of one sequence length, [1, S, 1, dh] each, built once
/// by the model (HF's `rotary_emb`) and used by every layer.
struct Rotary {
  Value cos;
  /// sin with the sign of rotate_half folded in: -sin on the first half of
  /// the head, +sin on the second, so that rotate_half(x) * sin is
  /// concat(x2, x1) * signedSin and needs no negation.
  Value signedSin;
};
} // namespace

/// HF's default rotary embedding (`_compute_default_rope_parameters` and
/// `LlamaRotaryEmbedding.forward`) for positions 0 .. S-1, in float32 as HF
/// computes it whatever the model's type: inv_freq_i = 1 / theta^(2i / dh),
/// angles = position * inv_freq, emb = cat(angles, angles). The tables
/// depend on shapes only, so they are constants.
static Rotary rotaryTables(GraphBuilder &b, const LlamaConfig &c,
                           int64_t seqLen) {
  auto scope = b.enter(className(c, "RotaryEmbedding"), "rotary_emb");
  int64_t dim = c.headDim, half = dim / 2;
  llvm::SmallVector<float> invFreq(half);
  for (int64_t i = 0; i < half; ++i) {
    float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    invFreq[i] = 1.0f / std::pow(static_cast<float>(c.ropeTheta), exponent);
  }
  llvm::SmallVector<float> cos(seqLen * dim), sin(seqLen * dim);
  for (int64_t pos = 0; pos < seqLen; ++pos) {
    for (int64_t i = 0; i < half; ++i) {
      float angle = invFreq[i] * static_cast<float>(pos);
      float cosine = std::cos(angle), sine = std::sin(angle);
      cos[pos * dim + i] = cos[pos * dim + half + i] = cosine;
      sin[pos * dim + i] = -sine;
      sin[pos * dim + half + i] = sine;
    }
  }
  return {b.constFloat(cos, {1, seqLen, 1, dim}),
          b.constFloat(sin, {1, seqLen, 1, dim})};
}

/// apply_rotary_pos_emb for one of q or k, [B, S, heads * dh]:
/// x * cos + rotate_half(x) * sin, with rotate_half(x) = cat(-x2, x1).
static Value applyRotary(GraphBuilder &b, const Rotary &rotary, Value x,
                         int64_t heads, int64_t headDim) {
  llvm::ArrayRef<int64_t> shape = GraphBuilder::shapeOf(x);
  int64_t batch = shape[0], seqLen = shape[1], half = headDim / 2;
  Value h = b.reshape(x, {batch, seqLen, heads, headDim});
  Value x1 = b.slice(h, {0, 0, 0, 0}, {batch, seqLen, heads, half});
  Value x2 = b.slice(h, {0, 0, 0, half}, {batch, seqLen, heads, half});
  Value swapped = b.concat({x2, x1}, 3);
  Value rotated = b.add(b.mul(h, rotary.cos), b.mul(swapped, rotary.signedSin));
  return b.reshape(rotated, shape);
}

static Value llamaAttention(GraphBuilder &b, const LlamaConfig &c, Value x,
                            const Rotary &rotary, Value mask) {
  auto scope = b.enter(className(c, "Attention"), "self_attn");
  int64_t seqLen = GraphBuilder::shapeOf(x)[1];
  int64_t heads = c.numAttentionHeads, kvHeads = c.numKeyValueHeads;
  int64_t dim = c.headDim;
  Value q = linear(b, "q_proj", x, heads * dim, c.attentionBias);
  Value k = linear(b, "k_proj", x, kvHeads * dim, c.attentionBias);
  Value v = linear(b, "v_proj", x, kvHeads * dim, c.attentionBias);
  q = applyRotary(b, rotary, q, heads, dim);
  k = applyRotary(b, rotary, k, kvHeads, dim);
  // Each layer builds its own causal predicate (constants and a compare),
  // as GPT-2's layers do, so that no mask value crosses stages.
  Value causal = c.slidingWindow > 0 && c.slidingWindow < seqLen
                     ? slidingWindowPredicate(b, seqLen, c.slidingWindow)
                     : causalPredicate(b, seqLen, seqLen);
  Value context =
      attention(b, q, k, v, heads, 1.0 / std::sqrt(static_cast<double>(dim)),
                causal, mask, kvHeads);
  return linear(b, "o_proj", context, c.hiddenSize, c.attentionBias);
}

/// The SwiGLU MLP: down_proj(act_fn(gate_proj x) * up_proj x).
static Value llamaMLP(GraphBuilder &b, const LlamaConfig &c, Value x) {
  auto scope = b.enter(className(c, "MLP"), "mlp");
  Value gate = linear(b, "gate_proj", x, c.intermediateSize, c.mlpBias);
  gate = activation(b, Activation::Silu, "act_fn", gate);
  Value up = linear(b, "up_proj", x, c.intermediateSize, c.mlpBias);
  return linear(b, "down_proj", b.mul(gate, up), c.hiddenSize, c.mlpBias);
}

static Value decoderLayer(GraphBuilder &b, const LlamaConfig &c, int64_t index,
                          Value h, const Rotary &rotary, Value mask) {
  auto scope = b.enter(className(c, "DecoderLayer"), index);
  std::string norm = className(c, "RMSNorm");
  Value a = rmsNorm(b, norm, "input_layernorm", h, c.rmsNormEps);
  h = b.add(h, llamaAttention(b, c, a, rotary, mask));
  Value m = rmsNorm(b, norm, "post_attention_layernorm", h, c.rmsNormEps);
  return b.add(h, llamaMLP(b, c, m));
}

/// LlamaModel / MistralModel; `attrName` is empty when it is the top module.
/// Returns the final hidden state and sets `embed` to the token embedding.
static Value llamaModel(GraphBuilder &b, const LlamaConfig &c, Value inputIds,
                        Value attentionMask, llvm::StringRef attrName,
                        Value &embed) {
  auto scope = b.enter(className(c, "Model"), attrName);
  int64_t seqLen = GraphBuilder::shapeOf(inputIds)[1];
  Value h;
  {
    auto embedding = b.enter("Embedding", "embed_tokens");
    embed = b.addParam("weight", {c.vocabSize, c.hiddenSize});
    h = embeddingLookup(b, embed, inputIds, c.padTokenId);
  }
  Value mask = extendedAttentionMask(b, attentionMask);
  Rotary rotary = rotaryTables(b, c, seqLen);
  {
    auto layers = b.enter("ModuleList", "layers");
    for (int64_t i = 0; i < c.numHiddenLayers; ++i)
      h = decoderLayer(b, c, i, h, rotary, mask);
  }
  return rmsNorm(b, className(c, "RMSNorm"), "norm", h, c.rmsNormEps);
}

void mlir::ftpipe::buildLlama(GraphBuilder &b, const LlamaConfig &c,
                              const ResolvedShapes &shapes,
                              const ModelGenOptions &options) {
  int64_t batch = shapes.microBatchSize, seqLen = shapes.seqLen;
  Type i32 = IntegerType::get(b.getContext(), 32);
  Value inputIds = b.addInput("input_ids", {batch, seqLen}, i32);
  Value attentionMask = b.addInput("attention_mask", {batch, seqLen}, i32);
  Value embed;
  if (options.head == ModelHead::None) {
    b.finish(llamaModel(b, c, inputIds, attentionMask, "", embed));
    return;
  }
  Value labels;
  if (options.withLoss)
    labels = b.addInput("labels", {batch, seqLen}, i32);

  auto scope = b.enter(className(c, "ForCausalLM"));
  Value h = llamaModel(b, c, inputIds, attentionMask, "model", embed);
  Value logits = c.tieWordEmbeddings
                     ? linearWithWeight(b, "lm_head", h, embed)
                     : linear(b, "lm_head", h, c.vocabSize, false);
  if (!options.withLoss) {
    b.finish(logits);
    return;
  }
  LossWithMetrics out = causalLMLoss(b, logits, labels, options.withMetrics);
  b.finishWithMetrics(out.loss, out.metrics);
}
