//===- CompiledModel.h - ftpipe-compile's artifacts as a model --*- C++ -*-===//
//
// Loads a directory written by `ftpipe-compile --target=cpu`: the manifest
// gives the stage graph, the parameters and the data inputs; a device's
// artifact is opened (dlopen) only by the process that runs the device, and
// each of its stages becomes a StageProgram that calls the `_mlir_ciface_`
// entry points through libffi (their arity is the manifest's, known only at
// run time). Arguments are passed as memref descriptors over the runtime's
// tensors, without copies; results come back in buffers that the generated
// code allocated: saved values (and losses, metrics, W buffers) stay in
// them, adopted by the runtime's tensors (ftpipe_host_adopt,
// HostAllocator.h), gradients are added from them, and the rest is freed.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_COMPILEDMODEL_H
#define FTPIPE_RUNTIME_COMPILEDMODEL_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/PipelineModel.h"

namespace ftpipe {
namespace runtime {

class CompiledModel : public PipelineModel {
public:
  /// Reads `directory`/manifest.json and checks that every artifact exists
  /// and that it is a model for training (forward and backward entry
  /// points, one loss). Any target's: opening loads no device code.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  open(llvm::StringRef directory);
  ~CompiledModel() override;

  const ArtifactManifest &manifest() const { return info; }
  const schedule::StageGraph &stageGraph() const override { return graph; }
  const ParameterPlacement &placement() const override { return holders; }
  const std::vector<ParameterInfo> &parameters() const override {
    return params;
  }
  const std::vector<DataInputInfo> &dataInputs() const override {
    return inputs;
  }
  int64_t microBatchSize() const override { return batch; }
  /// Hugging Face's initialisation by name: biases 0, norm weights 1, every
  /// other tensor N(0, 0.02) (initializer_range of BERT, GPT-2 and T5).
  TensorMap randomWeights(uint64_t seed) const override;
  /// Fails unless the artifacts are the cpu target's.
  llvm::Error checkRunnable() const override;
  /// Opens the device's artifact (the first call for a device; refused
  /// unless checkRunnable).
  llvm::Expected<std::vector<std::unique_ptr<StageProgram>>>
  loadStages(int64_t device) override;

private:
  explicit CompiledModel(ArtifactManifest manifest);
  ArtifactManifest info;
  schedule::StageGraph graph;
  ParameterPlacement holders;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;
  int64_t batch = 1;
  /// dlopen handles, closed with the model.
  std::vector<void *> libraries;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_COMPILEDMODEL_H
