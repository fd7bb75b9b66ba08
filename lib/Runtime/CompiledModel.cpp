//===- CompiledModel.cpp - Calling generated entry points -----------------===//
//
// The C interface of an entry point (docs/Compile.md): `void
// _mlir_ciface_NAME(Results *out, args...)`, where every tensor argument is a
// pointer to a memref descriptor {allocated, aligned, offset, sizes[r],
// strides[r]}, the micro-batch an int64 by value, and `out` a struct of the
// results' descriptors (all fields 8-byte words, so the struct is their
// concatenation; a single result is passed the same way). libffi makes the
// call, since the arity is known only from the manifest.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/ABICheck.h"
#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/MemoryNeeds.h"
#include "FTPipe/Runtime/PlacementCheck.h"
#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>
#include <ffi.h>

#include <cstring>
#include <map>
#include <random>
#include <set>

using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {

/// The words of one memref descriptor.
std::vector<int64_t> descriptorOf(const void *data,
                                  llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> words(3 + 2 * shape.size());
  auto address = reinterpret_cast<int64_t>(data);
  words[0] = words[1] = address;
  words[2] = 0;
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    words[3 + d] = shape[d];
    words[3 + shape.size() + d] = stride;
    stride *= shape[d];
  }
  return words;
}

/// How an artifact frees the buffers its entry points return
/// (`_mlir_memref_to_llvm_free`: HostAllocator.h on the CPU, managed memory
/// on CUDA).
using BufferFree = void (*)(void *);
/// How the runtime takes over such a buffer (`ftpipe_host_adopt`,
/// HostAllocator.h); non-zero when it did.
using BufferAdopt = int (*)(void *);
/// How the runtime bounds the allocator's cache (`ftpipe_host_cache_limit`).
using CacheLimit = void (*)(int64_t);

/// The artifact's functions for the buffers its entry points return.
struct ResultBuffers {
  BufferFree release = nullptr;
  /// Null: every kept result is copied.
  BufferAdopt adopt = nullptr;
  /// Null: the cache follows the allocator's own bound.
  CacheLimit limit = nullptr;
};

/// One entry point, prepared for libffi.
class EntryCall {
public:
  EntryCall(const EntryPoint &entry, void *function, ResultBuffers buffers)
      : entry(entry), function(function), buffers(buffers) {
    bool hasResults = !entry.results.empty();
    if (hasResults)
      types.push_back(&ffi_type_pointer);
    for (const EntryValue &argument : entry.arguments)
      types.push_back(argument.kind == EntryValue::Kind::Microbatch
                          ? &ffi_type_sint64
                          : &ffi_type_pointer);
    for (const EntryValue &result : entry.results)
      resultWords += 3 + 2 * result.tensor.shape.size();
    prepared = ffi_prep_cif(&cif, FFI_DEFAULT_ABI, types.size(), &ffi_type_void,
                            types.data()) == FFI_OK;
  }

  llvm::Error ready() const {
    if (!prepared)
      return fail("libffi cannot call '" + entry.symbol + "'");
    return llvm::Error::success();
  }

  /// Receives result i's bytes (contiguous, shaped as the manifest says)
  /// while the buffer the generated code allocated is still alive.
  using ResultSink = llvm::function_ref<void(size_t, const char *)>;
  /// Which results to keep, and where result i goes as a tensor.
  using KeepFilter = llvm::function_ref<bool(const EntryValue &)>;
  using KeptSink = llvm::function_ref<void(size_t, Tensor)>;

