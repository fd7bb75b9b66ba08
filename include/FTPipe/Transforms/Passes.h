//===- Passes.h - FTPipe passes ---------------------------------*- C++ -*-===//
//
// Declares every FTPipe pass (generated from Passes.td) and the entry point
// that registers them all with MLIR's pass registry.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_PASSES_H
#define FTPIPE_TRANSFORMS_PASSES_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace ftpipe {

/// How ftpipe-seq-pipe cuts.
enum class SeqPipeMethod {
  /// Exact dynamic programming.
  DP,
  /// Greedy cuts under a binary-searched stage time.
  Greedy,
};

/// The partitioning passes' `replicas` (docs/Replicas.md), spelled `none`
/// (one pipeline over every device), `auto` (the pipeline's depth and each
/// device's data-parallel replicas chosen by the depth x replicas search,
/// lib/Partition/ReplicaSearch.h), a number W (W identical pipelines of
/// depth P / W on the P devices, PipeDream-2BW's) or one factor per plan
/// device `r0,r1,...` (adding up to P: PipeDream's per-stage replication),
/// the last two planned, priced and checked for memory as the search does
/// that layout (partition::requestedLayout). W = 1 is `none`.
/// ftpipe-compile's --replicas is this option.
class ReplicasOption {
public:
  static ReplicasOption none() { return ReplicasOption(); }
  static ReplicasOption automatic() {
    ReplicasOption option;
    option.automaticLayout = true;
    return option;
  }
  /// W identical pipelines; `none` when W is 1.
  static ReplicasOption identical(unsigned width) {
    ReplicasOption option;
    if (width > 1)
      option.factors = {int64_t(width)};
    return option;
  }
  /// Parses `none`, `auto`, W or `r0,r1,...` (schedule::parseReplicas: each
  /// factor 1 to ReplicaLayout::kMaxReplicas); the message says what is
  /// wrong.
  static llvm::Expected<ReplicasOption> parse(llvm::StringRef text);

  bool isNone() const { return !automaticLayout && factors.empty(); }
  bool isAutomatic() const { return automaticLayout; }
  /// What partition::searchReplicas takes: W, the factors per plan device,
  /// or nothing (any layout) for auto.
  llvm::ArrayRef<int64_t> requested() const { return factors; }
  /// "none", "auto", W or the factors.
  std::string str() const;

private:
  bool automaticLayout = false;
  std::vector<int64_t> factors;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                              const ReplicasOption &option);

/// The values of the training setup's options (Passes.td), spelled and
/// described by FTPipe/Schedule/TrainingSetup.h.
llvm::cl::ValuesClass scheduleOptionValues();
llvm::cl::ValuesClass optimizerOptionValues();
llvm::cl::ValuesClass weightVersionsOptionValues();
llvm::cl::ValuesClass recomputeModeOptionValues();
/// The synchronous kinds, and `none` (Kind::Async): no synchronous step.
llvm::cl::ValuesClass syncScheduleOptionValues();

} // namespace ftpipe
} // namespace mlir

/// The option parser of `replicas` (ReplicasOption::parse), which MLIR's pass
/// options and llvm::cl use for the type.
namespace llvm {
namespace cl {
template <>
class parser<mlir::ftpipe::ReplicasOption>
    : public basic_parser<mlir::ftpipe::ReplicasOption> {
public:
  using basic_parser::basic_parser;
  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::ftpipe::ReplicasOption &value);
  StringRef getValueName() const override { return "none|auto|W|r0,r1,..."; }
  void printOptionDiff(const Option &option,
                       const mlir::ftpipe::ReplicasOption &value,
                       const OptVal &defaultValue, size_t globalWidth) const;
};
} // namespace cl
} // namespace llvm

namespace mlir {
namespace ftpipe {

#define GEN_PASS_DECL
#include "FTPipe/Transforms/Passes.h.inc"

/// Generated: `registerFTPipePasses()` registers every FTPipe pass with the
/// global pass registry, so that `--ftpipe-*` flags and textual pipelines can
/// name them; `registerXPass()` registers one.
#define GEN_PASS_REGISTRATION
#include "FTPipe/Transforms/Passes.h.inc"

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TRANSFORMS_PASSES_H
