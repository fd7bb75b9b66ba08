//===- BoundedInput.h - Reading files that users hand over ------*- C++ -*-===//
//
// Every file a user hands to FTPipe is hostile until read through these
// functions: the compiler's inputs (cluster, profile, graph and model-config
// JSON) and the runtime's (artifact manifests, checkpoint manifests and
// files, safetensors weights and data sets). They bound what a file can cost
// before anything trusts it:
//  - the runtime reads regular files only: a FIFO (which would block
//    forever), a device such as /dev/zero (which never ends) or a directory
//    is refused by its type, checked on the opened descriptor (so a link
//    swapped after a check does not matter), before a byte is read; the
//    compiler also reads pipes and devices, up to the size limit;
//  - a size limit, checked against the file's size before reading and
//    against what was read;
//  - JSON nested deeper than a limit is refused before the recursive parser
//    sees it (llvm::json::parse recurses once per level), and an object with
//    a key twice is refused (llvm::json keeps the last value silently).
// Messages name the file and the problem. LLVM Support only: the compiler,
// lib/Partition and the MLIR-free runtime share it.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SUPPORT_BOUNDEDINPUT_H
#define FTPIPE_SUPPORT_BOUNDEDINPUT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace ftpipe {
namespace support {

/// The largest JSON input read (64 MiB; the graph of GPT2-XL is under 2 MiB,
/// the manifest of a 24-layer model under 1 MiB).
inline constexpr uint64_t kMaxInputFileBytes = 64ull << 20;

/// The deepest nesting of arrays and objects accepted in JSON input (the
/// formats need at most 5 levels).
inline constexpr unsigned kMaxJSONDepth = 64;

/// What kinds of file a read accepts.
enum class FileKinds {
  /// Regular files only (the runtime: every file it reads is one that a
  /// compiler, a checkpoint or a user wrote).
  RegularOnly,
  /// Also pipes and character devices, read up to the size limit (the
  /// compiler's inputs, which a user may pipe in). Directories are refused.
  RegularOrStream,
};

/// The whole file at `path`, or an error naming it and `what` (its role:
/// "hardware file", "checkpoint manifest") when it cannot be opened, is not
/// of an accepted kind, or holds more than `maxBytes`. A regular file may be
/// mapped rather than copied.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, llvm::StringRef what,
                uint64_t maxBytes = kMaxInputFileBytes,
                FileKinds kinds = FileKinds::RegularOnly);

/// Checks, without reading it, that `path` is a regular file (after
/// following links), so that a loader that opens it by name (dlopen) cannot
/// block on a FIFO or read a device. The message names `what` and `path`.
llvm::Error checkRegularFile(llvm::StringRef path, llvm::StringRef what);

/// Parses `text` as JSON after checking that it nests at most `maxDepth`
/// arrays and objects; then refuses any object that has a key twice.
/// Messages start with the line ("line 3: duplicate key 'dtype'"); callers
/// prefix the file.
llvm::Expected<llvm::json::Value>
parseBoundedJSON(llvm::StringRef text, unsigned maxDepth = kMaxJSONDepth);

} // namespace support
} // namespace ftpipe

#endif // FTPIPE_SUPPORT_BOUNDEDINPUT_H
