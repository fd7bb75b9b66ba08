//===- HFCheckpointTest.cpp - Checkpoint directories in and out -----------===//
//
// What writeHFCheckpoint writes reads back through readCheckpointWeights
// (sharded and not, bf16 and f32); the refusals name the file; an older save
// is replaced whole and a directory that is not FTPipe's never is.
// test/Reference/hf-checkpoint.test checks the same directories against
// transformers' own save_pretrained and from_pretrained.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HFCheckpoint.h"
#include "FTPipe/Runtime/FloatConversion.h"
#include "FTPipe/Runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;

namespace {

std::string join(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> path(a);
  llvm::sys::path::append(path, b);
  return std::string(path);
}

void writeText(const std::string &path, llvm::StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  ASSERT_FALSE(error) << path;
  out << text;
}

std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "";
}

class HFCheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("hf-checkpoint", path));
    root = std::string(path);
    source = join(root, "source");
    ASSERT_FALSE(llvm::sys::fs::create_directory(source));
    writeText(join(source, kHFConfigFile),
              "{\"model_type\": \"gpt2\", \"torch_dtype\": \"bfloat16\"}");
    writeText(join(source, "tokenizer.json"), "{\"model\": {}}");
    params = {{"a.weight", {4, 8}, DType::F32},
              {"b.bias", {8}, DType::F32},
              {"c.weight", {8, 8}, DType::F32}};
    for (const ParameterInfo &param : params) {
      Tensor tensor(DType::F32, param.shape);
      for (int64_t i = 0; i < tensor.elements(); ++i)
        tensor.f32Values()[i] = 0.125f * (i % 17) - 1.0f;
      weights[param.name] = std::move(tensor);
    }
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  HFSaveOptions options(DType type, uint64_t shardBytes) const {
    HFSaveOptions result;
    result.type = type;
    result.maxShardBytes = shardBytes;
    result.sourceDirectory = source;
    return result;
  }
  std::string message(llvm::Error error) {
    return error ? llvm::toString(std::move(error)) : "";
  }

  std::string root, source;
  std::vector<ParameterInfo> params;
  TensorMap weights;
};

TEST_F(HFCheckpointTest, ShardedBF16RoundTrips) {
  std::string out = join(root, "out");
  ASSERT_FALSE(bool(checkHFSaveDirectory(out))); // absent: may be written
  // 64 + 16 + 128 bytes in bf16: three shards of at most 70 bytes.
  ASSERT_EQ(message(writeHFCheckpoint(out, weights, options(DType::BF16, 70))),
            "");
  for (const char *file :
       {"config.json", "tokenizer.json", "model.safetensors.index.json",
        "model-00001-of-00003.safetensors", "model-00003-of-00003.safetensors"})
    EXPECT_TRUE(llvm::sys::fs::exists(join(out, file))) << file;
  EXPECT_FALSE(llvm::sys::fs::exists(join(root, ".partial-out")));
  EXPECT_NE(
      readText(join(out, "config.json")).find("\"torch_dtype\": \"bfloat16\""),
      std::string::npos);
  EXPECT_EQ(readText(join(out, "tokenizer.json")), "{\"model\": {}}");
  llvm::Expected<LoadedWeights> loaded = readCheckpointWeights(out, params);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->directory, out);
  EXPECT_EQ(loaded->storedType, DType::BF16);
  for (const auto &[name, tensor] : weights) {
    const Tensor &back = loaded->weights.at(name);
    EXPECT_EQ(back.type, DType::F32);
    EXPECT_EQ(back.shape, tensor.shape);
    // The values are multiples of 1/8 below 2: exact in bf16.
    EXPECT_EQ(back.bytes, tensor.bytes) << name;
  }
}

TEST_F(HFCheckpointTest, OneShardIsOneFileAndF32ConfigSaysSo) {
  std::string out = join(root, "single");
  ASSERT_EQ(message(writeHFCheckpoint(
                out, weights, options(DType::F32, kDefaultMaxShardBytes))),
            "");
  EXPECT_TRUE(llvm::sys::fs::exists(join(out, kHFWeightsFile)));
  EXPECT_FALSE(llvm::sys::fs::exists(join(out, kHFIndexFile)));
  EXPECT_NE(
      readText(join(out, "config.json")).find("\"torch_dtype\": \"float32\""),
      std::string::npos);
  llvm::Expected<SafetensorsFile> file =
      readSafetensors(join(out, kHFWeightsFile));
  ASSERT_TRUE(bool(file));
  EXPECT_EQ(file->metadata.at("format"), "pt");
  EXPECT_EQ(file->tensors.size(), 3u);
}