  /// Calls the entry point: `tensors[i]` is argument i's data (null for
  /// the micro-batch). Hands each result that `keep` selects to `kept` as a
  /// tensor (over the generated code's buffer itself where the buffer
  /// holds that result alone and the artifact lets the runtime adopt it,
  /// else a copy: an error for a saved value or W buffer of such an
  /// artifact) and every other one to `sink`, then frees the buffers the
  /// generated code allocated with the artifact's own function.
  llvm::Error call(int64_t mb, llvm::ArrayRef<const Tensor *> tensors,
                   ResultSink sink, KeepFilter keep = {},
                   KeptSink kept = {}) const {
    std::vector<std::vector<int64_t>> descriptors;
    std::vector<void *> pointers;
    descriptors.reserve(tensors.size());
    pointers.reserve(tensors.size() + 1);
    std::vector<int64_t> results(resultWords, 0);
    if (!entry.results.empty())
      pointers.push_back(results.data());
    // Argument byte ranges: a result that aliases one is not freed.
    std::vector<std::pair<const char *, const char *>> ranges;
    for (size_t i = 0; i < entry.arguments.size(); ++i) {
      const EntryValue &argument = entry.arguments[i];
      if (argument.kind == EntryValue::Kind::Microbatch) {
        pointers.push_back(nullptr);
        continue;
      }
      if (!tensors[i])
        return fail(entry.name + ": argument " + llvm::Twine(i) +
                    " (a saved value) was not returned by the forward");
      const Tensor &tensor = *tensors[i];
      if (tensor.type != argument.tensor.type ||
          tensor.shape != argument.tensor.shape)
        return fail(entry.name + ": argument " + llvm::Twine(i) + " ('" +
                    argument.name + "') is " + dtypeName(tensor.type) + " " +
                    shapeString(tensor.shape) + ", the artifact takes " +
                    dtypeName(argument.tensor.type) + " " +
                    shapeString(argument.tensor.shape));
      descriptors.push_back(descriptorOf(tensor.bytes.data(), tensor.shape));
      pointers.push_back(descriptors.back().data());
      ranges.push_back(
          {tensor.bytes.data(), tensor.bytes.data() + tensor.bytes.size()});
    }
    std::vector<void *> values;
    values.reserve(pointers.size());
    size_t p = 0;
    if (!entry.results.empty())
      values.push_back(&pointers[p++]);
    for (const EntryValue &argument : entry.arguments) {
      values.push_back(argument.kind == EntryValue::Kind::Microbatch
                           ? const_cast<int64_t *>(&mb)
                           : static_cast<void *>(&pointers[p]));
      ++p;
    }
    ffi_call(const_cast<ffi_cif *>(&cif), FFI_FN(function), nullptr,
             values.data());

    // The buffers the generated code allocated for the results, each freed
    // right after the last result that reads it was handed on (two results
    // may share a buffer), and on every exit, a refused result included.
    // Constants (memref.global) carry a marker instead of a heap pointer;
    // arguments returned as they are stay the caller's.
    std::map<void *, size_t> lastUse, uses;
    const int64_t *words = results.data();
    for (auto [index, result] : llvm::enumerate(entry.results)) {
      auto *allocated = reinterpret_cast<void *>(words[0]);
      bool global = allocated == reinterpret_cast<void *>(0xdeadbeef);
      bool argument = llvm::any_of(ranges, [&](auto range) {
        auto *at = static_cast<const char *>(allocated);
        return at >= range.first && at < range.second;
      });
      if (allocated && !global && !argument) {
        lastUse[allocated] = index;
        ++uses[allocated];
      }
      words += 3 + 2 * result.tensor.shape.size();
    }
    auto freeRest = llvm::make_scope_exit([&] {
      for (auto [allocated, index] : lastUse)
        buffers.release(allocated);
    });
    words = results.data();
    for (auto [index, result] : llvm::enumerate(entry.results)) {
      size_t rank = result.tensor.shape.size();
      auto *allocated = reinterpret_cast<void *>(words[0]);
      auto *aligned = reinterpret_cast<char *>(words[1]);
      int64_t offset = words[2];
      int64_t expected = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (words[3 + d] != result.tensor.shape[d])
          return fail(entry.name + ": a result is shaped differently from "
                                   "the manifest");
        if (result.tensor.shape[d] != 1 && words[3 + rank + d] != expected)
          return fail(entry.name + ": a result is not contiguous");
        expected *= result.tensor.shape[d];
      }
      char *data = aligned + offset * dtypeBytes(result.tensor.type);
      words += 3 + 2 * rank;
      auto last = lastUse.find(allocated);
      if (keep && keep(result)) {
        // The buffer itself, where nothing else reads it and the data is
        // aligned as the runtime's own tensors are (64 bytes).
        const char *refused =
            last == lastUse.end()  ? "is a constant or an argument"
            : uses[allocated] != 1 ? "shares its buffer with another result"
            : reinterpret_cast<uintptr_t>(data) % 64 != 0
                ? "is not 64-byte aligned"
                : nullptr;
        if (buffers.adopt && !refused) {
          if (buffers.adopt(allocated)) {
            lastUse.erase(last);
            Tensor value(result.tensor.type, result.tensor.shape, {});
            value.bytes = TensorBytes::adopt(
                data, value.elements() * dtypeBytes(value.type),
                buffers.release, allocated);
            kept(index, std::move(value));
            continue;
          }
          refused = "is not a buffer of the host allocator";
        }
        // Where the artifact lets the runtime adopt buffers, the memory
        // prediction counts saved values and W buffers in theirs
        // (StageMemory::adopted): a copy beside them would be memory it does
        // not count. Compiled code keeps none (SplitBackward.*; until
        // 2026-11-28 the runtime copied such results). A loss or metric is
        // read and dropped.
        if (buffers.adopt && (result.kind == EntryValue::Kind::Saved ||
                              result.kind == EntryValue::Kind::WeightSaved))
          return fail(entry.name + ": result " + llvm::Twine(index) +
                      " (a value kept for a later entry point) " + refused +
                      "; keeping a copy of it would exceed the memory "
                      "prediction");
        Tensor value(result.tensor.type, result.tensor.shape);
        std::memcpy(value.bytes.data(), data, value.bytes.size());
        kept(index, std::move(value));
      } else if (sink) {
        sink(index, data);
      }
      if (last != lastUse.end() && last->second == index) {
        buffers.release(allocated);
        lastUse.erase(last);
      }
    }
    return llvm::Error::success();
  }

  const EntryPoint &entry;

