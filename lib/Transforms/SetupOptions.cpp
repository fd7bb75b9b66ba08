//===- SetupOptions.cpp - Option values of the training setup -------------===//
//
// The `schedule`, `optimizer`, `stashing` and `recompute` options of every pass
// that plans or reports (and the planners' `sync-schedule`) take their
// spellings and help lines from FTPipe/Schedule/TrainingSetup.h, so the
// runtime, the report and the options name each value once. The planners'
// `replicas` (none, auto, W or a factor per device) is parsed and printed
// here too.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/Passes.h"

#include "FTPipe/Schedule/Replicas.h"

#include "llvm/ADT/StringExtras.h"

using namespace ::ftpipe::schedule;

/// The option value of `e`: its spelling and its line for a person.
template <typename Enum> static llvm::cl::OptionEnumValue value(Enum e) {
  return {nameOf(e), int(e), descriptionOf(e)};
}

llvm::cl::ValuesClass mlir::ftpipe::scheduleOptionValues() {
  return llvm::cl::ValuesClass(
      {value(Kind::Async), value(Kind::GPipe), value(Kind::OneFOneB),
       value(Kind::ZeroBubbleH1), value(Kind::ZeroBubbleAuto)});
}

llvm::cl::ValuesClass mlir::ftpipe::syncScheduleOptionValues() {
  return llvm::cl::ValuesClass(
      {{"none", int(Kind::Async), "no synchronous step: 'schedule' decides"},
       value(Kind::GPipe),
       value(Kind::OneFOneB),
       value(Kind::ZeroBubbleH1),
       value(Kind::ZeroBubbleAuto)});
}

llvm::cl::ValuesClass mlir::ftpipe::optimizerOptionValues() {
  return llvm::cl::ValuesClass({value(Optimizer::SGD),
                                value(Optimizer::Momentum),
                                value(Optimizer::Adam), value(Optimizer::AdamW),
                                value(Optimizer::Adafactor)});
}

llvm::cl::ValuesClass mlir::ftpipe::weightVersionsOptionValues() {
  return llvm::cl::ValuesClass({value(WeightVersions::Stash),
                                value(WeightVersions::DoubleBuffered),
                                value(WeightVersions::None)});
}

llvm::cl::ValuesClass mlir::ftpipe::recomputeModeOptionValues() {
  return llvm::cl::ValuesClass({value(RecomputeMode::Always),
                                value(RecomputeMode::Never),
                                value(RecomputeMode::Auto)});
}

llvm::Expected<mlir::ftpipe::ReplicasOption>
mlir::ftpipe::ReplicasOption::parse(llvm::StringRef text) {
  if (text == "auto")
    return automatic();
  // none, W and factors per device as ftpipe-run's --replicas spells them
  // (schedule::parseReplicas, its bounds included).
  llvm::Expected<ReplicaLayout> layout =
      parseReplicas(text, /*devices=*/text.count(',') + 1);
  if (!layout)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::toString(layout.takeError()) +
            "; the passes take none, auto, a number of identical pipelines "
            "W or a factor per plan device r0,r1,...");
  if (layout->devices() == 1)
    return identical(unsigned(layout->replicas.front()));
  ReplicasOption option;
  option.factors = std::move(layout->replicas);
  return option;
}

std::string mlir::ftpipe::ReplicasOption::str() const {
  if (automaticLayout)
    return "auto";
  if (factors.empty())
    return "none";
  return llvm::join(
      llvm::map_range(factors, [](int64_t r) { return std::to_string(r); }),
      ",");
}

llvm::raw_ostream &mlir::ftpipe::operator<<(llvm::raw_ostream &os,
                                            const ReplicasOption &option) {
  return os << option.str();
}

bool llvm::cl::parser<mlir::ftpipe::ReplicasOption>::parse(
    Option &option, StringRef, StringRef arg,
    mlir::ftpipe::ReplicasOption &value) {
  llvm::Expected<mlir::ftpipe::ReplicasOption> parsed =
      mlir::ftpipe::ReplicasOption::parse(arg);
  if (!parsed)
    return option.error(llvm::toString(parsed.takeError()));
  value = *parsed;
  return false;
}

void llvm::cl::parser<mlir::ftpipe::ReplicasOption>::printOptionDiff(
    const Option &option, const mlir::ftpipe::ReplicasOption &value,
    const OptVal &, size_t globalWidth) const {
  printOptionName(option, globalWidth);
  llvm::outs() << "= " << value << "\n";
}
