//===- CostModel.h - Analytical cost of tensor ops --------------*- C++ -*-===//
//
// What an op costs for one micro-batch, derived from its tensor types: the
// kernels its forward and backward run (FLOPs and bytes moved each, timed by
// a roofline on a device), the bytes of activations its backward needs saved,
// and the bytes of its results. Rules cover tosa, linalg (named and generic),
// tensor, arith and math; an op without a rule is flagged so the caller can
// warn, and still gets a byte-based estimate, never a silent zero.
//
// The rules, their sources and their limits are in docs/CostModel.md.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_ANALYSIS_COSTMODEL_H
#define FTPIPE_ANALYSIS_COSTMODEL_H

#include "FTPipe/Partition/Hardware.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace ftpipe {

/// The MLIR-free partitioning library, as seen from IR code.
namespace partition = ::ftpipe::partition;

/// One kernel launch: arithmetic and memory traffic.
struct Kernel {
  double flops = 0.0;
  double bytes = 0.0;
  /// Backward kernels: the share of the kernel's work that makes gradients
  /// of parameters (what a split backward's weight part W runs; the rest is
  /// its input part I). 1 for a contraction's product for its parameter
  /// operand; for a kernel that writes several operands' gradients, the
  /// parameters' share of the gradient bytes it writes.
  double weightShare = 0.0;
};

/// How an op is costed.
enum class CostRule {
  /// No kernel: views, constants, scalar index arithmetic.
  Free,
  /// Matrix products and convolutions.
  Contraction,
  /// Element by element (with broadcasting).
  Elementwise,
  /// Reductions along dimensions.
  Reduction,
  /// Copies, transposes, slices, gathers.
  DataMovement,
  /// A linalg.generic or other structured op: its iteration space.
  Structured,
  /// No rule: a byte-based estimate (the caller warns).
  Unknown,
};

/// The analytical cost of one op.
struct OpCostEstimate {
  CostRule rule = CostRule::Unknown;
  llvm::SmallVector<Kernel, 1> forward;
  /// Empty when no operand needs a gradient.
  llvm::SmallVector<Kernel, 2> backward;
  /// Activations kept from forward to backward (parameters excluded: they
  /// are stored anyway).
  int64_t actBytes = 0;
  /// Bytes of all tensor results.
  int64_t outBytes = 0;
  /// Bytes of parameters among the operands (a parameter used twice by the
  /// op counts once).
  int64_t paramBytes = 0;

  /// Forward and backward time on `device`: the sum of the kernels' roofline
  /// times.
  double forwardMs(const partition::Device &device) const;
  double backwardMs(const partition::Device &device) const;
  /// The part of backwardMs that makes parameter gradients (each backward
  /// kernel's time times its weightShare): a split backward's W.
  double backwardWeightMs(const partition::Device &device) const;
};

/// What the cost model needs to know about an op's operands.
struct OperandInfo {
  /// The operand is a trainable parameter (a `ftpipe.param` argument).
  bool isParam = false;
  /// A gradient flows into this operand in backward (it is a parameter or
  /// computed from one).
  bool needsGrad = false;
};

/// The largest tensor FTPipe counts (16 TiB, beyond any device's memory):
/// sums of such sizes stay far from overflowing 64 bits.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 44;

/// Why FTPipe cannot count the bytes of a value of `type` (an unranked
/// tensor, a dynamic dimension, an element type of unknown size, more than
/// kMaxTensorBytes), or an empty string when it can.
std::string getUnsizedTypeReason(Type type);

/// Bytes of a value of `type`: elements times element size (i1 counts one
/// byte, index 8, complex twice its part); 0 for non-tensor types and for
/// the types getUnsizedTypeReason refuses.
int64_t getTypeBytes(Type type);

/// Estimates the cost of `op`, whose operands are described by `operands`
/// (one entry per operand).
OpCostEstimate estimateOpCost(Operation *op, ArrayRef<OperandInfo> operands);

/// Whether `op` transposes a parameter matrix (a `ftpipe.param` argument of
/// its function) that only matrix products read, through reshapes to one
/// batch of it (`[1, rows, cols]`, as the TOSA front end writes `x @ W^T`),
/// in the same block: code generation reads the weight in that layout, so
/// estimateOpCost counts no kernel for it. That holds while its readers are
/// in its stage; elsewhere it is a copy.
bool isFoldedWeightTranspose(Operation *op);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_ANALYSIS_COSTMODEL_H
