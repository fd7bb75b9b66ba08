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

#include "FTPipe/Runtime/DType.h"
#include "FTPipe/Runtime/MemoryLedger.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// A tensor's bytes: a block of the device's ledger (MemoryLedger.h), zeroed
/// when made, or a buffer the runtime adopted from generated code (a saved
/// value, CompiledModel.cpp), which is given back with the artifact's own
/// free function instead of being copied. Copies are ledger blocks.
class TensorBytes {
public:
  /// How an adopted buffer is given back: `release(handle)`.
  using Release = void (*)(void *);

  TensorBytes() = default;
  explicit TensorBytes(size_t size) { assign(size, 0); }
  /// Takes `size` bytes at `data` without copying them; `release(handle)`
  /// frees them when these bytes go.
  static TensorBytes adopt(char *data, size_t size, Release release,
                           void *handle);
  TensorBytes(const TensorBytes &other);
  TensorBytes(TensorBytes &&other) noexcept { swap(other); }
  TensorBytes &operator=(const TensorBytes &other);
  TensorBytes &operator=(TensorBytes &&other) noexcept;
  ~TensorBytes() { reset(); }

  /// `size` bytes of `value` in a fresh ledger block.
  void assign(size_t size, char value);

  char *data() { return begin_; }
  const char *data() const { return begin_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  char *begin() { return begin_; }
  char *end() { return begin_ + size_; }
  const char *begin() const { return begin_; }
  const char *end() const { return begin_ + size_; }
  char &operator[](size_t i) { return begin_[i]; }
  char operator[](size_t i) const { return begin_[i]; }
  /// Whether the bytes are an adopted buffer (not a ledger block).
  bool adopted() const { return release_ != nullptr; }

  bool operator==(const TensorBytes &other) const;
  bool operator!=(const TensorBytes &other) const { return !(*this == other); }

private:
  void reset();
  void swap(TensorBytes &other) noexcept;

  char *begin_ = nullptr;
  size_t size_ = 0;
  Release release_ = nullptr;
  void *handle_ = nullptr;
};

struct Tensor {
  DType type = DType::F32;
  std::vector<int64_t> shape;
  TensorBytes bytes;

  Tensor() = default;
  Tensor(DType type, std::vector<int64_t> shape);
  /// A tensor over `bytes` (as many as the shape's elements take).
  Tensor(DType type, std::vector<int64_t> shape, TensorBytes bytes)
      : type(type), shape(std::move(shape)), bytes(std::move(bytes)) {}
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
