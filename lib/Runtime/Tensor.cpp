//===- Tensor.cpp - Host tensors ------------------------------------------===//

#include "FTPipe/Runtime/Tensor.h"

#include <cassert>
#include <cstring>
#include <utility>

using namespace ftpipe::runtime;

TensorBytes TensorBytes::adopt(char *data, size_t size, Release release,
                               void *handle) {
  assert(release && "an adopted buffer needs its release function");
  TensorBytes bytes;
  bytes.begin_ = data;
  bytes.size_ = size;
  bytes.release_ = release;
  bytes.handle_ = handle;
  return bytes;
}

TensorBytes::TensorBytes(const TensorBytes &other) {
  assign(other.size_, 0);
  if (size_)
    std::memcpy(begin_, other.begin_, size_);
}

TensorBytes &TensorBytes::operator=(const TensorBytes &other) {
  if (this != &other)
    *this = TensorBytes(other);
  return *this;
}

TensorBytes &TensorBytes::operator=(TensorBytes &&other) noexcept {
  if (this != &other) {
    reset();
    swap(other);
  }
  return *this;
}

void TensorBytes::assign(size_t size, char value) {
  reset();
  if (!size)
    return;
  begin_ = static_cast<char *>(ledgerAllocate(size, FTPIPE_MEM_RUNTIME));
  size_ = size;
  std::memset(begin_, value, size);
}

bool TensorBytes::operator==(const TensorBytes &other) const {
  return size_ == other.size_ &&
         (size_ == 0 || std::memcmp(begin_, other.begin_, size_) == 0);
}

void TensorBytes::reset() {
  if (release_)
    release_(handle_);
  else
    ledgerFree(begin_);
  begin_ = nullptr;
  size_ = 0;
  release_ = nullptr;
  handle_ = nullptr;
}

void TensorBytes::swap(TensorBytes &other) noexcept {
  std::swap(begin_, other.begin_);
  std::swap(size_, other.size_);
  std::swap(release_, other.release_);
  std::swap(handle_, other.handle_);
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

int64_t Tensor::elements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}
