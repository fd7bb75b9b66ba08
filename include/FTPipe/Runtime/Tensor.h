//===- Tensor.h - A host tensor of the runtime ------------------*- C++ -*-===//
//
// A dense row-major tensor on the host: element type, shape and bytes. The
// runtime keeps parameters, gradients, optimizer state, data sets and saved
// values in it, every byte charged to the device's memory ledger. Element
// types carry their safetensors names.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_TENSOR_H
#define FTPIPE_RUNTIME_TENSOR_H

#include "FTPipe/Runtime/MemoryLedger.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, Bool };

/// Bytes per element (1 for Bool).
size_t dtypeBytes(DType type);
/// "F32", "I64", "BOOL", ... (the safetensors names).
llvm::StringRef dtypeName(DType type);
std::optional<DType> parseDType(llvm::StringRef name);
/// The element type MLIR spells `name` ("f32", "i32"; `index` is I64, `i1`
/// Bool), as manifests and ABI descriptions write them.
std::optional<DType> parseElementType(llvm::StringRef name);

/// "[2, 3]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// The largest tensor a manifest may declare (256 GiB).
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 38;
/// The bytes of a tensor of `type` and `shape`, computed without overflow;
/// none if a dimension is negative or the size exceeds `limit`.
std::optional<uint64_t> tensorBytes(DType type, llvm::ArrayRef<int64_t> shape,
                                    uint64_t limit = kMaxTensorBytes);

/// A tensor's bytes, charged to the device's ledger (MemoryLedger.h).
using TensorBytes = std::vector<char, LedgerAllocator<char>>;

struct Tensor {
  DType type = DType::F32;
  std::vector<int64_t> shape;
  TensorBytes bytes;

  Tensor() = default;
  Tensor(DType type, std::vector<int64_t> shape);
  /// An f32 tensor holding `values`.
  static Tensor f32(std::vector<int64_t> shape, llvm::ArrayRef<float> values);

  int64_t elements() const;
  float *f32Data() { return reinterpret_cast<float *>(bytes.data()); }
  const float *f32Data() const {
    return reinterpret_cast<const float *>(bytes.data());
  }
  llvm::MutableArrayRef<float> f32Values() {
    return {f32Data(), size_t(elements())};
  }
  llvm::ArrayRef<float> f32Values() const {
    return {f32Data(), size_t(elements())};
  }
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_TENSOR_H
