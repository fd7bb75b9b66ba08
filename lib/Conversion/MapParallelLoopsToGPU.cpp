//===- MapParallelLoopsToGPU.cpp - scf.parallel to GPU blocks and threads -===//
//
// ftpipe-map-parallel-loops-to-gpu: tiles the innermost dimension of every
// outermost scf.parallel by the block size and writes the mapping attributes
// that upstream's convert-parallel-loops-to-gpu reads: the tile loop on
// threadIdx.x, the tile index on blockIdx.x, outer dimensions on blockIdx.y
// and blockIdx.z, the rest sequential.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_MAPPARALLELLOOPSTOGPUPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct MapParallelLoopsToGPUPass
    : ftpipe::impl::MapParallelLoopsToGPUPassBase<MapParallelLoopsToGPUPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Maps the dimensions of `loop` to `processors`, in order.
static LogicalResult mapLoop(scf::ParallelOp loop,
                             ArrayRef<gpu::Processor> processors) {
  MLIRContext *context = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (gpu::Processor processor : processors)
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(context, processor,
                                                           identity, identity));
  return gpu::setMappingAttr(loop, mapping);
}

/// Tiles `loop` (outermost) and maps it and its tile loop.
static LogicalResult tileAndMap(scf::ParallelOp loop, int64_t blockSize) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> tileSizes(rank, 1);
  tileSizes.back() = blockSize;
  auto [outer, inner] =
      scf::tileParallelLoop(loop, tileSizes, /*noMinMaxBounds=*/true);
  // Innermost dimension first: x, then y, then z, then sequential.
  SmallVector<gpu::Processor> blocks(rank, gpu::Processor::Sequential);
  const gpu::Processor order[] = {
      gpu::Processor::BlockX, gpu::Processor::BlockY, gpu::Processor::BlockZ};
  for (unsigned i = 0; i < rank && i < 3; ++i)
    blocks[rank - 1 - i] = order[i];
  SmallVector<gpu::Processor> threads(rank, gpu::Processor::Sequential);
  threads.back() = gpu::Processor::ThreadX;
  if (failed(mapLoop(outer, blocks)) || failed(mapLoop(inner, threads)))
    return failure();
  // Parallel loops nested deeper (inside a reduction loop) run sequentially.
  LogicalResult result = success();
  inner.getBody()->walk([&](scf::ParallelOp nested) {
    SmallVector<gpu::Processor> sequential(nested.getNumLoops(),
                                           gpu::Processor::Sequential);
    if (failed(mapLoop(nested, sequential)))
      result = failure();
  });
  return result;
}

void MapParallelLoopsToGPUPass::runOnOperation() {
  int64_t size = blockSize;
  if (size < 1 || size > 1024) {
    getOperation().emitError("block-size must be in [1, 1024], not ") << size;
    return signalPassFailure();
  }
  SmallVector<scf::ParallelOp> outermost;
  getOperation().walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      outermost.push_back(loop);
  });
  for (scf::ParallelOp loop : outermost)
    if (failed(tileAndMap(loop, size))) {
      loop.emitError("cannot map this loop to GPU blocks and threads");
      return signalPassFailure();
    }
}
