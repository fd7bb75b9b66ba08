//===- AnnotateCosts.cpp - Attach op costs and the hardware -----*- C++ -*-===//
//
// Runs the cost model over every op of every function body, optionally
// overridden by a measured profile, and records the hardware on the module.
// Every later FTPipe pass reads these attributes instead of re-deriving them.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/CostModel.h"
#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Analysis/Scope.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

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

/// Measured forward and backward time of one scope.
struct MeasuredTime {
  double fwdMs = 0.0;
  double bwdMs = 0.0;
};

/// Reads a profile: a JSON object from scope to {"fwd_ms", "bwd_ms"}.
static FailureOr<llvm::StringMap<MeasuredTime>>
readProfile(StringRef path, function_ref<InFlightDiagnostic()> emitError) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> text =
      ::ftpipe::support::readBoundedFile(
          path, "profile", ::ftpipe::support::kMaxInputFileBytes,
          ::ftpipe::support::FileKinds::RegularOrStream);
  if (!text)
    return emitError() << llvm::toString(text.takeError());
  llvm::Expected<llvm::json::Value> json =
      ::ftpipe::support::parseBoundedJSON((*text)->getBuffer());
  if (!json)
    return emitError() << "profile '" << path
                       << "' is not JSON: " << llvm::toString(json.takeError());
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return emitError() << "profile '" << path
                       << "' must be an object from scope to times";
  llvm::StringMap<MeasuredTime> profile;
  for (const auto &[scope, entry] : *object) {
    const llvm::json::Object *times = entry.getAsObject();
    std::optional<double> fwd =
        times ? times->getNumber("fwd_ms") : std::nullopt;
    std::optional<double> bwd =
        times ? times->getNumber("bwd_ms") : std::nullopt;
    if (!fwd || !bwd || *fwd < 0 || *bwd < 0)
      return emitError() << "profile entry '" << scope.str()
                         << "' needs non-negative numbers 'fwd_ms' and "
                            "'bwd_ms'";
    if (*fwd > partition::kMaxOpMs || *bwd > partition::kMaxOpMs)
      return emitError() << "profile entry '" << scope.str()
                         << "': times above " << int64_t(partition::kMaxOpMs)
                         << " ms are not supported";
    profile[scope.str()] = {*fwd, *bwd};
  }
  return profile;
}

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
  FailureOr<HardwareAttr> hwAttr =
      getHardwareAttr(context, *hw, emitModuleError);
  if (failed(hwAttr))
    return signalPassFailure();
  module->setAttr(FTPipeDialect::kHardwareAttrName, *hwAttr);
  const partition::Device &reference = hw->device(device);

  llvm::StringMap<MeasuredTime> measured;
  if (!profile.empty()) {
    FailureOr<llvm::StringMap<MeasuredTime>> read =
        readProfile(profile, emitModuleError);
    if (failed(read))
      return signalPassFailure();
    measured = std::move(*read);
  }

  // Analytical costs first; then each profiled scope's time is shared among
  // its ops in proportion to their analytical times.
  struct Entry {
    Operation *op;
    std::string scope;
    OpCostEstimate estimate;
    double fwdMs, bwdMs;
    /// Of bwdMs, the parameter gradients' part (a split backward's W).
    double bwdWeightMs;
  };
  std::vector<Entry> entries;
  struct ScopeTotals {
    double fwdMs = 0.0, bwdMs = 0.0;
    size_t numOps = 0;
  };
  llvm::StringMap<ScopeTotals> analyticalPerScope;
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
      Entry entry{&op,
                  getOpScope(&op, func.getSymName(), index++),
                  estimate,
                  estimate.forwardMs(reference),
                  estimate.backwardMs(reference),
                  estimate.backwardWeightMs(reference)};
      ScopeTotals &totals = analyticalPerScope[entry.scope];
      totals.fwdMs += entry.fwdMs;
      totals.bwdMs += entry.bwdMs;
      ++totals.numOps;
      entries.push_back(std::move(entry));
    }
  }

  llvm::StringSet<> matched;
  for (Entry &entry : entries) {
    auto it = measured.find(entry.scope);
    if (it == measured.end())
      continue;
    matched.insert(entry.scope);
    const ScopeTotals &totals = analyticalPerScope[entry.scope];
    // Shares follow the analytical times; a scope whose analytical time is
    // zero splits evenly, so no measured time is dropped.
    auto share = [&](double part, double total, double measuredMs) {
      return total > 0 ? measuredMs * part / total
                       : measuredMs / double(totals.numOps);
    };
    entry.fwdMs = share(entry.fwdMs, totals.fwdMs, it->second.fwdMs);
    // The weight part keeps its analytical share of the op's backward.
    double weightShare =
        entry.bwdMs > 0 ? std::min(1.0, entry.bwdWeightMs / entry.bwdMs) : 0.0;
    entry.bwdMs = share(entry.bwdMs, totals.bwdMs, it->second.bwdMs);
    entry.bwdWeightMs = weightShare * entry.bwdMs;
  }
  for (const auto &item : measured)
    if (!matched.contains(item.getKey()))
      emitWarning(module.getLoc())
          << "profile scope '" << item.getKey() << "' matches no op";

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