private:
  void *function;
  ResultBuffers buffers;
  std::vector<ffi_type *> types;
  size_t resultWords = 0;
  ffi_cif cif;
  bool prepared = false;
};

/// One stage of a compiled device.
class CompiledStage : public StageProgram {
public:
  CompiledStage(int64_t id, const EntryPoint &forward,
                const EntryPoint *backward, void *forwardFunction,
                void *backwardFunction, ResultBuffers buffers,
                std::optional<StageMemory> needs)
      : id(id), forwardCall(forward, forwardFunction, buffers),
        cacheLimit(buffers.limit), needs(needs) {
    if (backward)
      backwardCall.emplace(*backward, backwardFunction, buffers);
    for (const EntryPoint *entry : {&forward, backward}) {
      if (!entry)
        continue;
      for (const EntryValue &argument : entry->arguments) {
        if (argument.kind == EntryValue::Kind::Param &&
            llvm::none_of(params, [&](const ParameterInfo &p) {
              return p.name == argument.name;
            }))
          params.push_back(
              {argument.name, argument.tensor.shape, argument.tensor.type});
        if (argument.kind == EntryValue::Kind::Input &&
            llvm::none_of(inputs, [&](const DataInputInfo &i) {
              return i.name == argument.name;
            }))
          inputs.push_back(
              {argument.name, argument.tensor.shape, argument.tensor.type});
      }
    }
    loss = llvm::any_of(forward.results, [](const EntryValue &result) {
      return result.kind == EntryValue::Kind::Loss;
    });
  }

  llvm::Error ready() const {
    if (llvm::Error error = forwardCall.ready())
      return error;
    for (const std::optional<EntryCall> *call :
         {&backwardCall, &inputCall, &weightCall})
      if (*call)
        if (llvm::Error error = (*call)->ready())
          return error;
    return llvm::Error::success();
  }

