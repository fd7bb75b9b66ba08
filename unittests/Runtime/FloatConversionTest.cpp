//===- FloatConversionTest.cpp - bf16/f16 as PyTorch converts them --------===//
//
// float-conversion-reference.safetensors holds f32 values and PyTorch's
// `.to(bfloat16)` and `.to(float16)` of them (float-conversion-reference.py):
// ties, subnormals, overflow, NaN, signed zeros and random bit patterns.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/FloatConversion.h"
#include "FTPipe/Runtime/Safetensors.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace ftpipe::runtime;

namespace {

uint16_t bitsAt(const Tensor &tensor, int64_t i) {
  uint16_t bits;
  std::memcpy(&bits, tensor.bytes.data() + 2 * i, 2);
  return bits;
}

bool isNaN16(uint16_t bits, bool bf16) {
  return bf16 ? (bits & 0x7fff) > 0x7f80 : (bits & 0x7fff) > 0x7c00;
}

TEST(FloatConversion, NarrowsAsPyTorchDoes) {
  llvm::Expected<SafetensorsFile> file =
      readSafetensors(FTPIPE_FLOAT_CONVERSION_REFERENCE);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const Tensor &values = file->tensors.at("f32");
  for (bool bf16 : {true, false}) {
    const Tensor &expected = file->tensors.at(bf16 ? "bf16" : "f16");
    Tensor ours = convertFloatTensor(values, bf16 ? DType::BF16 : DType::F16);
    ASSERT_EQ(ours.shape, expected.shape);
    int mismatches = 0;
    for (int64_t i = 0; i < values.elements(); ++i) {
      uint16_t want = bitsAt(expected, i), got = bitsAt(ours, i);
      if (isNaN16(want, bf16) ? isNaN16(got, bf16) : got == want)
        continue;
      if (++mismatches <= 5)
        ADD_FAILURE() << (bf16 ? "bf16" : "f16") << " of "
                      << values.f32Values()[i] << ": 0x" << std::hex << got
                      << ", PyTorch 0x" << want;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(FloatConversion, WideningIsExactAndRoundTrips) {
  // Every 16-bit pattern that is not a NaN widens to an f32 that narrows
  // back to the same pattern.
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    if (isNaN16(h, /*bf16=*/false)) {
      ASSERT_TRUE(std::isnan(f16ToF32(h)));
    } else {
      ASSERT_EQ(f32ToF16(f16ToF32(h)), h) << std::hex << bits;
    }
    if (!isNaN16(h, /*bf16=*/true)) {
      ASSERT_EQ(f32ToBF16(bf16ToF32(h)), h) << std::hex << bits;
    }
  }
  // Known values: the smallest f16 subnormal and normal, the largest f16.
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToF32(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(f16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(f16ToF32(0xc000), -2.0f);
  EXPECT_EQ(bf16ToF32(0x3f80), 1.0f);
}

TEST(FloatConversion, TensorsBetweenAllFloatTypes) {
  Tensor source = Tensor::f32({2, 2}, {1.5f, -0.25f, 3.0f, 1024.0f});
  for (DType type : {DType::F64, DType::F16, DType::BF16}) {
    Tensor there = convertFloatTensor(source, type);
    EXPECT_EQ(there.type, type);
    EXPECT_EQ(there.bytes.size(), 4 * dtypeBytes(type));
    Tensor back = convertFloatTensor(there, DType::F32);
    EXPECT_EQ(back.shape, source.shape);
    EXPECT_EQ(
        std::vector<float>(back.f32Values().begin(), back.f32Values().end()),
        std::vector<float>(source.f32Values().begin(),
                           source.f32Values().end()))
        << dtypeName(type).str();
  }
  EXPECT_TRUE(isFloatType(DType::BF16));
  EXPECT_FALSE(isFloatType(DType::I64));
}

} // namespace
