//===- CUDAPipeline.h - Tensor IR to a host object and a fatbin -*- C++ -*-===//
//
// The CUDA lowering of FTPipe: from per-device tensor IR to the LLVM dialect
// for the host with the device code compiled and embedded (`gpu.binary`,
// a fatbin made by the CUDA toolkit's ptxas). The same front as the CPU
// lowering up to buffers, with contractions on cuBLAS
// (`ftpipe_cublas_gemm_T`); the remaining linalg ops become parallel loops,
// GPU kernels (one thread per output element, blocks along the innermost
// dimension) and upstream's NVVM path; every allocation is CUDA managed
// memory (docs/Compile.md, "CUDA"). Registered as `ftpipe-lower-cuda`.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_CUDAPIPELINE_H
#define FTPIPE_CONVERSION_CUDAPIPELINE_H

#include "FTPipe/Conversion/LoweringOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace ftpipe {

struct CUDALoweringOptions : CommonLoweringOptions {
  /// The GPU architecture (nvvm-attach-target's chip): sm_75 to sm_90a with
  /// LLVM 19 and CUDA 13.
  std::string chip = "sm_90";
  /// The CUDA toolkit whose ptxas and fatbinary gpu-module-to-binary runs.
  std::string toolkitPath = "/usr/local/cuda";
  /// Optimisation level of the device code (0-3).
  unsigned optLevel = 3;
  /// Threads per block (ftpipe-map-parallel-loops-to-gpu).
  int64_t blockSize = 256;
};

/// Appends the CUDA lowering to `pm` (nested on builtin.module).
void buildCUDALoweringPipeline(OpPassManager &pm,
                               const CUDALoweringOptions &options);

/// Command-line form (`ftpipe-lower-cuda{chip=sm_80}`).
struct CUDALoweringTextOptions
    : public CommonLoweringTextOptions<CUDALoweringTextOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture (sm_75..sm_90a)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> toolkitPath{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit (ptxas, fatbinary)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<unsigned> optLevel{*this, "O",
                            llvm::cl::desc("Device code optimisation level"),
                            llvm::cl::init(3)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  CUDALoweringOptions toOptions() const;
};

/// Adds what the CUDA lowering needs on top of registerCPULoweringDialects:
/// the GPU and NVVM dialects, the NVVM target (serialisation with ptxas)
/// and the translations of GPU and NVVM ops and of the embedded binary.
void registerCUDALoweringDialects(DialectRegistry &registry);

/// Registers `ftpipe-lower-cuda` with MLIR's global pass registry.
void registerCUDALoweringPipeline();

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_CONVERSION_CUDAPIPELINE_H
