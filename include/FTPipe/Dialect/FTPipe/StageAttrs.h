//===- StageAttrs.h - Attribute names of the stage programs -----*- C++ -*-===//
//
// The discardable attributes through which the stage-program passes
// (outline, differentiate, split) talk to each other and to code generation
// (docs/StagePrograms.md); the dialect verifies their kinds.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_STAGEATTRS_H
#define FTPIPE_DIALECT_FTPIPE_STAGEATTRS_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace ftpipe {
namespace stage_attrs {
constexpr llvm::StringLiteral kOwner = "ftpipe.owner";
constexpr llvm::StringLiteral kInput = "ftpipe.input";
constexpr llvm::StringLiteral kFromStage = "ftpipe.from_stage";
constexpr llvm::StringLiteral kActive = "ftpipe.active";
constexpr llvm::StringLiteral kLoss = "ftpipe.loss";
/// An evaluation metric the model returns beside its loss (a string: its
/// name, e.g. "correct_tokens"); integer, never differentiated.
constexpr llvm::StringLiteral kMetric = "ftpipe.metric";
constexpr llvm::StringLiteral kSaved = "ftpipe.saved";
constexpr llvm::StringLiteral kNumSaved = "ftpipe.num_saved";
/// A value the input part of a split backward passes to its weight part.
constexpr llvm::StringLiteral kWeightSaved = "ftpipe.weight_saved";
/// An argument of a split backward's weight part that the caller holds
/// (a received or saved value of the stage): the adjoint's argument number.
constexpr llvm::StringLiteral kAdjointArgument = "ftpipe.adjoint_argument";
constexpr llvm::StringLiteral kRecompute = "ftpipe.recompute";
constexpr llvm::StringLiteral kGradOf = "ftpipe.grad_of";
constexpr llvm::StringLiteral kGrad = "ftpipe.grad";
constexpr llvm::StringLiteral kEntry = "ftpipe.entry";
constexpr llvm::StringLiteral kMicrobatch = "ftpipe.microbatch";
constexpr llvm::StringLiteral kStageOrder = "ftpipe.stage_order";
/// Suffix of the adjoint of a stage (or model) function.
constexpr llvm::StringLiteral kAdjointSuffix = "_adjoint";
/// Suffixes of a split adjoint's input and weight parts.
constexpr llvm::StringLiteral kAdjointInputSuffix = "_adjoint_input";
constexpr llvm::StringLiteral kAdjointWeightSuffix = "_adjoint_weight";
} // namespace stage_attrs
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_DIALECT_FTPIPE_STAGEATTRS_H
