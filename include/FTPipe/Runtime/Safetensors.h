//===- Safetensors.h - Reading and writing .safetensors files ---*- C++ -*-===//
//
// The format Hugging Face checkpoints and FTPipe's data sets use: an 8-byte
// little-endian header length, a JSON header mapping each tensor's name to
// {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
// "__metadata__" of strings), then the bytes. The reader checks the whole
// header against the file before it trusts a byte: lengths, known element
// types, offsets inside the data, sizes equal to the shapes, no overlaps or
// gaps. Files are read through the bounded reader (regular files only, at
// most kMaxSafetensorsFileBytes); the header is at most
// kMaxSafetensorsHeaderBytes (the limit of Hugging Face's own reader), JSON
// of limited depth without duplicate keys.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_SAFETENSORS_H
#define FTPIPE_RUNTIME_SAFETENSORS_H

#include "FTPipe/Runtime/Executor.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace runtime {

/// The largest header accepted (the `safetensors` crate's MAX_HEADER_SIZE).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
/// The largest safetensors file read (1 TiB): the file is mapped, not
/// copied, and its tensors are checked to fit in it, so this only bounds a
/// mistake; memory bounds the rest.
inline constexpr uint64_t kMaxSafetensorsFileBytes = 1ull << 40;

struct SafetensorsFile {
  TensorMap tensors;
  std::map<std::string, std::string> metadata;
};

/// Parses the bytes of a safetensors file; `name` is for messages.
llvm::Expected<SafetensorsFile> parseSafetensors(llvm::StringRef bytes,
                                                 llvm::StringRef name);
llvm::Expected<SafetensorsFile> readSafetensors(llvm::StringRef path);

/// The bytes of a safetensors file (tensors in name order).
std::string
serializeSafetensors(const TensorMap &tensors,
                     const std::map<std::string, std::string> &metadata = {});
/// Writes to `path` through a fresh temporary file renamed into place, so a
/// reader never sees a partial file and a link at either name is never
/// followed (support::writeFileAtomically).
llvm::Error
writeSafetensors(llvm::StringRef path, const TensorMap &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_SAFETENSORS_H