  int64_t stage() const override { return id; }
  const std::vector<ParameterInfo> &parameters() const override {
    return params;
  }
  const std::vector<DataInputInfo> &dataInputs() const override {
    return inputs;
  }
  bool computesLoss() const override { return loss; }
  std::optional<StageMemory> memory() const override { return needs; }
  void limitCache(int64_t bytes) override {
    if (cacheLimit && needs)
      cacheLimit(bytes);
  }

  ForwardResult forward(int64_t mb, const std::vector<const Tensor *> &params,
                        const std::vector<const Tensor *> &data) override {
    ForwardResult out;
    const std::vector<EntryValue> &results = forwardCall.entry.results;
    check(forwardCall.call(
        mb, arguments(forwardCall.entry, params, data, {}), /*sink=*/{},
        [](const EntryValue &result) {
          return result.kind == EntryValue::Kind::Loss ||
                 result.kind == EntryValue::Kind::Metric ||
                 result.kind == EntryValue::Kind::Saved;
        },
        [&](size_t i, Tensor value) {
          const EntryValue &result = results[i];
          if (result.kind == EntryValue::Kind::Loss) {
            out.loss = readScalar(value);
            return;
          }
          if (result.kind == EntryValue::Kind::Metric) {
            out.metrics[result.name] = std::move(value);
            return;
          }
          if (out.saved.size() <= size_t(result.saved))
            out.saved.resize(result.saved + 1);
          out.saved[result.saved] = std::move(value);
        }));
    return out;
  }

  void backward(int64_t mb, const std::vector<const Tensor *> &params,
                const std::vector<const Tensor *> &data,
                std::vector<Tensor> saved,
                const std::vector<Tensor *> &gradSums) override {
    if (backwardCall)
      addGradients(*backwardCall, mb, params, data, saved, gradSums);
  }

  /// Adds the input and weight parts of a split backward (contract
  /// version 2).
  void setSplit(const EntryPoint &input, void *inputFunction,
                const EntryPoint &weight, void *weightFunction,
                ResultBuffers buffers) {
    inputCall.emplace(input, inputFunction, buffers);
    weightCall.emplace(weight, weightFunction, buffers);
    carried = llvm::count_if(input.results, [](const EntryValue &result) {
      return result.kind == EntryValue::Kind::WeightSaved;
    });
    for (const EntryValue &argument : weight.arguments)
      if (argument.kind == EntryValue::Kind::Saved)
        held.push_back(argument.saved);
  }
  bool splitsBackward() const override { return inputCall.has_value(); }

  std::vector<Tensor> backwardInput(int64_t mb,
                                    const std::vector<const Tensor *> &params,
                                    const std::vector<const Tensor *> &data,
                                    std::vector<Tensor> saved) override {
    std::vector<Tensor> weightSaved;
    const std::vector<EntryValue> &results = inputCall->entry.results;
    check(inputCall->call(
        mb, arguments(inputCall->entry, params, data, saved), /*sink=*/{},
        [](const EntryValue &result) {
          return result.kind == EntryValue::Kind::WeightSaved;
        },
        [&](size_t i, Tensor value) {
          const EntryValue &result = results[i];
          if (weightSaved.size() <= size_t(result.saved))
            weightSaved.resize(result.saved + 1);
          weightSaved[result.saved] = std::move(value);
        }));
    // After the input part's results, the saved values the weight part
    // reads: the same buffers, not copies.
    weightSaved.resize(carried);
    for (int64_t k : held)
      weightSaved.push_back(size_t(k) < saved.size() ? std::move(saved[k])
                                                     : Tensor());
    return weightSaved;
  }