TEST_F(HFCheckpointTest, ReplacesItsOwnSaveNeverAForeignDirectory) {
  std::string out = join(root, "out");
  ASSERT_EQ(message(writeHFCheckpoint(out, weights, options(DType::BF16, 70))),
            "");
  // Saved again, unsharded: nothing of the first save is left.
  ASSERT_EQ(message(checkHFSaveDirectory(out)), "");
  ASSERT_EQ(message(writeHFCheckpoint(
                out, weights, options(DType::F32, kDefaultMaxShardBytes))),
            "");
  EXPECT_FALSE(llvm::sys::fs::exists(join(out, kHFIndexFile)));
  EXPECT_TRUE(llvm::sys::fs::exists(join(out, kHFWeightsFile)));
  EXPECT_FALSE(llvm::sys::fs::exists(join(root, ".old-out")));
  // A directory FTPipe did not write is refused before and at the save.
  std::string foreign = join(root, "foreign");
  ASSERT_FALSE(llvm::sys::fs::create_directory(foreign));
  writeText(join(foreign, "keep.txt"), "mine");
  EXPECT_NE(message(checkHFSaveDirectory(foreign)).find("cannot replace it"),
            std::string::npos);
  EXPECT_NE(
      message(writeHFCheckpoint(foreign, weights, options(DType::F32, 1000)))
          .find("cannot replace it"),
      std::string::npos);
  EXPECT_EQ(readText(join(foreign, "keep.txt")), "mine");
}

TEST_F(HFCheckpointTest, RefusesNamingTheFile) {
  std::string out = join(root, "out");
  ASSERT_EQ(message(writeHFCheckpoint(out, weights, options(DType::BF16, 70))),
            "");
  // A shape that is not the model's, named with its shard.
  std::vector<ParameterInfo> other = params;
  other[2].shape = {8, 9};
  EXPECT_NE(message(readCheckpointWeights(out, other).takeError())
                .find("model-00003-of-00003.safetensors: tensor 'c.weight' "
                      "is [8, 8], the model's parameter is [8, 9]"),
            std::string::npos);
  // A missing shard.
  llvm::sys::fs::remove(join(out, "model-00002-of-00003.safetensors"));
  EXPECT_NE(message(readCheckpointWeights(out, params).takeError())
                .find("model.safetensors.index.json: names the shard "
                      "model-00002-of-00003.safetensors (for 'b.bias'), "
                      "which is not in"),
            std::string::npos);
  // An index naming a tensor its shard lacks.
  std::string index = readText(join(out, kHFIndexFile));
  writeText(join(out, "model-00002-of-00003.safetensors"),
            serializeSafetensors({}));
  EXPECT_NE(message(readCheckpointWeights(out, params).takeError())
                .find("model-00002-of-00003.safetensors: has no tensor "
                      "'b.bias', which model.safetensors.index.json places "
                      "there"),
            std::string::npos);
  // An index naming a file outside the directory.
  writeText(join(out, kHFIndexFile),
            "{\"weight_map\": {\"a.weight\": \"../x.safetensors\"}}");
  EXPECT_NE(message(readCheckpointWeights(out, params).takeError())
                .find("not a file of"),
            std::string::npos);
  // No weights at all.
  EXPECT_NE(message(readCheckpointWeights(source, params).takeError())
                .find("not a Hugging Face checkpoint directory"),
            std::string::npos);
}

TEST(HFCheckpoint, ShardSizes) {
  EXPECT_EQ(*parseShardSize("5GB", "--x"), 5'000'000'000u);
  EXPECT_EQ(*parseShardSize("20KB", "--x"), 20'000u);
  EXPECT_EQ(*parseShardSize("2MiB", "--x"), 2u << 20);
  EXPECT_EQ(*parseShardSize("1000", "--x"), 1000u);
  for (const char *bad : {"", "0", "-5GB", "5 TB", "GB"}) {
    llvm::Expected<uint64_t> size = parseShardSize(bad, "--x");
    ASSERT_FALSE(bool(size)) << bad;
    EXPECT_NE(llvm::toString(size.takeError()).find("--x"), std::string::npos);
  }
}

} // namespace
