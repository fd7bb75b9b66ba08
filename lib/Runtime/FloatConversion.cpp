//===- FloatConversion.cpp - Between the checkpoints' float types ---------===//
//
// Bit-level conversions (no floating-point environment assumed beyond the
// default rounding to nearest): bf16 is the upper half of an f32; f16 has 5
// exponent bits (bias 15) and 10 mantissa bits.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/FloatConversion.h"

#include <cassert>
#include <cmath>
#include <cstring>

using namespace ftpipe::runtime;

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

bool ftpipe::runtime::isFloatType(DType type) {
  return type == DType::F64 || type == DType::F32 || type == DType::F16 ||
         type == DType::BF16;
}

float ftpipe::runtime::bf16ToF32(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

float ftpipe::runtime::f16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)
    return floatOf(sign | 0x7f800000 | mantissa << 13);
  return floatOf(sign | (exponent + 112) << 23 | mantissa << 13);
}

uint16_t ftpipe::runtime::f32ToBF16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>(bits >> 16 | 0x0040); // quiet NaN
  // Round to nearest, ties to even; a carry into the exponent is right, up
  // to infinity.
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

uint16_t ftpipe::runtime::f32ToF16(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000)
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x3ff);
  // 65520 and above round to infinity (65504 is the largest f16).
  if (magnitude >= 0x477ff000)
    return sign | 0x7c00;
  if (magnitude < 0x38800000) {
    // Below the smallest normal (2^-14): a multiple of 2^-24, rounded to
    // nearest even by nearbyint (exact scaling by a power of two); 0x400
    // is the smallest normal, which the encoding gives by itself.
    float scaled = std::ldexp(floatOf(magnitude), 24);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t half =
      ((magnitude >> 23) - 112) << 10 | (magnitude & 0x7fffff) >> 13;
  uint32_t rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

/// Element `i` of a float tensor as a double (exact for every float type).
static double load(const Tensor &tensor, int64_t i) {
  const char *at = tensor.bytes.data() + i * dtypeBytes(tensor.type);
  switch (tensor.type) {
  case DType::F64: {
    double value;
    std::memcpy(&value, at, 8);
    return value;
  }
  case DType::F32: {
    float value;
    std::memcpy(&value, at, 4);
    return value;
  }
  default: {
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return tensor.type == DType::BF16 ? bf16ToF32(bits) : f16ToF32(bits);
  }
  }
}

/// Stores `value` as element `i`; f64 narrows to f32 first, as PyTorch's
/// conversions to the 16-bit types do.
static void store(Tensor &tensor, int64_t i, double value) {
  char *at = tensor.bytes.data() + i * dtypeBytes(tensor.type);
  switch (tensor.type) {
  case DType::F64:
    std::memcpy(at, &value, 8);
    return;
  case DType::F32: {
    float single = static_cast<float>(value);
    std::memcpy(at, &single, 4);
    return;
  }
  default: {
    float single = static_cast<float>(value);
    uint16_t bits =
        tensor.type == DType::BF16 ? f32ToBF16(single) : f32ToF16(single);
    std::memcpy(at, &bits, 2);
    return;
  }
  }
}

Tensor ftpipe::runtime::convertFloatTensor(const Tensor &tensor, DType to) {
  assert(isFloatType(tensor.type) && isFloatType(to) && "not a float type");
  if (tensor.type == to)
    return tensor;
  Tensor result(to, tensor.shape);
  for (int64_t i = 0, e = tensor.elements(); i < e; ++i)
    store(result, i, load(tensor, i));
  return result;
}