  void backwardWeight(int64_t mb, const std::vector<const Tensor *> &params,
                      const std::vector<const Tensor *> &data,
                      std::vector<Tensor> weightSaved,
                      const std::vector<Tensor *> &gradSums) override {
    // backwardInput's values: the input part's results, then the saved
    // values `held` names.
    std::vector<Tensor> saved;
    for (auto [j, k] : llvm::enumerate(held)) {
      if (saved.size() <= size_t(k))
        saved.resize(k + 1);
      if (carried + j < weightSaved.size())
        saved[k] = std::move(weightSaved[carried + j]);
    }
    weightSaved.resize(std::min(weightSaved.size(), carried));
    addGradients(*weightCall, mb, params, data, saved, gradSums, weightSaved);
  }

private:
  /// Calls a backward or a weight part and adds its gradients into
  /// `gradSums`, straight from the generated code's buffers (no copy of them
  /// is made).
  void addGradients(const EntryCall &call, int64_t mb,
                    const std::vector<const Tensor *> &params,
                    const std::vector<const Tensor *> &data,
                    const std::vector<Tensor> &saved,
                    const std::vector<Tensor *> &gradSums,
                    const std::vector<Tensor> &weightSaved = {}) {
    const std::vector<EntryValue> &results = call.entry.results;
    std::vector<const Tensor *> args =
        arguments(call.entry, params, data, saved, weightSaved);
    check(call.call(mb, args, [&](size_t i, const char *bytes) {
      const EntryValue &result = results[i];
      if (result.kind != EntryValue::Kind::Grad)
        return;
      // Frozen during the run, compiled before: computed, not kept.
      if (!gradSums[indexOf(result.name)])
        return;
      Tensor &sum = *gradSums[indexOf(result.name)];
      if (sum.type != DType::F32)
        reportFailure(call.entry.name + ": the gradient of '" + result.name +
                      "' is not f32");
      auto *add = reinterpret_cast<const float *>(bytes);
      for (float &value : sum.f32Values())
        value += *add++;
    }));
  }

  size_t indexOf(llvm::StringRef name) const {
    return llvm::find_if(
               params, [&](const ParameterInfo &p) { return p.name == name; }) -
           params.begin();
  }

  /// An entry point's arguments: the forward's saved values from `saved`,
  /// the input part's results for the weight part from `weightSaved`.
  std::vector<const Tensor *>
  arguments(const EntryPoint &entry, const std::vector<const Tensor *> &params,
            const std::vector<const Tensor *> &data,
            const std::vector<Tensor> &saved,
            const std::vector<Tensor> &weightSaved = {}) const {
    std::vector<const Tensor *> tensors;
    for (const EntryValue &argument : entry.arguments) {
      switch (argument.kind) {
      case EntryValue::Kind::Param:
        tensors.push_back(params[indexOf(argument.name)]);
        break;
      case EntryValue::Kind::Input:
        tensors.push_back(data[llvm::find_if(inputs,
                                             [&](const DataInputInfo &i) {
                                               return i.name == argument.name;
                                             }) -
                               inputs.begin()]);
        break;
      case EntryValue::Kind::Saved:
        tensors.push_back(size_t(argument.saved) < saved.size()
                              ? &saved[argument.saved]
                              : nullptr);
        break;
      case EntryValue::Kind::WeightSaved:
        tensors.push_back(size_t(argument.saved) < weightSaved.size()
                              ? &weightSaved[argument.saved]
                              : nullptr);
        break;
      default:
        tensors.push_back(nullptr);
      }
    }
    return tensors;
  }

  static double readScalar(const Tensor &tensor) {
    if (tensor.type == DType::F64) {
      double value;
      std::memcpy(&value, tensor.bytes.data(), sizeof(value));
      return value;
    }
    return tensor.f32Values().front();
  }

  /// A call that fails here is a broken artifact or runtime: the executor's
  /// interface has no error path, so end the run with the message.
  static void check(llvm::Error error) {
    if (error)
      reportFailure(llvm::toString(std::move(error)));
  }

  int64_t id;
  EntryCall forwardCall;
  std::optional<EntryCall> backwardCall, inputCall, weightCall;
  /// A split backward: how many values the input part returns for the
  /// weight part, and the forward's saved values (by index) that the weight
  /// part reads itself, which backwardInput passes on after them.
  size_t carried = 0;
  std::vector<int64_t> held;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;
  bool loss = false;
  CacheLimit cacheLimit;
  std::optional<StageMemory> needs;
};

