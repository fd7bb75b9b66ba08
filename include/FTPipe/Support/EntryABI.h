//===- EntryABI.h - What an entry point's code takes and returns -*- C++
//-*-===//
//
// The ABI description that ftpipe-record-entry-abi writes into every
// artifact, one per public function F as the NUL-terminated constant
// `ftpipe_abi_F`, and that the runtime compares with the manifest before it
// calls `_mlir_ciface_F` (lib/Runtime/ABICheck.cpp): the arguments and
// results in order, each a scalar passed by value or a tensor passed as a
// memref descriptor, with its element type (MLIR's spelling, as in the
// manifest) and static shape. The text, one value per line:
//
//   ftpipe-abi 1
//   argument scalar index
//   argument tensor f32 128 64
//   result tensor f32
//
// (a rank-0 tensor has no dimensions after its element type). One model for
// the compiler, which prints it, and the runtime, which parses it. LLVM
// Support only.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SUPPORT_ENTRYABI_H
#define FTPIPE_SUPPORT_ENTRYABI_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace support {

/// The prefix of the description's symbol: `ftpipe_abi_` + function name.
inline constexpr llvm::StringLiteral kEntryABISymbolPrefix = "ftpipe_abi_";

/// One argument or result as the code declares it.
struct ABIValue {
  /// False: a scalar passed by value (the micro-batch index); true: a
  /// tensor passed as a pointer to a memref descriptor.
  bool tensor = true;
  /// MLIR's spelling of the element type: "f32", "i32", "index", "i1".
  std::string element;
  /// Static sizes; empty for a scalar or a rank-0 tensor.
  std::vector<int64_t> shape;

  bool operator==(const ABIValue &other) const {
    return tensor == other.tensor && element == other.element &&
           shape == other.shape;
  }
  /// "tensor f32 [4, 16]", "scalar index".
  std::string str() const;
};

struct EntryABI {
  std::vector<ABIValue> arguments, results;
};

/// The text above.
std::string printEntryABI(const EntryABI &abi);
/// Parses the text; what is malformed is refused naming the line.
llvm::Expected<EntryABI> parseEntryABI(llvm::StringRef text);

} // namespace support
} // namespace ftpipe

#endif // FTPIPE_SUPPORT_ENTRYABI_H
