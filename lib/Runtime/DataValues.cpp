//===- DataValues.cpp - Checks of the values in tensors -------------------===//

#include "FTPipe/Runtime/DataValues.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace ftpipe::runtime;

/// The position of element `flat` of a tensor of `shape`, as "[3, 17]".
static std::string position(llvm::ArrayRef<int64_t> shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shapeString(index);
}

std::optional<int64_t> ftpipe::runtime::integerAt(const Tensor &tensor,
                                                  int64_t i) {
  const char *at = tensor.bytes.data() + i * dtypeBytes(tensor.type);
  switch (tensor.type) {
  case DType::I64: {
    int64_t value;
    std::memcpy(&value, at, sizeof(value));
    return value;
  }
  case DType::I32: {
    int32_t value;
    std::memcpy(&value, at, sizeof(value));
    return value;
  }
  case DType::I16: {
    int16_t value;
    std::memcpy(&value, at, sizeof(value));
    return value;
  }
  case DType::I8:
    return static_cast<int8_t>(*at);
  default:
    return std::nullopt;
  }
}

std::optional<std::string>
ftpipe::runtime::checkIndexValues(const DataInputInfo &input,
                                  const Tensor &tensor) {
  if (!input.indexBound || tensor.shape.empty())
    return std::nullopt;
  int64_t bound = *input.indexBound;
  for (int64_t i = 0, e = tensor.elements(); i < e; ++i) {
    std::optional<int64_t> value = integerAt(tensor, i);
    if (!value)
      return std::nullopt;
    if ((*value >= 0 && *value < bound) || value == input.indexIgnored)
      continue;
    int64_t perSample = e / tensor.shape.front();
    return llvm::formatv("'{0}' sample {1} holds {2} at {3}, outside the "
                         "{4} rows of the table it indexes (0 to {5}{6})",
                         input.name, i / perSample, *value,
                         position(tensor.shape, i), bound, bound - 1,
                         input.indexIgnored ? llvm::formatv(", or {0} for none",
                                                            *input.indexIgnored)
                                                  .str()
                                            : "")
        .str();
  }
  return std::nullopt;
}

llvm::Error
ftpipe::runtime::checkFinite(const std::map<std::string, Tensor> &tensors) {
  for (const auto &[name, tensor] : tensors) {
    if (tensor.type != DType::F32 && tensor.type != DType::F64)
      continue;
    for (int64_t i = 0, e = tensor.elements(); i < e; ++i) {
      double value;
      if (tensor.type == DType::F32) {
        float single;
        std::memcpy(&single, tensor.bytes.data() + 4 * i, 4);
        value = single;
      } else {
        std::memcpy(&value, tensor.bytes.data() + 8 * i, 8);
      }
      if (std::isfinite(value))
        continue;
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     llvm::formatv("'{0}' holds {1} at {2}",
                                                   name,
                                                   std::isnan(value) ? "nan"
                                                   : value > 0       ? "inf"
                                                                     : "-inf",
                                                   position(tensor.shape, i)));
    }
  }
  return llvm::Error::success();
}
