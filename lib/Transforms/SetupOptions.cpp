//===- SetupOptions.cpp - Option values of the training setup -------------===//
//
// The `schedule`, `optimizer`, `stashing` and `recompute` options of every pass
// that plans or reports take their spellings and help lines from
// FTPipe/Schedule/TrainingSetup.h, so the runtime, the report and the
// options name each value once.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/Passes.h"

using namespace ::ftpipe::schedule;

template <typename Enum>
static llvm::cl::OptionEnumValue value(Enum e, llvm::StringRef name,
                                       llvm::StringRef description) {
  return {name, int(e), description};
}

llvm::cl::ValuesClass mlir::ftpipe::scheduleOptionValues() {
  auto of = [](Kind kind) {
    return value(kind, kindName(kind), describeKind(kind));
  };
  return llvm::cl::ValuesClass({of(Kind::Async), of(Kind::GPipe),
                                of(Kind::OneFOneB), of(Kind::ZeroBubbleH1),
                                of(Kind::ZeroBubbleAuto)});
}

llvm::cl::ValuesClass mlir::ftpipe::optimizerOptionValues() {
  auto of = [](Optimizer optimizer) {
    return value(optimizer, optimizerName(optimizer),
                 describeOptimizer(optimizer));
  };
  return llvm::cl::ValuesClass({of(Optimizer::SGD), of(Optimizer::Momentum),
                                of(Optimizer::Adam), of(Optimizer::AdamW),
                                of(Optimizer::Adafactor)});
}

llvm::cl::ValuesClass mlir::ftpipe::weightVersionsOptionValues() {
  auto of = [](WeightVersions versions) {
    return value(versions, weightVersionsName(versions),
                 describeWeightVersions(versions));
  };
  return llvm::cl::ValuesClass({of(WeightVersions::Stash),
                                of(WeightVersions::DoubleBuffered),
                                of(WeightVersions::None)});
}

llvm::cl::ValuesClass mlir::ftpipe::recomputeModeOptionValues() {
  auto of = [](RecomputeMode mode) {
    return value(mode, recomputeModeName(mode), describeRecomputeMode(mode));
  };
  return llvm::cl::ValuesClass({of(RecomputeMode::Always),
                                of(RecomputeMode::Never),
                                of(RecomputeMode::Auto)});
}
