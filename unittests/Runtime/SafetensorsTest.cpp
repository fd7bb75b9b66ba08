//===- SafetensorsTest.cpp - Reading PyTorch's files, refusing bad ones ---===//
//
// torch-written.safetensors was written by safetensors.torch.save_file in
// the reference environment (F32, I64, BF16 and BOOL tensors, metadata).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Safetensors.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace ftpipe::runtime;

namespace {

template <typename T> std::vector<T> values(const Tensor &tensor) {
  std::vector<T> out(tensor.bytes.size() / sizeof(T));
  std::memcpy(out.data(), tensor.bytes.data(), tensor.bytes.size());
  return out;
}

TEST(Safetensors, ReadsWhatPyTorchWrote) {
  llvm::Expected<SafetensorsFile> file =
      readSafetensors(FTPIPE_TORCH_SAFETENSORS);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->metadata.at("format"), "pt");
  ASSERT_EQ(file->tensors.size(), 4u);
  const Tensor &a = file->tensors.at("a.weight");
  EXPECT_EQ(a.type, DType::F32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(a),
            (std::vector<float>{0, 0.25, 0.5, 0.75, 1.0, 1.25}));
  EXPECT_EQ(values<int64_t>(file->tensors.at("ids")),
            (std::vector<int64_t>{3, -1, 7, int64_t(1) << 40}));
  EXPECT_EQ(values<uint8_t>(file->tensors.at("mask")),
            (std::vector<uint8_t>{1, 0}));
  // bfloat16 is the top half of the float's bits.
  std::vector<uint16_t> h = values<uint16_t>(file->tensors.at("h"));
  ASSERT_EQ(h.size(), 3u);
  float decoded;
  uint32_t bits = uint32_t(h[1]) << 16;
  std::memcpy(&decoded, &bits, 4);
  EXPECT_EQ(decoded, -2.0f);
}

TEST(Safetensors, RoundTrips) {
  llvm::Expected<SafetensorsFile> file =
      readSafetensors(FTPIPE_TORCH_SAFETENSORS);
  ASSERT_TRUE(bool(file));
  std::string bytes = serializeSafetensors(file->tensors, file->metadata);
  llvm::Expected<SafetensorsFile> again = parseSafetensors(bytes, "mem");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->metadata, file->metadata);
  for (const auto &[name, tensor] : file->tensors) {
    EXPECT_EQ(again->tensors.at(name).bytes, tensor.bytes) << name;
    EXPECT_EQ(again->tensors.at(name).shape, tensor.shape) << name;
  }
  // The data starts 8-byte aligned.
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  EXPECT_EQ(header % 8, 0u);
}

std::string withHeader(const std::string &json, size_t dataBytes) {
  std::string out(8, '\0');
  uint64_t length = json.size();
  std::memcpy(out.data(), &length, 8);
  return out + json + std::string(dataBytes, '\0');
}

std::string refusal(const std::string &bytes) {
  llvm::Expected<SafetensorsFile> file = parseSafetensors(bytes, "f");
  return file ? "accepted" : llvm::toString(file.takeError());
}

TEST(Safetensors, RefusesBadFiles) {
  EXPECT_EQ(refusal("abc"), "f: not a safetensors file (3 bytes, shorter "
                            "than the header length)");
  std::string truncated = withHeader("{}", 0);
  truncated[0] = 100;
  EXPECT_EQ(refusal(truncated),
            "f: the header claims 100 bytes, the file has 2 after its length");
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"F32","shape":[2],)"
                               R"("data_offsets":[0,8]}})",
                               4)),
            "f: tensor 'a': data_offsets outside the 4 data bytes");
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"F32","shape":[3],)"
                               R"("data_offsets":[0,8]}})",
                               8)),
            "f: tensor 'a': data_offsets span 8 bytes, F32 [3] needs 12");
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"Q4","shape":[2],)"
                               R"("data_offsets":[0,8]}})",
                               8)),
            "f: tensor 'a': unknown dtype 'Q4'");
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"F32","shape":[2],)"
                               R"("data_offsets":[0,8]},"b":{"dtype":"F32",)"
                               R"("shape":[1],"data_offsets":[4,8]}})",
                               8)),
            "f: tensor 'b' starts at byte 4, expected 8 (overlap or gap)");
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"F32","shape":[1],)"
                               R"("data_offsets":[0,4]}})",
                               8)),
            "f: 4 bytes after the last tensor");
  EXPECT_EQ(refusal(withHeader("[1]", 0)), "f: the header is not a JSON "
                                           "object");
}

TEST(Safetensors, RefusesHostileHeaders) {
  // 40,000 levels of nesting overflowed the stack of the JSON parser.
  EXPECT_EQ(refusal(withHeader(
                std::string(40000, '[') + "1" + std::string(40000, ']'), 0)),
            "f: the header is not JSON: line 1: JSON nested deeper than 64 "
            "levels");
  // A tensor's dtype twice: llvm::json would keep the second silently.
  EXPECT_EQ(refusal(withHeader(R"({"a":{"dtype":"I64","shape":[1],)"
                               R"("data_offsets":[0,4],"dtype":"F32"}})",
                               4)),
            "f: the header is not JSON: line 1: duplicate key 'dtype'");
  // A header length over the limit is refused before anything is parsed.
  std::string huge = withHeader("{}", 0);
  uint64_t length = kMaxSafetensorsHeaderBytes + 1;
  std::memcpy(huge.data(), &length, 8);
  EXPECT_EQ(refusal(huge), "f: the header claims 100000001 bytes, more than "
                           "the limit of 100000000");
}

TEST(Safetensors, ReadsRegularFilesOnly) {
  llvm::Expected<SafetensorsFile> device = readSafetensors("/dev/zero");
  ASSERT_FALSE(bool(device));
  EXPECT_EQ(llvm::toString(device.takeError()),
            "safetensors file '/dev/zero' is a character device, not a "
            "regular file");
}

} // namespace