/// Hugging Face's initial values by parameter name.
bool isBias(llvm::StringRef name) { return name.ends_with("bias"); }
bool isNormWeight(llvm::StringRef name) {
  std::string lower = name.lower();
  return llvm::StringRef(lower).ends_with("weight") &&
         (llvm::StringRef(lower).contains("norm") ||
          llvm::StringRef(lower).contains(".ln_"));
}

} // namespace

CompiledModel::CompiledModel(ArtifactManifest manifest)
    : info(std::move(manifest)), graph(info.stageGraph()),
      libraries(info.devices(), nullptr) {
  for (const auto &[name, param] : info.parameters) {
    holders[name] = param.devices;
    params.push_back({name, param.tensor.shape, param.tensor.type});
  }
  for (const auto &[name, input] : info.inputs) {
    inputs.push_back(
        {name, input.shape, input.type, input.indexBound, input.indexIgnored});
    if (!input.shape.empty())
      batch = input.shape.front();
  }
}

CompiledModel::~CompiledModel() = default;

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::open(llvm::StringRef directory) {
  llvm::Expected<ArtifactManifest> manifest = readManifest(directory);
  if (!manifest)
    return manifest.takeError();
  for (auto check : {checkEntryValues, checkPlacement})
    if (llvm::Error error = check(*manifest))
      return fail(directory +
                  "/manifest.json: " + llvm::toString(std::move(error)));
  for (int64_t d = 0; d < manifest->devices(); ++d) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, manifest->artifacts[d]);
    if (!llvm::sys::fs::exists(path))
      return fail(path + ": the manifest lists it for device " +
                  llvm::Twine(d) + ", but it does not exist");
  }
  for (size_t s = 0; s < manifest->stages.size(); ++s)
    if (manifest->stages[s].backward.empty())
      return fail(directory + ": stage " + llvm::Twine(s) +
                  " has no backward: compiled with --forward-only, not for "
                  "training");
  if (manifest->lossStage < 0)
    return fail(directory + ": no entry point returns a loss (compile the "
                            "model with its loss: ftpipe-model-gen --loss)");
  auto model =
      std::unique_ptr<CompiledModel>(new CompiledModel(std::move(*manifest)));
  std::set<int64_t> batches;
  for (const DataInputInfo &input : model->inputs)
    batches.insert(input.shape.empty() ? -1 : input.shape.front());
  if (batches.size() > 1)
    return fail(directory + ": the data inputs disagree on the micro-batch "
                            "size (their first dimensions)");
  if (llvm::Error error = model->graph.validate())
    return fail(directory + ": " + llvm::toString(std::move(error)));
  return model;
}

TensorMap CompiledModel::randomWeights(uint64_t seed) const {
  TensorMap weights;
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (const ParameterInfo &param : params) {
    Tensor tensor(param.type, param.shape);
    if (param.type == DType::F32)
      for (float &value : tensor.f32Values())
        value = isBias(param.name)         ? 0.0f
                : isNormWeight(param.name) ? 1.0f
                                           : normal(random);
    weights[param.name] = std::move(tensor);
  }
  return weights;
}

