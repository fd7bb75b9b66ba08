//===- JSONFields.h - Reading typed fields of JSON objects ------*- C++ -*-===//
//
// Private to lib/Partition: the field readers that the graph and hardware
// JSON formats share. Each reports a problem at the field's path (so the
// error names e.g. "devices[2].memory_bytes") and returns false; an absent
// optional field leaves `out` unchanged and succeeds.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_PARTITION_JSONFIELDS_H
#define FTPIPE_LIB_PARTITION_JSONFIELDS_H

#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdint>
#include <optional>

namespace ftpipe {
namespace partition {
namespace detail {

/// A number field.
inline bool readNumber(const llvm::json::Object &obj, llvm::StringRef key,
                       double &out, llvm::json::Path path, bool required) {
  const llvm::json::Value *v = obj.get(key);
  if (!v) {
    if (required)
      path.field(key).report("missing required number");
    return !required;
  }
  std::optional<double> d = v->getAsNumber();
  if (!d) {
    path.field(key).report("expected a number");
    return false;
  }
  out = *d;
  return true;
}

/// A non-negative integer field (byte counts above 2^53 may arrive as
/// doubles: integral values are accepted).
inline bool readUnsigned(const llvm::json::Object &obj, llvm::StringRef key,
                         uint64_t &out, llvm::json::Path path, bool required) {
  const llvm::json::Value *v = obj.get(key);
  if (!v) {
    if (required)
      path.field(key).report("missing required integer");
    return !required;
  }
  if (std::optional<uint64_t> u = v->getAsUINT64()) {
    out = *u;
    return true;
  }
  std::optional<double> d = v->getAsNumber();
  if (d && *d >= 0 && std::floor(*d) == *d && *d < 1.8e19) {
    out = uint64_t(*d);
    return true;
  }
  path.field(key).report("expected a non-negative integer");
  return false;
}

} // namespace detail
} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_LIB_PARTITION_JSONFIELDS_H
