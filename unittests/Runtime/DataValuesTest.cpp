//===- DataValuesTest.cpp - Value checks and run limits -------------------===//
//
// checkIndexValues (ids inside the table, the ignored value allowed, the
// message naming sample, position and value), checkFinite, and the limits
// of RunLimits.h (sizes, hyper-parameters, timeouts).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/RunLimits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace ftpipe::runtime;

namespace {

Tensor ids(std::vector<int64_t> shape, std::vector<int32_t> values) {
  Tensor tensor(DType::I32, std::move(shape));
  std::memcpy(tensor.bytes.data(), values.data(), values.size() * 4);
  return tensor;
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "accepted";
}

TEST(DataValues, IdsInsideTheirTable) {
  DataInputInfo input{"input_ids", {2, 3}, DType::I32, 10, std::nullopt};
  EXPECT_EQ(checkIndexValues(input, ids({2, 3}, {0, 9, 3, 4, 5, 6})),
            std::nullopt);
  EXPECT_EQ(checkIndexValues(input, ids({2, 3}, {0, 9, 3, 4, 10, 6})),
            "'input_ids' sample 1 holds 10 at [1, 1], outside the 10 rows "
            "of the table it indexes (0 to 9)");
  EXPECT_EQ(checkIndexValues(input, ids({2, 3}, {-1, 0, 0, 0, 0, 0})),
            "'input_ids' sample 0 holds -1 at [0, 0], outside the 10 rows "
            "of the table it indexes (0 to 9)");
  // The ignored value passes; an input that indexes nothing is not checked.
  DataInputInfo labels{"labels", {2}, DType::I32, 4, -100};
  EXPECT_EQ(checkIndexValues(labels, ids({2}, {-100, 3})), std::nullopt);
  EXPECT_EQ(checkIndexValues(labels, ids({2}, {-99, 3})),
            "'labels' sample 0 holds -99 at [0], outside the 4 rows of the "
            "table it indexes (0 to 3, or -100 for none)");
  DataInputInfo mask{"attention_mask", {2}, DType::I32, std::nullopt, {}};
  EXPECT_EQ(checkIndexValues(mask, ids({2}, {-5, 77})), std::nullopt);
}

TEST(DataValues, RefusesNonFiniteValues) {
  std::map<std::string, Tensor> tensors;
  tensors["a"] = Tensor::f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(errorOf(checkFinite(tensors)), "accepted");
  tensors["b"] = Tensor::f32({3}, {0, std::nanf(""), 0});
  EXPECT_EQ(errorOf(checkFinite(tensors)), "'b' holds nan at [1]");
  tensors["b"] =
      Tensor::f32({3}, {0, 0, -std::numeric_limits<float>::infinity()});
  EXPECT_EQ(errorOf(checkFinite(tensors)), "'b' holds -inf at [2]");
}

TEST(RunLimits, NamesTheOption) {
  ExecutorConfig config;
  config.schedule.microBatches = 4;
  config.schedule.steps = 10;
  EXPECT_EQ(errorOf(checkRunSettings(config, 4)), "accepted");
  config.optimizer.lr = std::nan("");
  EXPECT_EQ(errorOf(checkRunSettings(config, 4)),
            "--lr nan: give a finite number, at least 0");
  config.optimizer.lr = 1e-3;
  config.optimizer.weightDecay = -1;
  EXPECT_EQ(errorOf(checkRunSettings(config, 4)),
            "--weight-decay -1: give a finite number, at least 0");
  config.optimizer.weightDecay = 0;
  config.schedule.steps = int64_t(1) << 40;
  EXPECT_NE(errorOf(checkRunSettings(config, 4)).find("--steps 1099511627776"),
            std::string::npos);
  config.schedule.steps = 10;
  config.schedule.microBatches = -3;
  EXPECT_EQ(errorOf(checkRunSettings(config, 4)),
            "--micro-batches -3: give a number from 1 to 8388608");
  EXPECT_EQ(errorOf(checkTimeout(INFINITY, "--timeout")),
            "--timeout inf: give seconds above 0, at most 604800 (a week)");
  EXPECT_EQ(errorOf(checkTimeout(60, "--timeout")), "accepted");
}

TEST(Tensor, BytesWithoutOverflow) {
  EXPECT_EQ(tensorBytes(DType::F32, {2, 3}), 24u);
  EXPECT_EQ(tensorBytes(DType::F32, {int64_t(1) << 40}), std::nullopt);
  EXPECT_EQ(tensorBytes(DType::F32, {int64_t(1) << 32, int64_t(1) << 32}),
            std::nullopt);
  EXPECT_EQ(tensorBytes(DType::F32, {-1, 4}), std::nullopt);
  EXPECT_EQ(tensorBytes(DType::F32, {0, int64_t(1) << 62}), 0u);
}

} // namespace
