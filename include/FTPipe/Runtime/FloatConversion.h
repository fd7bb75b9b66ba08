//===- FloatConversion.h - Between the checkpoints' float types -*- C++ -*-===//
//
// Hugging Face checkpoints store weights in bf16, f16, f32 or f64; the
// compiled models compute in f32 (or f64). These convert a tensor's floats
// between those types as PyTorch's `Tensor.to(dtype)` does: widening is
// exact; narrowing rounds to nearest, ties to even, overflows to infinity,
// keeps NaN a (quiet) NaN and the sign of zero.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_FLOATCONVERSION_H
#define FTPIPE_RUNTIME_FLOATCONVERSION_H

#include "FTPipe/Runtime/Tensor.h"

#include <cstdint>

namespace ftpipe {
namespace runtime {

/// Whether `type` is one of the floating-point types (F64, F32, F16, BF16).
bool isFloatType(DType type);

float bf16ToF32(uint16_t bits);
float f16ToF32(uint16_t bits);
uint16_t f32ToBF16(float value);
uint16_t f32ToF16(float value);

/// `tensor` with its elements converted to `to`; both types must be float
/// types (isFloatType). Same shape; a tensor already of type `to` is copied.
Tensor convertFloatTensor(const Tensor &tensor, DType to);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_FLOATCONVERSION_H
