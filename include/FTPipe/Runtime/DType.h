//===- DType.h - The runtime's element types ---------------------*- C++
//-*-===//
//
// The element types of the runtime's tensors with their safetensors names
// and sizes, and the manifest's spelling of them (MLIR's element type names).
// MLIR-free and allocation-free: the manifest schema (ManifestSchema.h) and
// the runtime's tensors (Tensor.h) share it.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_DTYPE_H
#define FTPIPE_RUNTIME_DTYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ftpipe {
namespace runtime {

enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, Bool };

/// Bytes per element (1 for Bool).
size_t dtypeBytes(DType type);
/// "F32", "I64", "BOOL", ... (the safetensors names).
llvm::StringRef dtypeName(DType type);
std::optional<DType> parseDType(llvm::StringRef name);
/// "f32", "i64", "i1", ... (manifest.json's names, MLIR's element types);
/// the parser also reads "index" as I64.
llvm::StringRef manifestDTypeName(DType type);
std::optional<DType> parseManifestDType(llvm::StringRef name);

/// "[2, 3]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// The largest tensor a manifest may declare (256 GiB).
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 38;
/// The bytes of a tensor of `type` and `shape`, computed without overflow;
/// none if a dimension is negative or the size exceeds `limit`.
std::optional<uint64_t> tensorBytes(DType type, llvm::ArrayRef<int64_t> shape,
                                    uint64_t limit = kMaxTensorBytes);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_DTYPE_H
