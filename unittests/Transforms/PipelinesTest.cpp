//===- PipelinesTest.cpp - Tests of the typed pipeline builders -*- C++ -*-===//
//
// The builders of Pipelines.h map typed options onto the passes' own
// options; these tests read the built pipeline back as text and check that
// every option landed on the right pass, that the textual forms mean the same
// as the typed ones, and that registration is idempotent.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/InitAllFTPipe.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::ftpipe;
namespace partition = ::ftpipe::partition;

namespace {

/// The textual form of the pipeline `build` appends to a module pass manager.
template <typename BuildFn>
std::string pipelineText(BuildFn build) {
  OpPassManager pm(ModuleOp::getOperationName());
  build(pm);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return os.str();
}

/// The textual form of one pass `name{...}` within `text` (empty if absent).
std::string passText(const std::string &text, const std::string &name) {
  size_t begin = text.find(name + "{");
  if (begin == std::string::npos)
    return "";
  size_t end = text.find('}', begin);
  return text.substr(begin, end - begin + 1);
}

TEST(PipelinesTest, DefaultsAreThePassDefaults) {
  PartitionPipelineOptions options;
  AutoPartitionPassOptions autoPartition;
  EXPECT_EQ(options.hardware, AnnotateCostsPassOptions().hardware);
  EXPECT_EQ(options.dpMaxOps, autoPartition.dpMaxOps);
  EXPECT_EQ(options.setup.schedule, autoPartition.schedule);
  EXPECT_EQ(options.setup.optimizer, autoPartition.optimizer);
  EXPECT_EQ(options.setup.weightVersions, autoPartition.stashing);
  EXPECT_EQ(options.setup.recompute, autoPartition.recompute);
  EXPECT_EQ(options.setup.microBatches, autoPartition.microbatches);
  EXPECT_EQ(options.method, PartitionMethod::Auto);
  EXPECT_TRUE(options.quiet);
}

TEST(PipelinesTest, EachMethodEndsWithItsPartitioner) {
  struct Case {
    PartitionMethod method;
    const char *pass;
    const char *detail;
  } cases[] = {
      {PartitionMethod::Auto, "ftpipe-auto-partition", "quiet=true"},
      {PartitionMethod::MixedPipe, "ftpipe-mixed-pipe", "verbose=false"},
      {PartitionMethod::SeqDP, "ftpipe-seq-pipe", "method=dp"},
      {PartitionMethod::SeqGreedy, "ftpipe-seq-pipe", "method=greedy"},
  };
  for (const Case &c : cases) {
    PartitionPipelineOptions options;
    options.method = c.method;
    std::string text = pipelineText(
        [&](OpPassManager &pm) { buildPartitionPipeline(pm, options); });
    SCOPED_TRACE(text);
    EXPECT_EQ(text.find("builtin.module(ftpipe-annotate-costs{"), 0u);
    std::string partitioner = passText(text, c.pass);
    ASSERT_FALSE(partitioner.empty());
    EXPECT_NE(partitioner.find(c.detail), std::string::npos);
    EXPECT_GT(text.find(c.pass), text.find("ftpipe-annotate-costs"));
  }
}

TEST(PipelinesTest, OptionsReachThePasses) {
  PartitionPipelineOptions options;
  options.hardware = "v100-nvlink-x8";
  options.profile = "profile.json";
  options.devices = 3;
  options.function = "forward";
  options.method = PartitionMethod::SeqGreedy;
  options.setup.schedule = ::ftpipe::schedule::Kind::GPipe;
  options.setup.optimizer = ::ftpipe::schedule::Optimizer::SGD;
  options.setup.weightVersions = ::ftpipe::schedule::WeightVersions::Stash;
  options.setup.recompute = partition::RecomputeMode::Never;
  options.setup.microBatches = 16;
  std::string text = pipelineText(
      [&](OpPassManager &pm) { buildPartitionPipeline(pm, options); });
  SCOPED_TRACE(text);
  std::string annotate = passText(text, "ftpipe-annotate-costs");
  EXPECT_NE(annotate.find("hardware=v100-nvlink-x8"), std::string::npos);
  EXPECT_NE(annotate.find("profile=profile.json"), std::string::npos);
  std::string seqPipe = passText(text, "ftpipe-seq-pipe");
  for (const char *expected :
       {"devices=3", "function=forward", "method=greedy", "schedule=gpipe",
        "optimizer=sgd", "stashing=stash", "recompute=false",
        "microbatches=16"})
    EXPECT_NE(seqPipe.find(expected), std::string::npos) << expected;
}

TEST(PipelinesTest, MixedPipeSearchOrPhases) {
  MixedPipeOptions search;
  search.devices = 4;
  std::string text = pipelineText(
      [&](OpPassManager &pm) { buildMixedPipePipeline(pm, search); });
  EXPECT_NE(passText(text, "ftpipe-mixed-pipe").find("devices=4"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("ftpipe-coarsen"), std::string::npos) << text;

  MixedPipeOptions phases;
  phases.devices = 2;
  phases.stages = 6;
  phases.blockTypes = {"T5Block", "BertLayer"};
  phases.setup.optimizer = ::ftpipe::schedule::Optimizer::Momentum;
  text = pipelineText(
      [&](OpPassManager &pm) { buildMixedPipePipeline(pm, phases); });
  SCOPED_TRACE(text);
  std::string coarsen = passText(text, "ftpipe-coarsen");
  EXPECT_NE(coarsen.find("stages=6"), std::string::npos);
  EXPECT_NE(coarsen.find("block-types=T5Block,BertLayer"), std::string::npos);
  EXPECT_NE(passText(text, "ftpipe-assign-devices").find("optimizer=momentum"),
            std::string::npos);
  EXPECT_NE(passText(text, "ftpipe-refine").find("optimizer=momentum"),
            std::string::npos);
  EXPECT_EQ(text.find("ftpipe-mixed-pipe"), std::string::npos);

  phases.refine = false;
  text = pipelineText(
      [&](OpPassManager &pm) { buildMixedPipePipeline(pm, phases); });
  EXPECT_EQ(text.find("ftpipe-refine"), std::string::npos) << text;
}

TEST(PipelinesTest, TextOptionsMeanTheTypedOnes) {
  PartitionPipelineTextOptions text;
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  ASSERT_TRUE(succeeded(text.parseFromString(
      "hardware=a100-40g-nvlink-x8 devices=4 method=seq-greedy quiet=false "
      "schedule=1f1b optimizer=momentum stashing=2bw recompute=auto "
      "microbatches=12 dp-max-ops=7",
      errorStream)))
      << errorStream.str();
  PartitionPipelineOptions options = text.toOptions();
  EXPECT_EQ(options.hardware, "a100-40g-nvlink-x8");
  EXPECT_EQ(options.devices, 4u);
  EXPECT_EQ(options.method, PartitionMethod::SeqGreedy);
  EXPECT_FALSE(options.quiet);
  EXPECT_EQ(options.dpMaxOps, 7u);
  EXPECT_EQ(options.setup.schedule, ::ftpipe::schedule::Kind::OneFOneB);
  EXPECT_EQ(options.setup.optimizer, ::ftpipe::schedule::Optimizer::Momentum);
  EXPECT_EQ(options.setup.weightVersions,
            ::ftpipe::schedule::WeightVersions::DoubleBuffered);
  EXPECT_EQ(options.setup.recompute, partition::RecomputeMode::Auto);
  EXPECT_EQ(options.setup.microBatches, 12u);

  // Unset flags keep the typed defaults.
  PartitionPipelineTextOptions empty;
  PartitionPipelineOptions defaults = empty.toOptions();
  PartitionPipelineOptions typed;
  EXPECT_EQ(defaults.hardware, typed.hardware);
  EXPECT_EQ(defaults.method, typed.method);
  EXPECT_EQ(defaults.quiet, typed.quiet);
  EXPECT_EQ(defaults.setup, typed.setup);

  MixedPipeTextOptions mixedText;
  ASSERT_TRUE(succeeded(mixedText.parseFromString(
      "stages=8 block-types=T5Block refine=false", errorStream)));
  MixedPipeOptions mixed = mixedText.toOptions();
  EXPECT_EQ(mixed.stages, 8u);
  ASSERT_EQ(mixed.blockTypes.size(), 1u);
  EXPECT_EQ(mixed.blockTypes[0], "T5Block");
  EXPECT_FALSE(mixed.refine);
}

TEST(PipelinesTest, RegistrationIsIdempotentAndNamed) {
  DialectRegistry registry;
  registerAllFTPipe(registry);
  registerAllFTPipe(registry);
  EXPECT_TRUE(llvm::is_contained(registry.getDialectNames(), "ftpipe"));
  EXPECT_TRUE(llvm::is_contained(registry.getDialectNames(), "tosa"));

  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  FailureOr<OpPassManager> pm = parsePassPipeline(
      "builtin.module(ftpipe-partition-pipeline{devices=2 method=seq-dp},"
      "ftpipe-mixed-pipe-pipeline{stages=4})",
      errorStream);
  ASSERT_TRUE(succeeded(pm)) << errorStream.str();
  std::string text;
  llvm::raw_string_ostream os(text);
  pm->printAsTextualPipeline(os);
  EXPECT_NE(os.str().find("ftpipe-seq-pipe{"), std::string::npos) << text;
  EXPECT_NE(os.str().find("ftpipe-coarsen{"), std::string::npos) << text;
}

} // namespace