llvm::Error CompiledModel::checkRunnable() const {
  if (info.target != "cpu")
    return fail(info.directory + ": artifacts for target '" + info.target +
                "'; this runtime runs the cpu target");
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::unique_ptr<StageProgram>>>
CompiledModel::loadStages(int64_t device) {
  if (llvm::Error error = checkRunnable())
    return std::move(error);
  if (device < 0 || device >= info.devices())
    return fail("device " + llvm::Twine(device) + " is not in the manifest");
  llvm::SmallString<256> path(info.directory);
  llvm::sys::path::append(path, info.artifacts[device]);
  if (!libraries[device]) {
    // dlopen would block on a FIFO and read a device without end.
    if (llvm::Error error = ftpipe::support::checkRegularFile(path, "artifact"))
      return std::move(error);
    libraries[device] = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!libraries[device])
      return fail("cannot load " + path + ": " + dlerror());
  }
  auto symbol = [&](const std::string &entryName) -> llvm::Expected<void *> {
    const EntryPoint &entry = info.entryPoints.at(entryName);
    // dlsym also searches the artifact's dependencies: a manifest naming
    // "exit" would call libc. Entry points are the artifact's own
    // _mlir_ciface_ functions.
    if (!llvm::StringRef(entry.symbol).starts_with("_mlir_ciface_"))
      return fail(path + ": entry point '" + entry.symbol +
                  "' is not an _mlir_ciface_ function: the manifest does not "
                  "match the artifacts");
    std::optional<ArtifactSymbol> function =
        findArtifactSymbol(libraries[device], entry.symbol.c_str());
    if (!function)
      return fail(path + " has no entry point '" + entry.symbol +
                  "', which the manifest lists: the manifest does not match "
                  "the artifacts");
    if (!function->own)
      return fail(path + ": entry point '" + entry.symbol +
                  "' is defined outside the artifact: the manifest does not "
                  "match the artifacts");
    // What the code takes and returns, against what the call will pass.
    if (llvm::Error error = checkArtifactABI(libraries[device], path, entry))
      return std::move(error);
    return function->address;
  };
  ResultBuffers buffers;
  buffers.release = reinterpret_cast<BufferFree>(
      dlsym(libraries[device], "_mlir_memref_to_llvm_free"));
  buffers.adopt = reinterpret_cast<BufferAdopt>(
      dlsym(libraries[device], "ftpipe_host_adopt"));
  buffers.limit = reinterpret_cast<CacheLimit>(
      dlsym(libraries[device], "ftpipe_host_cache_limit"));
  if (!buffers.release)
    return fail(path + " does not export _mlir_memref_to_llvm_free: it was "
                       "not made by this version of ftpipe-compile");
  if (llvm::Error error = checkAllocatorBinding(libraries[device], path))
    return error;
  std::vector<std::unique_ptr<StageProgram>> stages;
  for (size_t s = 0; s < info.stages.size(); ++s) {
    const ManifestStage &stage = info.stages[s];
    if (stage.device != device)
      continue;
    llvm::Expected<void *> forward = symbol(stage.forward);
    if (!forward)
      return forward.takeError();
    llvm::Expected<void *> backward = symbol(stage.backward);
    if (!backward)
      return backward.takeError();
    const EntryPoint &forwardEntry = info.entryPoints.at(stage.forward);
    const EntryPoint &backwardEntry = info.entryPoints.at(stage.backward);
    // `ftpipe_peak_bytes_<entry>`, ftpipe-record-peak-memory.
    auto peakOf = [&](const std::string &entry) -> std::optional<int64_t> {
      auto *value = static_cast<const int64_t *>(
          dlsym(libraries[device], ("ftpipe_peak_bytes_" + entry).c_str()));
      if (!value)
        return std::nullopt;
      return *value;
    };
    std::optional<StageMemory> needs =
        stageMemory(forwardEntry, backwardEntry, peakOf);
    if (needs && stage.splits())
      needs = splitMemory(*needs, info.entryPoints.at(stage.backwardInput),
                          info.entryPoints.at(stage.backwardWeight), peakOf);
    if (needs)
      needs->adopted = buffers.adopt != nullptr;
    auto program = std::make_unique<CompiledStage>(
        s, forwardEntry, &backwardEntry, *forward, *backward, buffers, needs);
    if (stage.splits()) {
      llvm::Expected<void *> input = symbol(stage.backwardInput);
      if (!input)
        return input.takeError();
      llvm::Expected<void *> weight = symbol(stage.backwardWeight);
      if (!weight)
        return weight.takeError();
      program->setSplit(info.entryPoints.at(stage.backwardInput), *input,
                        info.entryPoints.at(stage.backwardWeight), *weight,
                        buffers);
    }
    if (llvm::Error error = program->ready())
      return std::move(error);
    stages.push_back(std::move(program));
  }
  return stages;
}
