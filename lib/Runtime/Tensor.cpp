//===- Tensor.cpp - Host tensors and element types ------------------------===//

#include "FTPipe/Runtime/Tensor.h"

#include <cassert>
#include <cstring>

using namespace ftpipe::runtime;

namespace {
struct TypeInfo {
  DType type;
  const char *name;
  size_t bytes;
};
const TypeInfo typeInfos[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::Bool, "BOOL", 1}};
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

std::optional<DType> ftpipe::runtime::parseElementType(llvm::StringRef name) {
  if (name == "index")
    return DType::I64;
  if (name == "i1")
    return DType::Bool;
  return parseDType(name.upper());
}

std::string ftpipe::runtime::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Tensor::Tensor(DType type, std::vector<int64_t> shape)
    : type(type), shape(std::move(shape)) {
  bytes.assign(elements() * dtypeBytes(type), 0);
}

Tensor Tensor::f32(std::vector<int64_t> shape, llvm::ArrayRef<float> values) {
  Tensor tensor(DType::F32, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == tensor.elements());
  std::memcpy(tensor.bytes.data(), values.data(),
              values.size() * sizeof(float));
  return tensor;
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

int64_t Tensor::elements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}
