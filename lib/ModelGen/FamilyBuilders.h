//===- FamilyBuilders.h - One builder per model family ----------*- C++ -*-===//
//
// Entry points of BertBuilder.cpp, GPT2Builder.cpp, T5Builder.cpp and
// LlamaBuilder.cpp. Each adds the family's data inputs, builds the model under
// its module scopes and ends the function.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_MODELGEN_FAMILYBUILDERS_H
#define FTPIPE_LIB_MODELGEN_FAMILYBUILDERS_H

#include "GraphBuilder.h"

#include "FTPipe/ModelGen/ModelGen.h"

namespace mlir {
namespace ftpipe {

/// The class name of the top module, which is also the function's name:
/// e.g. BertForQuestionAnswering, or BertModel without a head. The LLaMA
/// family's is Llama's (see the ModelConfig overload for Mistral's).
llvm::StringRef getTopModuleName(ModelFamily family, ModelHead head);

/// Same for a config: MistralForCausalLM for `model_type` mistral.
llvm::StringRef getTopModuleName(const ModelConfig &config, ModelHead head);

/// BertForQuestionAnswering (or BertModel): inputs input_ids,
/// attention_mask, token_type_ids [B, S] (+ start_positions, end_positions
/// [B] with the loss); returns start and end logits [B, S], the last hidden
/// state, or the loss.
void buildBert(GraphBuilder &b, const BertConfig &config,
               const ResolvedShapes &shapes, const ModelGenOptions &options);

/// GPT2LMHeadModel (or GPT2Model): inputs input_ids, attention_mask [B, S]
/// (+ labels [B, S]); returns logits [B, S, V], the hidden state or the loss.
void buildGPT2(GraphBuilder &b, const GPT2Config &config,
               const ResolvedShapes &shapes, const ModelGenOptions &options);

/// T5ForConditionalGeneration (or T5Model): inputs input_ids, attention_mask
/// [B, S], decoder_input_ids [B, Sd] (+ labels [B, Sd]); returns logits
/// [B, Sd, V], the decoder's hidden state or the loss.
void buildT5(GraphBuilder &b, const T5Config &config,
             const ResolvedShapes &shapes, const ModelGenOptions &options);

/// LlamaForCausalLM / MistralForCausalLM (or LlamaModel / MistralModel):
/// inputs input_ids, attention_mask [B, S] (+ labels [B, S]); returns
/// logits [B, S, V], the hidden state or the loss.
void buildLlama(GraphBuilder &b, const LlamaConfig &config,
                const ResolvedShapes &shapes, const ModelGenOptions &options);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_MODELGEN_FAMILYBUILDERS_H
