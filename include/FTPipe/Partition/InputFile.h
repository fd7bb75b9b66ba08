//===- InputFile.h - Bounded reading of input files -------------*- C++ -*-===//
//
// Every file a user hands to FTPipe (cluster, profile, graph and model-config
// JSON) is read through these functions, so that no input can exhaust memory
// or the stack: files are read up to a size limit (a device such as /dev/zero
// or a runaway pipe ends with an error, not an out-of-memory abort), and JSON
// nested deeper than a limit is refused before the recursive parser sees it.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_INPUTFILE_H
#define FTPIPE_PARTITION_INPUTFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>

namespace ftpipe {
namespace partition {

/// The largest input file read (64 MiB; the graph of GPT2-XL is under 2 MiB).
inline constexpr uint64_t kMaxInputFileBytes = 64ull << 20;

/// The deepest nesting of arrays and objects accepted in JSON input (the
/// formats need 4 levels).
inline constexpr unsigned kMaxJSONDepth = 64;

/// Reads the whole file at `path` (a regular file, a pipe or a device), or
/// fails once more than `maxBytes` were read. `what` names the file's role
/// in messages ("hardware file").
llvm::Expected<std::string>
readInputFile(llvm::StringRef path, llvm::StringRef what,
              uint64_t maxBytes = kMaxInputFileBytes);

/// Parses `text` as JSON after checking that it nests at most `maxDepth`
/// arrays and objects (llvm::json::parse recurses once per level).
llvm::Expected<llvm::json::Value>
parseBoundedJSON(llvm::StringRef text, unsigned maxDepth = kMaxJSONDepth);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_INPUTFILE_H
