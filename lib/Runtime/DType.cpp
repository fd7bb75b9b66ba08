//===- DType.cpp - The runtime's element types ----------------------------===//

#include "FTPipe/Runtime/DType.h"

using namespace ftpipe::runtime;

namespace {
struct TypeInfo {
  DType type;
  /// The safetensors name and the manifest's (MLIR's element type name).
  const char *name, *manifestName;
  size_t bytes;
};
const TypeInfo typeInfos[] = {
    {DType::F64, "F64", "f64", 8}, {DType::F32, "F32", "f32", 4},
    {DType::F16, "F16", "f16", 2}, {DType::BF16, "BF16", "bf16", 2},
    {DType::I64, "I64", "i64", 8}, {DType::I32, "I32", "i32", 4},
    {DType::I16, "I16", "i16", 2}, {DType::I8, "I8", "i8", 1},
    {DType::Bool, "BOOL", "i1", 1}};
} // namespace

size_t ftpipe::runtime::dtypeBytes(DType type) {
  return typeInfos[static_cast<int>(type)].bytes;
}

llvm::StringRef ftpipe::runtime::dtypeName(DType type) {
  return typeInfos[static_cast<int>(type)].name;
}

std::optional<DType> ftpipe::runtime::parseDType(llvm::StringRef name) {
  for (const TypeInfo &info : typeInfos)
    if (name == info.name)
      return info.type;
  return std::nullopt;
}

llvm::StringRef ftpipe::runtime::manifestDTypeName(DType type) {
  return typeInfos[static_cast<int>(type)].manifestName;
}

std::optional<DType> ftpipe::runtime::parseManifestDType(llvm::StringRef name) {
  if (name == "index")
    return DType::I64;
  for (const TypeInfo &info : typeInfos)
    if (name == info.manifestName)
      return info.type;
  return std::nullopt;
}

std::string ftpipe::runtime::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::optional<uint64_t>
ftpipe::runtime::tensorBytes(DType type, llvm::ArrayRef<int64_t> shape,
                             uint64_t limit) {
  uint64_t bytes = dtypeBytes(type);
  for (int64_t size : shape) {
    if (size < 0)
      return std::nullopt;
    if (size != 0 && bytes > limit / static_cast<uint64_t>(size))
      return std::nullopt;
    bytes *= static_cast<uint64_t>(size);
  }
  if (bytes > limit)
    return std::nullopt;
  return bytes;
}
