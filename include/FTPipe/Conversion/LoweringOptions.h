//===- LoweringOptions.h - What the CPU and CUDA lowerings share -*- C++
//-*-===//
//
// The options common to `ftpipe-lower-cpu` and `ftpipe-lower-cuda`, as code
// and in their command-line form; CPUPipeline.h and CUDAPipeline.h add their
// own.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_LOWERINGOPTIONS_H
#define FTPIPE_CONVERSION_LOWERINGOPTIONS_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace ftpipe {

struct CommonLoweringOptions {
  /// Contractions call the target's BLAS (off: loops on the CPU, kernels on
  /// CUDA, like the rest).
  bool blas = true;
  /// Element-wise producers are fused into their consumers.
  bool fuse = true;
  /// Every public function gets a `_mlir_ciface_` entry
  /// (llvm.emit_c_interface).
  bool cInterface = true;
  /// Each repeated layer's code is compiled once, in a function of its own
  /// (ftpipe-outline-layers), cut from the placed deallocations so that the
  /// buffers alive at each point stay (docs/Compile.md, "Compile time").
  bool outlineLayers = true;
};

/// The command-line form of CommonLoweringOptions, for a pipeline's options
/// `Derived`.
template <typename Derived>
struct CommonLoweringTextOptions : public PassPipelineOptions<Derived> {
  using BoolOption = ::mlir::detail::PassOptions::Option<bool>;
  BoolOption blas{*this, "blas",
                  llvm::cl::desc("Contractions call the target's BLAS (else "
                                 "loops on the CPU, kernels on CUDA)"),
                  llvm::cl::init(true)};
  BoolOption fuse{*this, "fuse", llvm::cl::desc("Fuse element-wise producers"),
                  llvm::cl::init(true)};
  BoolOption cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every public function a _mlir_ciface_ entry"),
      llvm::cl::init(true)};

  BoolOption outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("Compile each repeated layer once, in a function of "
                     "its own (ftpipe-outline-layers)"),
      llvm::cl::init(true)};

  void copyCommonTo(CommonLoweringOptions &options) const {
    options.outlineLayers = outlineLayers;
    options.blas = blas;
    options.fuse = fuse;
    options.cInterface = cInterface;
  }
};

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_CONVERSION_LOWERINGOPTIONS_H
