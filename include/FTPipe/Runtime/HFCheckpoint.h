//===- HFCheckpoint.h - Hugging Face checkpoint directories -----*- C++ -*-===//
//
// The weights a fine-tuning starts from and the directory it ends with, in
// the layout transformers' save_pretrained writes and from_pretrained reads:
//  - `config.json`; the weights in `model.safetensors`, or sharded as
//    `model-0000K-of-0000N.safetensors` with `model.safetensors.index.json`
//    (`{"metadata": {"total_size": B}, "weight_map": {name: shard}}`);
//    the tokenizer's files beside them;
//  - tensors in bf16, f16, f32 or f64.
// Reading converts every float tensor to the type of the model's parameter
// of the same name (f32 for compiled models) and refuses, naming the file and
// the tensor, a shard the index names that is absent, an index naming a
// tensor its shard lacks (or a shard holding one the index does not name), a
// tensor in two shards, and a shard's tensor shaped unlike the model's
// parameter (which the model IR took from config.json); the caller checks
// the names against the model (validateWeights: missing and extra tensors).
// Every file goes through the bounded reader.
// Writing makes the whole directory under a temporary name next to it
// (`.partial-NAME`, marked as FTPipe's), every file created without
// following links and synced, then renames it into place: a reader sees the
// old directory or the new one, never half of one. An older directory at the
// name is replaced only when FTPipe wrote it (its `.ftpipe-save` marker).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_HFCHECKPOINT_H
#define FTPIPE_RUNTIME_HFCHECKPOINT_H

#include "FTPipe/Runtime/Executor.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

inline constexpr const char *kHFConfigFile = "config.json";
inline constexpr const char *kHFWeightsFile = "model.safetensors";
inline constexpr const char *kHFIndexFile = "model.safetensors.index.json";
/// The file that marks a directory written by writeHFCheckpoint.
inline constexpr const char *kHFSaveMarker = ".ftpipe-save";
/// The files copied from the source checkpoint besides the config: the
/// tokenizer's (whichever of them exist) and the generation defaults.
inline constexpr const char *kHFCopiedFiles[] = {"tokenizer.json",
                                                 "tokenizer_config.json",
                                                 "special_tokens_map.json",
                                                 "added_tokens.json",
                                                 "vocab.txt",
                                                 "vocab.json",
                                                 "merges.txt",
                                                 "spiece.model",
                                                 "tokenizer.model",
                                                 "generation_config.json"};
/// transformers' default max_shard_size ("5GB").
inline constexpr uint64_t kDefaultMaxShardBytes = 5'000'000'000;

/// Weights read from a checkpoint, converted to the model's types.
struct LoadedWeights {
  TensorMap weights;
  /// The checkpoint directory; empty when a single file was read.
  std::string directory;
  /// The float type most of the checkpoint's parameters were stored in (by
  /// elements): the default type to save the fine-tuned weights in.
  DType storedType = DType::F32;
};

/// Reads `path`, a safetensors file or a checkpoint directory, for a model
/// with `params` (see the file comment for what is refused). Tensors keep
/// their names; those of no parameter, or of another shape in a single
/// file, are left as read for validateWeights to refuse.
llvm::Expected<LoadedWeights>
readCheckpointWeights(llvm::StringRef path,
                      const std::vector<ParameterInfo> &params);

/// How writeHFCheckpoint writes.
struct HFSaveOptions {
  /// The float type of the saved tensors.
  DType type = DType::F32;
  /// Shards hold at most this many bytes of tensors (a larger tensor gets a
  /// shard to itself); one shard is written as model.safetensors alone.
  uint64_t maxShardBytes = kDefaultMaxShardBytes;
  /// The checkpoint directory whose config.json and tokenizer files are
  /// copied.
  std::string sourceDirectory;
};

/// "5GB", "20KB", "1000" (bytes; decimal units as transformers reads them,
/// also KiB, MiB, GiB) as bytes, or an error naming `option`.
llvm::Expected<uint64_t> parseShardSize(llvm::StringRef text,
                                        llvm::StringRef option);

/// How ftpipe-run's --save writes, from --save-format (`file`, `hf`, or
/// `auto`: hf when the weights came from a checkpoint directory),
/// --save-dtype (bf16, f16, f32; empty: the checkpoint's) and
/// --save-shard-size: the options for a checkpoint directory, or none for a
/// single safetensors file.
llvm::Expected<std::optional<HFSaveOptions>>
chooseSaveOptions(llvm::StringRef format, llvm::StringRef dtype,
                  llvm::StringRef shardSize, const LoadedWeights &loaded);

/// Checks before training that `path` can take the directory later: its
/// parent exists, and `path` is absent or a directory FTPipe wrote.
llvm::Error checkHFSaveDirectory(llvm::StringRef path);

/// Writes `weights` as the checkpoint directory `path` (see above);
/// config.json is the source's with its `torch_dtype` (and `dtype`, which
/// newer transformers write) set to the saved type.
llvm::Error writeHFCheckpoint(llvm::StringRef path, const TensorMap &weights,
                              const HFSaveOptions &options);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_HFCHECKPOINT_H
