//===- Tensor.cpp - Host tensors ------------------------------------------===//

#include "FTPipe/Runtime/Tensor.h"

#include <cassert>
#include <cstring>

using namespace ftpipe::runtime;

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

int64_t Tensor::elements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}
