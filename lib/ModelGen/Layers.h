//===- Layers.h - Transformer building blocks for model IR ------*- C++ -*-===//
//
// The layers the families share, written once on top of GraphBuilder:
// linear maps (nn.Linear and GPT-2's Conv1D), embeddings, LayerNorm and the
// RMS norm of T5 and LLaMA, activations, softmax, attention and the
// cross-entropy loss. A function that takes an `attrName` is a module: it
// enters its own scope (e.g. "Linear[query]") and creates its weights there;
// the others are functional and use the caller's scope, as the tracer records
// them.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_MODELGEN_LAYERS_H
#define FTPIPE_LIB_MODELGEN_LAYERS_H

#include "GraphBuilder.h"

#include <optional>

namespace mlir {
namespace ftpipe {

//===----------------------------------------------------------------------===//
// Modules with weights (Layers.cpp)
//===----------------------------------------------------------------------===//

/// nn.Linear: x[..., in] W^T (+ b), W of shape [out, in] (HF layout), as
/// tosa.transpose of W and tosa.matmul on the flattened tokens.
Value linear(GraphBuilder &b, llvm::StringRef attrName, Value x,
             int64_t outFeatures, bool withBias);

/// A bias-free nn.Linear whose weight [out, in] is given (tied weights).
Value linearWithWeight(GraphBuilder &b, llvm::StringRef attrName, Value x,
                       Value weight);

/// GPT-2's Conv1D: x[..., nx] W + b with W of shape [nx, nf] (HF layout),
/// as tosa.matmul.
Value conv1d(GraphBuilder &b, llvm::StringRef attrName, Value x, int64_t nf);

/// nn.Embedding: creates `weight` [num, dim] and looks `ids` up in it; the
/// row `paddingIdx` gets no gradient.
Value embedding(GraphBuilder &b, llvm::StringRef attrName, Value ids,
                int64_t num, int64_t dim,
                std::optional<int64_t> paddingIdx = std::nullopt);

/// A learned absolute position embedding `weight` [num, dim] for positions
/// 0 .. seqLen-1 (HF's arange position ids) -> [1, seqLen, dim], read with
/// tosa.slice.
Value positionEmbedding(GraphBuilder &b, llvm::StringRef attrName, int64_t num,
                        int64_t dim, int64_t seqLen);

/// Looks i32 `ids` [B, S] up in `table` [V, H] -> [B, S, H] (tosa.gather),
/// in the current scope; the row `paddingIdx` gets no gradient
/// (`ftpipe.padding_row` on the gather), as nn.Embedding's `padding_idx`.
Value embeddingLookup(GraphBuilder &b, Value table, Value ids,
                      std::optional<int64_t> paddingIdx = std::nullopt);

/// nn.LayerNorm over the last axis, with weight and bias.
Value layerNorm(GraphBuilder &b, llvm::StringRef attrName, Value x, double eps);

/// An RMS norm module of class `moduleType` (T5LayerNorm, LlamaRMSNorm,
/// MistralRMSNorm): weight * (x * rsqrt(mean(x^2) + eps)); no mean, no bias.
Value rmsNorm(GraphBuilder &b, llvm::StringRef moduleType,
              llvm::StringRef attrName, Value x, double eps);

/// The activation modules of the three families.
enum class Activation {
  /// GELUActivation (BERT's "gelu"): exact, with erf.
  Gelu,
  /// NewGELUActivation (GPT-2's "gelu_new"): the tanh approximation.
  GeluTanh,
  /// ReLU (T5 v1.0).
  Relu,
  /// SiLU, x * sigmoid(x) (the LLaMA family's SwiGLU, T5 "gated-silu").
  Silu,
};

/// Applies `kind` as module `attrName` of its class.
Value activation(GraphBuilder &b, Activation kind, llvm::StringRef attrName,
                 Value x);

//===----------------------------------------------------------------------===//
// Functional pieces (Layers.cpp, Attention.cpp, Loss.cpp)
//===----------------------------------------------------------------------===//

/// Softmax over the last axis, shifted by the maximum for stability.
Value softmax(GraphBuilder &b, Value x);

/// softmax(scale * q k^T [causal] + bias) v for q [B, Sq, nh*dh] and
/// k, v [B, Sk, nkv*dh] -> [B, Sq, nh*dh]. `scale` 1.0 emits no multiply
/// (T5); `causal` (i1, broadcastable to [B, nh, Sq, Sk]) keeps a score where
/// true and puts the lowest float elsewhere (GPT-2's torch.where); `bias` is
/// added (masks, T5's position bias). Either may be null.
/// `numKeyValueHeads` (0: `numHeads`) below `numHeads` is grouped-query
/// attention: query head h reads key/value head h / (nh / nkv), as HF's
/// repeat_kv, without copying keys and values.
Value attention(GraphBuilder &b, Value q, Value k, Value v, int64_t numHeads,
                double scale, Value causal, Value bias,
                int64_t numKeyValueHeads = 0);

/// (1 - keep) * lowest for `keep` (i1 or an integer of ones and zeros) ->
/// float of the same shape: 0 where kept, the lowest float where masked.
Value additiveMask(GraphBuilder &b, Value keep);

/// HF's extended attention mask: (1 - mask) * lowest for an i32 `mask`
/// [B, S] of ones and zeros -> float [B, 1, 1, S].
Value extendedAttentionMask(GraphBuilder &b, Value mask);

/// The causal predicate i1 [1, 1, Sq, Sk]: query i sees key j iff
/// j <= i + Sk - Sq.
Value causalPredicate(GraphBuilder &b, int64_t queryLen, int64_t keyLen);

/// The sliding-window causal predicate i1 [1, 1, S, S] (Mistral): query i
/// sees key j iff 0 <= i - j < window.
Value slidingWindowPredicate(GraphBuilder &b, int64_t seqLen, int64_t window);

/// Mean cross-entropy of `logits` [N, C] against i32 `labels` [N], skipping
/// labels equal to `ignoreIndex` (HF's CrossEntropyLoss) -> rank-0 tensor.
Value crossEntropy(GraphBuilder &b, Value logits, Value labels,
                   int32_t ignoreIndex);

/// A loss and the evaluation metrics returned beside it (`--metrics`,
/// docs/FineTuneCheckpoint.md), by name.
struct LossWithMetrics {
  Value loss;
  llvm::SmallVector<std::pair<llvm::StringRef, Value>> metrics;
};

/// Token accuracy's counts over `logits` [N, C] and i32 `labels` [N]:
/// "counted_tokens", the labels not equal to `ignoreIndex`, and
/// "correct_tokens", those equal to the argmax of their logits (rank-0 i32
/// tensors, appended to `metrics`).
void addTokenAccuracy(GraphBuilder &b, Value logits, Value labels,
                      int32_t ignoreIndex, LossWithMetrics &out);

/// A causal language model's loss: logits [B, S, V] at token t against the
/// i32 labels [B, S] at t + 1, ignoring -100 (HF's GPT-2 and
/// ForCausalLMLoss) -> rank-0 tensor; with `withMetrics`, token accuracy's
/// counts over the same tokens.
LossWithMetrics causalLMLoss(GraphBuilder &b, Value logits, Value labels,
                             bool withMetrics);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_MODELGEN_LAYERS_H
