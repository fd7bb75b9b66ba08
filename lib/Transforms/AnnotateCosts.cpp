//===- AnnotateCosts.cpp - Attach op costs and the hardware -----*- C++ -*-===//
//
// Runs the cost model over every op of every function body, optionally
// overridden by a measured profile (ProfileSchema.h), and records the hardware
// on the module. Every later FTPipe pass reads these attributes instead of
// re-deriving them.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/CostModel.h"
#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Analysis/Scope.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Runtime/ProfileSchema.h"
#include "FTPipe/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <map>

#define DEBUG_TYPE "ftpipe-annotate-costs"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_ANNOTATECOSTSPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct AnnotateCostsPass
    : public mlir::ftpipe::impl::AnnotateCostsPassBase<AnnotateCostsPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Rounds an estimate to 6 significant digits: more would only be noise in
/// the IR, and the partitioner cannot use it.
static double roundToSignificant(double value) {
  if (value == 0.0)
    return 0.0;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(value))));
  return std::round(value * scale) / scale;
}

void AnnotateCostsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto emitModuleError = [&] { return emitError(module.getLoc()); };

  llvm::Expected<partition::Hardware> hw = partition::loadHardware(hardware);
  if (!hw) {
    emitError(module.getLoc()) << "cannot load hardware '" << hardware
                               << "': " << llvm::toString(hw.takeError());
    return signalPassFailure();
  }
  if (device >= hw->numDevices()) {
    emitError(module.getLoc())
        << "reference device " << device.getValue() << " is not one of the "
        << hw->numDevices() << " devices of '" << hw->name() << "'";
    return signalPassFailure();
  }
  ::ftpipe::runtime::MeasuredProfile measured;
  if (!profile.empty()) {
    llvm::Expected<::ftpipe::runtime::MeasuredProfile> read =
        ::ftpipe::runtime::readProfile(profile);
    if (!read) {
      emitError(module.getLoc()) << llvm::toString(read.takeError());
      return signalPassFailure();
    }
    measured = std::move(*read);
  }
  // Devices slowed down on purpose in the profiled run (ftpipe-run
  // --debug-slow) are as much slower here: their rates are divided by the
  // factor, and their stages' measured times by it too, which the devices'
  // relative speeds put back.
  std::map<int64_t, double> slowdown;
  for (auto [process, factor] : measured.source.slowdowns)
    for (const ::ftpipe::runtime::ProfileProcess &run : measured.processes)
      if (run.process == process && run.device < int64_t(hw->numDevices()))
        slowdown[run.device] = std::max(slowdown[run.device], factor);
  if (!slowdown.empty()) {
    partition::HardwareSpec spec = hw->spec();
    for (auto [d, factor] : slowdown) {
      spec.devices[d].tflops /= factor;
      spec.devices[d].memGBps /= factor;
    }
    hw = partition::Hardware::create(std::move(spec));
    if (!hw) {
      emitError(module.getLoc())
          << "profile '" << profile
          << "': its slowed-down devices: " << llvm::toString(hw.takeError());
      return signalPassFailure();
    }
  }
  auto slowdownOf = [&](int64_t d) {
    auto it = slowdown.find(d);
    return it == slowdown.end() ? 1.0 : it->second;
  };

  FailureOr<HardwareAttr> hwAttr =
      getHardwareAttr(context, *hw, emitModuleError);
  if (failed(hwAttr))
    return signalPassFailure();
  module->setAttr(FTPipeDialect::kHardwareAttrName, *hwAttr);
  const partition::Device &reference = hw->device(device);

  // Analytical costs first; then each profiled stage's time is shared among
  // its ops in proportion to their analytical times, and each profiled
  // scope's time among the ops of the scope, which replaces the stage's.
  struct Entry {
    Operation *op;
    std::string scope;
    OpCostEstimate estimate;
    double fwdMs, bwdMs;
    /// Of bwdMs, the parameter gradients' part (a split backward's W).
    double bwdWeightMs;
  };
  std::vector<Entry> entries;
  // The entries of the model function's ops, by position: the ops a
  // profiled stage lists.
  std::vector<size_t> modelEntries;
  func::FuncOp modelFunction;
  if (llvm::any_of(measured.stages,
                   [](const auto &stage) { return !stage.ops.empty(); })) {
    FailureOr<func::FuncOp> function = getModelFunction(module, "");
    if (failed(function))
      return signalPassFailure();
    modelFunction = *function;
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (failed(verifyCostableFunction(func)))
      return signalPassFailure();
    DenseMap<Value, OperandInfo> flow = analyzeGradientFlow(func);
    unsigned index = 0;
    for (Operation &op : func.getBody().front().without_terminator()) {
      SmallVector<OperandInfo> infos;
      for (Value operand : op.getOperands())
        infos.push_back(flow.lookup(operand));
      OpCostEstimate estimate = estimateOpCost(&op, infos);
      if (estimate.rule == CostRule::Unknown) {
        op.emitWarning() << "no cost rule for '" << op.getName()
                         << "': using a byte-based estimate";
        ++numUnknownOps;
      }
      if (func == modelFunction)
        modelEntries.push_back(entries.size());
      entries.push_back({&op, getOpScope(&op, func.getSymName(), index++),
                         estimate, estimate.forwardMs(reference),
                         estimate.backwardMs(reference),
                         estimate.backwardWeightMs(reference)});
    }
  }

  // Shares follow the analytical times; a group whose analytical time is
  // zero splits evenly, so no measured time is dropped.
  auto spread = [&](ArrayRef<size_t> group, double fwdMs, double bwdMs) {
    double fwdTotal = 0, bwdTotal = 0;
    for (size_t e : group) {
      fwdTotal += entries[e].fwdMs;
      bwdTotal += entries[e].bwdMs;
    }
    auto share = [&](double part, double total, double measuredMs) {
      return total > 0 ? measuredMs * part / total
                       : measuredMs / double(group.size());
    };
    for (size_t e : group) {
      Entry &entry = entries[e];
      entry.fwdMs = share(entry.fwdMs, fwdTotal, fwdMs);
      // The weight part keeps its analytical share of the op's backward.
      double weightShare = entry.bwdMs > 0
                               ? std::min(1.0, entry.bwdWeightMs / entry.bwdMs)
                               : 0.0;
      entry.bwdMs = share(entry.bwdMs, bwdTotal, bwdMs);
      entry.bwdWeightMs = weightShare * entry.bwdMs;
    }
  };

  size_t profiledOps = 0;
  for (const ::ftpipe::runtime::ProfileStage &stage : measured.stages)
    profiledOps += stage.ops.size();
  if (profiledOps && profiledOps != modelEntries.size()) {
    emitError(module.getLoc())
        << "profile '" << profile << "' was measured on a model of "
        << profiledOps << " ops (its stages' ops); @"
        << modelFunction.getSymName() << " has " << modelEntries.size();
    return signalPassFailure();
  }
  // A CPU-target profile prices with its stages' CPU times.
  bool cpuTimes = measured.pricesCpuTime();
  for (const ::ftpipe::runtime::ProfileStage &stage : measured.stages) {
    if (stage.ops.empty()) {
      emitWarning(module.getLoc()) << "profile stage " << stage.id
                                   << " lists no ops: its times price nothing";
      continue;
    }
    SmallVector<size_t> group;
    for (int64_t op : stage.ops) {
      if (op >= int64_t(modelEntries.size())) {
        emitError(module.getLoc())
            << "profile '" << profile << "': stage " << stage.id << " lists op "
            << op << ", @" << modelFunction.getSymName() << " has "
            << modelEntries.size();
        return signalPassFailure();
      }
      group.push_back(modelEntries[op]);
    }
    // Times on the reference device at its (possibly slowed) speed.
    double scale = slowdownOf(device) / slowdownOf(stage.device);
    spread(group, stage.measuredForwardMs(cpuTimes) * scale,
           stage.backwardOnlyMs(cpuTimes) * scale);
  }

  llvm::StringMap<SmallVector<size_t>> scopes;
  for (auto [e, entry] : llvm::enumerate(entries))
    if (measured.ops.count(entry.scope))
      scopes[entry.scope].push_back(e);
  for (const auto &[scope, times] : measured.ops) {
    auto it = scopes.find(scope);
    if (it == scopes.end()) {
      emitWarning(module.getLoc())
          << "profile scope '" << scope << "' matches no op";
      continue;
    }
    // The scope's ops, priced as the cost model would (their shares follow
    // the analytical times, not a stage's measured share).
    for (size_t e : it->second) {
      entries[e].fwdMs = entries[e].estimate.forwardMs(reference);
      entries[e].bwdMs = entries[e].estimate.backwardMs(reference);
      entries[e].bwdWeightMs = entries[e].estimate.backwardWeightMs(reference);
    }
    spread(it->second, times.forwardMs, times.backwardMs);
  }

  for (Entry &entry : entries) {
    double bwdMs = roundToSignificant(entry.bwdMs);
    entry.op->setAttr(
        FTPipeDialect::kCostAttrName,
        CostAttr::get(context, roundToSignificant(entry.fwdMs), bwdMs,
                      entry.estimate.paramBytes, entry.estimate.actBytes,
                      entry.estimate.outBytes,
                      std::min(bwdMs, roundToSignificant(entry.bwdWeightMs))));
  }
}
