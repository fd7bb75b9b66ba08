//===- FreezeCostTest.cpp - Frozen parameters leave the backward's cost ---===//
//
// The cost model's backward FLOPs with frozen parameters (ftpipe-freeze-params
// then analyzeGradientFlow and estimateOpCost, as ftpipe-annotate-costs does):
// on a two-layer MLP they drop by exactly what a count by hand gives, and on
// tiny BERT and LLaMA with a frozen prefix no op of the prefix has backward
// work while the ops after it keep theirs.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/CostModel.h"
#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/ModelGen/ModelGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ftpipe;

namespace {

/// Backward FLOPs per op of `func`'s body, by the cost model.
std::vector<std::pair<Operation *, double>> backwardFlops(func::FuncOp func) {
  DenseMap<Value, OperandInfo> flow = analyzeGradientFlow(func);
  std::vector<std::pair<Operation *, double>> perOp;
  for (Operation &op : func.getBody().front().without_terminator()) {
    SmallVector<OperandInfo> infos;
    for (Value operand : op.getOperands())
      infos.push_back(flow.lookup(operand));
    double flops = 0;
    for (const Kernel &kernel : estimateOpCost(&op, infos).backward)
      flops += kernel.flops;
    perOp.push_back({&op, flops});
  }
  return perOp;
}

double total(const std::vector<std::pair<Operation *, double>> &perOp) {
  double sum = 0;
  for (const auto &entry : perOp)
    sum += entry.second;
  return sum;
}

LogicalResult freeze(ModuleOp module, StringRef regex) {
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(
          ("func.func(ftpipe-freeze-params{regex=" + regex + "})").str(), pm)))
    return failure();
  return pm.run(module);
}

func::FuncOp onlyFunction(ModuleOp module) {
  return *module.getOps<func::FuncOp>().begin();
}

TEST(FreezeCost, MlpBackwardDropsByTheHandCount) {
  DialectRegistry registry;
  registerAllFTPipe(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // x[8x16] @ w1[16x32] -> tanh -> @ w2[32x4].
  const char *ir = R"mlir(
func.func @mlp(%x: tensor<1x8x16xf32>,
               %w1: tensor<1x16x32xf32> {ftpipe.param, ftpipe.name = "l0.w"},
               %w2: tensor<1x32x4xf32> {ftpipe.param, ftpipe.name = "l1.w"})
    -> tensor<1x8x4xf32> {
  %h = tosa.matmul %x, %w1 : (tensor<1x8x16xf32>, tensor<1x16x32xf32>) -> tensor<1x8x32xf32>
  %t = tosa.tanh %h : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %y = tosa.matmul %t, %w2 : (tensor<1x8x32xf32>, tensor<1x32x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  ASSERT_TRUE(module);
  double before = total(backwardFlops(onlyFunction(*module)));
  // By hand: the first product only for w1's gradient (x is data), 2*8*16*32;
  // tanh one per element, 8*32; the second product for both operands,
  // 2 * 2*8*32*4.
  const double firstProduct = 2.0 * 8 * 16 * 32, tanh = 8.0 * 32,
               secondProduct = 2.0 * 8 * 32 * 4;
  EXPECT_DOUBLE_EQ(before, firstProduct + tanh + 2 * secondProduct);
  ASSERT_TRUE(succeeded(freeze(*module, "^l0\\.")));
  double after = total(backwardFlops(onlyFunction(*module)));
  // Frozen w1: no gradient reaches the first layer, so the second product
  // makes w2's gradient only.
  EXPECT_DOUBLE_EQ(after, secondProduct);
  EXPECT_DOUBLE_EQ(before - after, firstProduct + tanh + secondProduct);
}

struct PrefixCase {
  const char *model, *regex;
  /// Scopes of the frozen prefix (in the ops' locations).
  std::vector<const char *> scopes;
};

class FreezePrefix : public ::testing::TestWithParam<PrefixCase> {};

TEST_P(FreezePrefix, PrefixHasNoBackwardWork) {
  const PrefixCase &param = GetParam();
  DialectRegistry registry;
  registerAllFTPipe(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::Expected<ModelConfig> config = loadModelConfig(param.model);
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  ModelGenOptions options;
  options.withLoss = true;
  auto module = generateModel(context, *config, options);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  func::FuncOp func = onlyFunction(**module);
  auto inPrefix = [&](Operation *op) {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    op->getLoc().print(os);
    return llvm::any_of(param.scopes, [&](const char *scope) {
      return StringRef(loc).contains(scope);
    });
  };
  auto before = backwardFlops(func);
  double prefixBefore = 0;
  for (const auto &[op, flops] : before)
    if (inPrefix(op))
      prefixBefore += flops;
  ASSERT_GT(prefixBefore, 0);
  ASSERT_TRUE(succeeded(freeze(**module, param.regex)));
  auto after = backwardFlops(func);
  ASSERT_EQ(before.size(), after.size());
  for (auto [b, a] : llvm::zip(before, after)) {
    if (inPrefix(a.first)) {
      EXPECT_EQ(a.second, 0)
          << "an op of the frozen prefix keeps backward work";
    }
    EXPECT_LE(a.second, b.second);
  }
  // The whole drop is at least the prefix's share (the first products after
  // the prefix also lose their input gradient), and the ops after it keep
  // most of their work.
  double drop = total(before) - total(after);
  EXPECT_GE(drop, prefixBefore);
  EXPECT_GT(total(after), 0);
  llvm::outs() << param.model << ": backward " << total(before) << " -> "
               << total(after) << " FLOPs; the frozen prefix had "
               << prefixBefore << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    TinyModels, FreezePrefix,
    ::testing::Values(PrefixCase{"bert-tiny",
                                 "^bert\\.(embeddings|encoder\\.layer\\.0)\\.",
                                 {"BertEmbeddings", "BertLayer[0]"}},
                      PrefixCase{
                          "llama-tiny",
                          "^model\\.(embed_tokens|layers\\.0)\\.",
                          {"Embedding[embed_tokens]", "LlamaDecoderLayer[0]"}}),
    [](const auto &info) {
      std::string name = info.param.model;
      name.erase(name.find('-'), 1);
      return name;
    });

} // namespace
