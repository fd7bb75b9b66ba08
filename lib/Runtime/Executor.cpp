//===- Executor.cpp - One device's actions, updates and weight versions ---===//

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/ReplicaReductions.h"
#include "FTPipe/Support/ThreadCpuTime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

using namespace ftpipe::runtime;
using ftpipe::schedule::Action;
using ftpipe::schedule::ActionKind;
using ftpipe::support::threadCpuSeconds;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The first few problems, and how many more (a file of another kind would
/// otherwise list every tensor).
static std::string listProblems(llvm::ArrayRef<std::string> problems) {
  constexpr size_t shown = 4;
  if (problems.size() <= shown)
    return llvm::join(problems, "; ");
  return llvm::join(problems.take_front(shown), "; ") + "; and " +
         std::to_string(problems.size() - shown) + " more";
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

llvm::Error
ftpipe::runtime::validateDataset(const std::vector<DataInputInfo> &inputs,
                                 const TensorMap &dataset, bool allowExtra) {
  std::vector<std::string> problems;
  int64_t samples = -1;
  for (const DataInputInfo &input : inputs) {
    auto it = dataset.find(input.name);
    if (it == dataset.end()) {
      problems.push_back("'" + input.name + "' is missing");
      continue;
    }
    const Tensor &tensor = it->second;
    std::vector<int64_t> expected(input.shape.begin(), input.shape.end());
    if (!expected.empty())
      expected.erase(expected.begin());
    std::string wanted = dtypeName(input.type).str() + " [N" +
                         (expected.empty() ? "" : ", ") +
                         shapeString(expected).substr(1);
    bool sameShape =
        tensor.shape.size() == expected.size() + 1 &&
        std::equal(expected.begin(), expected.end(), tensor.shape.begin() + 1);
    if (tensor.type != input.type || !sameShape || tensor.shape[0] < 1)
      problems.push_back(
          "'" + input.name + "' is " + dtypeName(tensor.type).str() + " " +
          shapeString(tensor.shape) + ", the model reads " + wanted);
    else if (std::optional<std::string> bad = checkIndexValues(input, tensor))
      problems.push_back(*bad);
    else if (samples >= 0 && tensor.shape[0] != samples)
      problems.push_back("'" + input.name + "' has " +
                         std::to_string(tensor.shape[0]) + " samples, '" +
                         inputs.front().name + "' " + std::to_string(samples));
    else
      samples = tensor.shape[0];
  }
  for (const auto &[name, tensor] : dataset)
    if (!allowExtra && llvm::none_of(inputs, [&](const DataInputInfo &input) {
          return input.name == name;
        }))
      problems.push_back("'" + name + "' is not an input of the model");
  if (problems.empty())
    return llvm::Error::success();
  return fail("the data set does not match the model: " +
              listProblems(problems));
}

llvm::Error
ftpipe::runtime::validateWeights(const std::vector<ParameterInfo> &params,
                                 const TensorMap &weights) {
  std::vector<std::string> problems;
  for (const ParameterInfo &param : params) {
    auto it = weights.find(param.name);
    if (it == weights.end())
      problems.push_back("'" + param.name + "' is missing");
    else if (it->second.type != param.type || it->second.shape != param.shape)
      problems.push_back(
          "'" + param.name + "' is " + dtypeName(it->second.type).str() + " " +
          shapeString(it->second.shape) + ", the model has " +
          dtypeName(param.type).str() + " " + shapeString(param.shape));
  }
  for (const auto &[name, tensor] : weights)
    if (llvm::none_of(params, [&](const ParameterInfo &param) {
          return param.name == name;
        }))
      problems.push_back("'" + name + "' is not a parameter of the model");
  if (problems.empty())
    return llvm::Error::success();
  return fail("the weights do not match the model: " + listProblems(problems));
}

/// The transport stage code sees while the executor runs: the
/// communicator, with the time receives spend waiting added up.
class DeviceExecutor::WaitTimer : public Transport {
public:
  explicit WaitTimer(Communicator &inner) : inner(inner) {}
  int64_t device() const override { return inner.device(); }
  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    inner.send(peer, tag, microbatch, data, bytes);
  }
  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    double start = now();
    inner.recv(peer, tag, microbatch, data, bytes);
    waited += now() - start;
  }
  /// Seconds waited since the last call.
  double take() {
    double result = waited;
    waited = 0;
    return result;
  }

private:
  Communicator &inner;
  double waited = 0;
};

DeviceExecutor::~DeviceExecutor() = default;

DeviceExecutor::DeviceExecutor(Communicator &communicator,
                               std::vector<StageProgram *> stages,
                               ParameterPlacement placement,
                               ExecutorConfig config)
    : communicator(communicator), stages(std::move(stages)),
      placement(std::move(placement)), config(config),
      optimizer(config.optimizer),
      waitTimer(std::make_unique<WaitTimer>(communicator)) {
  std::set<std::string> seenParams, seenInputs;
  for (StageProgram *stage : this->stages) {
    for (const ParameterInfo &param : stage->parameters())
      if (seenParams.insert(param.name).second)
        params.push_back(param);
    for (const DataInputInfo &input : stage->dataInputs())
      if (seenInputs.insert(input.name).second)
        inputs.push_back(input);
  }
}

llvm::Error DeviceExecutor::setWeights(TensorMap weights) {
  if (llvm::Error error = validateWeights(params, weights))
    return error;
  live = std::move(weights);
  for (auto &entry : live)
    if (!entry.second.bytes.adopted())
      ledgerRecharge(entry.second.bytes.data(),
                     static_cast<int32_t>(communicator.device()));
  return llvm::Error::success();
}

static int64_t bytesOf(const TensorMap &tensors) {
  int64_t bytes = 0;
  for (const auto &entry : tensors)
    bytes += entry.second.bytes.size();
  return bytes;
}

HeldBytes DeviceExecutor::held() const {
  HeldBytes held;
  held.weights = bytesOf(live);
  for (const auto &entry : gradients)
    held.gradients += bytesOf(entry.second);
  held.optimizer = optimizer.stateBytes();
  for (const auto &entry : stashed)
    held.stash += bytesOf(entry.second);
  for (const auto &entry : inFlight)
    for (const Tensor &tensor : entry.second.saved)
      held.saved += tensor.bytes.size();
  held.savedMicroBatches = inFlight.size();
  for (const auto &entry : waitingWeight)
    for (const Tensor &tensor : entry.second.saved)
      held.weightSaved += tensor.bytes.size();
  held.weightSavedMicroBatches = waitingWeight.size();
  return held;
}

DeviceMemory DeviceExecutor::memory() const {
  DeviceMemory memory;
  ftpipe_mem_read(static_cast<int32_t>(communicator.device()), &memory.ledger);
  memory.peakAction = peakAction;
  memory.heldAtPeak = heldAtPeak;
  return memory;
}

bool DeviceExecutor::owns(llvm::StringRef name) const {
  auto holders = placement.find(name.str());
  return holders == placement.end() ||
         holders->second.front() == communicator.device();
}

TensorMap DeviceExecutor::optimizerState() const {
  TensorMap state;
  for (const ParameterInfo &param : params)
    if (owns(param.name) && !isFrozen(param.name))
      optimizer.saveState(param.name, param.shape, state);
  return state;
}

llvm::Error DeviceExecutor::resume(int64_t updates,
                                   const TensorMap &optimizerState) {
  std::set<std::string> used;
  for (const ParameterInfo &param : params) {
    if (!owns(param.name) || isFrozen(param.name))
      continue;
    if (llvm::Error error =
            optimizer.loadState(param.name, param.shape, optimizerState))
      return error;
    TensorMap mine;
    optimizer.saveState(param.name, param.shape, mine);
    for (const auto &entry : mine)
      used.insert(entry.first);
  }
  for (const auto &entry : optimizerState)
    if (!used.count(entry.first))
      return fail("optimizer state '" + entry.first +
                  "' is not of a parameter device " +
                  llvm::Twine(communicator.device()) + " owns");
  optimizer.setSteps(updates);
  version = updates;
  return llvm::Error::success();
}

TensorMap DeviceExecutor::zeroGradients() const {
  TensorMap zeros;
  for (const ParameterInfo &param : params)
    if (!isFrozen(param.name))
      zeros[param.name] = Tensor(param.type, param.shape);
  return zeros;
}

Transport *DeviceExecutor::timedTransport() const { return waitTimer.get(); }

llvm::Error DeviceExecutor::setData(const TensorMap &data) {
  if (llvm::Error error = validateDataset(inputs, data, /*allowExtra=*/true))
    return error;
  dataset = &data;
  return llvm::Error::success();
}

StageProgram *DeviceExecutor::program(int64_t stage) const {
  for (StageProgram *program : stages)
    if (program->stage() == stage)
      return program;
  return nullptr;
}

std::vector<const Tensor *>
DeviceExecutor::paramsOf(const StageProgram &stage,
                         const TensorMap &weights) const {
  std::vector<const Tensor *> result;
  for (const ParameterInfo &param : stage.parameters())
    result.push_back(isFrozen(param.name) ? &live.at(param.name)
                                          : &weights.at(param.name));
  return result;
}

std::vector<Tensor *> DeviceExecutor::gradientSumsOf(const StageProgram &stage,
                                                     TensorMap &sums) const {
  std::vector<Tensor *> result;
  for (const ParameterInfo &param : stage.parameters())
    result.push_back(isFrozen(param.name) ? nullptr : &sums.at(param.name));
  return result;
}

TensorMap DeviceExecutor::trainedWeights() const {
  TensorMap trained;
  for (const auto &[name, tensor] : live)
    if (!isFrozen(name))
      trained[name] = tensor;
  return trained;
}

std::vector<const Tensor *>
DeviceExecutor::dataOf(const StageProgram &stage, int64_t mb,
                       std::vector<Tensor> &storage) const {
  storage.clear();
  storage.reserve(stage.dataInputs().size());
  for (const DataInputInfo &input : stage.dataInputs()) {
    const Tensor &all = dataset->at(input.name);
    Tensor slice(input.type, input.shape);
    int64_t perSample = all.elements() / all.shape[0];
    size_t sampleBytes = perSample * dtypeBytes(input.type);
    int64_t batch = input.shape.empty() ? 1 : input.shape[0];
    for (int64_t i = 0; i < batch; ++i) {
      int64_t sample = (mb * batch + i) % all.shape[0];
      std::memcpy(slice.bytes.data() + i * sampleBytes,
                  all.bytes.data() + sample * sampleBytes, sampleBytes);
    }
    storage.push_back(std::move(slice));
  }
  std::vector<const Tensor *> result;
  for (const Tensor &tensor : storage)
    result.push_back(&tensor);
  return result;
}

llvm::Expected<std::pair<StageProgram *, DeviceExecutor::KeptValues::iterator>>
DeviceExecutor::kept(KeptValues &table, int64_t stage, int64_t mb,
                     llvm::StringRef action, llvm::StringRef before) {
  StageProgram *stageProgram = program(stage);
  auto it = table.find({stage, mb});
  if (!stageProgram || it == table.end())
    return fail("device " + llvm::Twine(communicator.device()) + " runs " +
                action + " of stage " + llvm::Twine(stage) + " micro-batch " +
                llvm::Twine(mb) + " before its " + before);
  return std::make_pair(stageProgram, it);
}

std::vector<Tensor *> DeviceExecutor::gradientSums(const StageProgram &stage,
                                                   int64_t mb) {
  auto [sums, fresh] = gradients.try_emplace(mb / config.schedule.microBatches);
  if (fresh)
    sums->second = zeroGradients();
  return gradientSumsOf(stage, sums->second);
}

llvm::Error DeviceExecutor::forward(int64_t stage, int64_t mb) {
  StageProgram *stageProgram = program(stage);
  if (!stageProgram)
    return fail("device " + llvm::Twine(communicator.device()) +
                " has no program for stage " + llvm::Twine(stage));
  if (!evaluating && activationCache.covers(stage))
    return cachedForward(*stageProgram, mb);
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  StageProgram::ForwardResult result;
  timed([&] {
    result = stageProgram->forward(mb, paramsOf(*stageProgram, live), data);
  });
  if (evaluating) {
    if (result.loss)
      evaluated.push_back({mb, *result.loss, std::move(result.metrics)});
    return llvm::Error::success();
  }
  if (result.loss && !std::isfinite(*result.loss))
    return fail(llvm::formatv("step {0}, micro-batch {1}: the loss is {2}; "
                              "the run stops, saving nothing",
                              mb / config.schedule.microBatches,
                              mb % config.schedule.microBatches,
                              llvm::format("%g", *result.loss)));
  if (result.loss)
    stepLosses[mb / config.schedule.microBatches].push_back(*result.loss);
  // A stage whose backward is skipped keeps nothing for it.
  if (!skipped.skips(stage, mb))
    inFlight[{stage, mb}] = {version, std::move(result.saved)};
  return llvm::Error::success();
}

namespace {
/// The stage code's transport during a backward whose sends to skipped
/// stages are dropped (SkippedBackwards.h): passes the others on.
class DroppingTransport : public Transport {
public:
  DroppingTransport(Transport &inner, const std::set<SendKey> &dropped)
      : inner(inner), dropped(dropped) {}
  int64_t device() const override { return inner.device(); }
  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    if (!dropped.count({peer, tag}))
      inner.send(peer, tag, microbatch, data, bytes);
  }
  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    inner.recv(peer, tag, microbatch, data, bytes);
  }

private:
  Transport &inner;
  const std::set<SendKey> &dropped;
};
} // namespace

void DeviceExecutor::withoutDroppedSends(int64_t stage, int64_t mb,
                                         llvm::function_ref<void()> code) {
  const std::set<SendKey> *dropped = skipped.dropped(stage, mb);
  if (!dropped) {
    code();
    return;
  }
  DroppingTransport dropping(*timedTransport(), *dropped);
  setThreadTransport(&dropping);
  code();
  setThreadTransport(timedTransport());
}

llvm::Error DeviceExecutor::backward(int64_t stage, int64_t mb) {
  // A skipped backward (SkippedBackwards.h; the activation cache's stages
  // among them); a forward run before the skip kept its values.
  if (skipped.skips(stage, mb)) {
    inFlight.erase({stage, mb});
    return llvm::Error::success();
  }
  auto found = kept(inFlight, stage, mb, "the backward", "forward");
  if (!found)
    return found.takeError();
  StageProgram *stageProgram = found->first;
  KeptValues::iterator it = found->second;
  int64_t used = it->second.version;
  const TensorMap &weights =
      config.stashing != schedule::WeightVersions::None && used != version
          ? stashed.at(used)
          : live;
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  std::vector<Tensor *> sums = gradientSums(*stageProgram, mb);
  withoutDroppedSends(stage, mb, [&] {
    timed([&] {
      stageProgram->backward(mb, paramsOf(*stageProgram, weights), data,
                             std::move(it->second.saved), sums);
    });
  });
  inFlight.erase(it);
  // Drop a stashed version no micro-batch in flight uses any more.
  if (used != version && llvm::none_of(inFlight, [&](const auto &entry) {
        return entry.second.version == used;
      }))
    stashed.erase(used);
  return llvm::Error::success();
}

void DeviceExecutor::boundCaches(llvm::ArrayRef<Action> actions,
                                 llvm::ArrayRef<int64_t> bounds) {
  cacheBounds.clear();
  for (auto [action, bound] : llvm::zip(actions, bounds))
    cacheBounds[{action.kind, action.stage, action.index}] = bound;
}

void DeviceExecutor::limitCache(const Action &action) {
  // The task's generated buffers and cache stay within what the replay
  // allows it: its entry point's peak and the room the device's predicted
  // peak leaves beside it; without bounds, its entry point's peak, and an
  // update leaves the last task's bound.
  auto bound = cacheBounds.find({action.kind, action.stage, action.index});
  if (bound != cacheBounds.end()) {
    // The device's stages share its pool in the allocator.
    StageProgram *any = action.kind == ActionKind::Update
                            ? (stages.empty() ? nullptr : stages.front())
                            : program(action.stage);
    if (any)
      any->limitCache(bound->second);
    return;
  }
  if (action.kind == ActionKind::Update)
    return;
  if (StageProgram *stage = program(action.stage))
    if (std::optional<StageMemory> memory = stage->memory())
      stage->limitCache(memory->peakOf(action.kind));
}

void DeviceExecutor::timed(llvm::function_ref<void()> code) {
  double start = now();
  code();
  double waited = waitTimer->take();
  double computed = now() - start - waited;
  // A device slowed down on purpose (--debug-slow) sleeps in proportion.
  if (config.slowdown > 1 && computed > 0) {
    std::this_thread::sleep_for(
        std::chrono::duration<double>((config.slowdown - 1) * computed));
    computed = now() - start - waited;
  }
  computeSeconds += computed;
  waitedSeconds += waited;
}

llvm::Error
DeviceExecutor::update(int64_t k,
                       const std::function<void(const StepReport &)> &onStep) {
  int64_t self = communicator.device();
  // Keep the version that micro-batches in flight still need.
  if (config.stashing != schedule::WeightVersions::None &&
      llvm::any_of(inFlight, [&](const auto &entry) {
        return entry.second.version == version;
      })) {
    stashed[version] = trainedWeights();
    int64_t versions = static_cast<int64_t>(stashed.size()) + 1;
    peakVersionCount = std::max(peakVersionCount, versions);
    if (config.stashing == schedule::WeightVersions::DoubleBuffered &&
        versions > 2)
      return fail("2BW keeps two weight versions, device " + llvm::Twine(self) +
                  " needs " + llvm::Twine(versions) + " at update " +
                  llvm::Twine(k) +
                  ": use at least as many micro-batches per step as the "
                  "pipeline is deep");
  }
  auto [stepGradients, fresh] = gradients.try_emplace(k);
  if (fresh)
    stepGradients->second = zeroGradients();
  TensorMap sums = std::move(stepGradients->second);
  gradients.erase(stepGradients);
  // A replicated device's replicas each summed their own micro-batches:
  // the stages' all-reduces started as their backwards ended.
  auto *replicated = dynamic_cast<ReplicaCommunicator *>(&communicator);
  if (reductions)
    reductions->finish(k, sums);
  float scale = 1.0f / static_cast<float>(config.schedule.microBatches);
  for (auto &[name, grad] : sums)
    for (float &g : grad.f32Values())
      g *= scale;

  // Tied parameters, in name order: copies send, owners sum.
  int64_t tied = 0;
  for (const auto &[name, holders] : placement) {
    if (holders.size() < 2)
      continue;
    int64_t gradTag = tiedGradientTag(tied);
    ++tied;
    if (!sums.count(name))
      continue;
    Tensor &grad = sums[name];
    size_t bytes = grad.bytes.size();
    if (holders.front() == self) {
      Tensor incoming(grad.type, grad.shape);
      for (size_t h = 1; h < holders.size(); ++h) {
        recvTied(communicator, holders[h], gradTag, k, incoming.bytes.data(),
                 bytes);
        llvm::MutableArrayRef<float> sum = grad.f32Values();
        llvm::ArrayRef<float> add = incoming.f32Values();
        for (size_t j = 0; j < sum.size(); ++j)
          sum[j] += add[j];
      }
    } else {
      sendTied(communicator, holders.front(), gradTag, k, grad.bytes.data(),
               bytes);
    }
  }

  std::vector<std::string> names;
  std::vector<Tensor *> owned;
  std::vector<const Tensor *> grads;
  for (const ParameterInfo &param : params) {
    if (!owns(param.name) || isFrozen(param.name))
      continue;
    names.push_back(param.name);
    owned.push_back(&live.at(param.name));
    grads.push_back(&sums.at(param.name));
  }
  std::map<std::string, double> squares;
  if (config.gradientSquares)
    for (size_t i = 0; i < names.size(); ++i) {
      double sum = 0;
      for (float value : grads[i]->f32Values())
        sum += double(value) * value;
      squares[names[i]] = sum;
    }
  optimizer.step(names, owned, grads);

  tied = 0;
  for (const auto &[name, holders] : placement) {
    if (holders.size() < 2)
      continue;
    int64_t valueTag = tiedValueTag(tied);
    ++tied;
    if (!live.count(name) || isFrozen(name))
      continue;
    Tensor &value = live[name];
    if (holders.front() == self) {
      for (size_t h = 1; h < holders.size(); ++h)
        sendTied(communicator, holders[h], valueTag, k, value.bytes.data(),
                 value.bytes.size());
    } else {
      recvTied(communicator, holders.front(), valueTag, k, value.bytes.data(),
               value.bytes.size());
    }
  }
  ++version;

  if (replicated) {
    // The step's loss once, over all replicas' micro-batches.
    std::vector<double> &losses = stepLosses[k];
    replicated->gatherLosses(k, losses);
    if (losses.empty())
      stepLosses.erase(k);
  }
  if (onStep) {
    StepReport report;
    report.step = k;
    auto losses = stepLosses.find(k);
    if (losses != stepLosses.end()) {
      double sum = 0;
      for (double loss : losses->second)
        sum += loss;
      report.loss = sum / losses->second.size();
    }
    report.computeSeconds = computeSeconds;
    report.seconds = now() - stepStart;
    report.gradientSquares = std::move(squares);
    onStep(report);
  }
  stepLosses.erase(k);
  computeSeconds = 0;
  stepStart = now();
  return llvm::Error::success();
}

void DeviceExecutor::startReductions(llvm::ArrayRef<Action> actions) {
  auto *replicated = dynamic_cast<ReplicaCommunicator *>(&communicator);
  if (!replicated || replicated->replicas() < 2)
    return;
  if (!reductions) {
    std::map<int64_t, std::vector<std::string>> stageParams;
    for (StageProgram *stage : stages)
      for (const ParameterInfo &param : stage->parameters())
        stageParams[stage->stage()].push_back(param.name);
    reductions = std::make_unique<ReplicaReductions>(
        *replicated, stageParams, gradients, config.schedule.microBatches);
  }
  reductions->plan(actions);
}

llvm::Error
DeviceExecutor::run(llvm::ArrayRef<Action> actions,
                    const std::function<void(const StepReport &)> &onStep) {
  if (!dataset && !inputs.empty())
    return fail("device " + llvm::Twine(communicator.device()) +
                " has no data set");
  if (live.size() != params.size())
    return fail("device " + llvm::Twine(communicator.device()) +
                " has no weights");
  setThreadTransport(waitTimer.get());
  int32_t chargedBefore = ftpipe_mem_thread_device();
  auto device = static_cast<int32_t>(communicator.device());
  ftpipe_mem_set_thread_device(device);
  waitTimer->take();
  stepStart = now();
  double runStart = stepStart;
  events.clear();
  startReductions(actions);
  for (auto [index, action] : llvm::enumerate(actions)) {
    double actionStart = now(), cpuStart = threadCpuSeconds(),
           computeBefore = computeSeconds, waitedBefore = waitedSeconds;
    HeldBytes heldBefore = held();
    limitCache(action);
    llvm::Error error = llvm::Error::success();
    switch (action.kind) {
    case ActionKind::Forward:
      error = forward(action.stage, action.index);
      break;
    case ActionKind::Backward:
      error = backward(action.stage, action.index);
      break;
    case ActionKind::Update:
      error = update(action.index, onStep);
      break;
    case ActionKind::InputBackward:
      error = inputBackward(action.stage, action.index);
      break;
    case ActionKind::WeightBackward:
      error = weightBackward(action.stage, action.index);
      break;
    }
    if (error) {
      setThreadTransport(nullptr);
      ftpipe_mem_set_thread_device(chargedBefore);
      return error;
    }
    if (reductions)
      reductions->ran(index);
    FTPipeMemLedger ledger;
    ftpipe_mem_read(device, &ledger);
    if (ledger.peak > seenPeak) {
      seenPeak = ledger.peak;
      peakAction = action.str();
      heldAtPeak = heldBefore;
    }
    if (tracing) {
      TraceEvent event{action, actionStart - runStart, now() - runStart,
                       action.kind == ActionKind::Update
                           ? 0.0
                           : computeSeconds - computeBefore,
                       waitedSeconds - waitedBefore};
      // A device slowed down on purpose (--debug-slow) stands for a slower
      // one: its stage code's CPU time counts the factor as its wall time
      // does (timed()).
      event.skipped = action.kind != ActionKind::Forward &&
                      action.kind != ActionKind::Update &&
                      skipped.skips(action.stage, action.index);
      event.cpuSeconds =
          (threadCpuSeconds() - cpuStart) *
          (action.kind == ActionKind::Update ? 1.0
                                             : std::max(1.0, config.slowdown));
      events.push_back(event);
    }
  }
  setThreadTransport(nullptr);
  ftpipe_mem_set_thread_device(chargedBefore);
  return llvm::Error::success();
}

llvm::json::Value ftpipe::runtime::traceToChrome(
    const std::vector<std::vector<TraceEvent>> &perDevice,
    llvm::ArrayRef<std::string> migrations) {
  llvm::json::Array out;
  for (size_t d = 0; d < perDevice.size(); ++d) {
    out.push_back(llvm::json::Object{
        {"ph", "M"},
        {"name", "thread_name"},
        {"pid", 0},
        {"tid", static_cast<int64_t>(d)},
        {"args", llvm::json::Object{{"name", "device " + std::to_string(d)}}}});
    size_t moves = 0;
    for (const TraceEvent &event : perDevice[d]) {
      const Action &action = event.action;
      if (event.migration) {
        out.push_back(llvm::json::Object{
            {"name", "migrate after step " + std::to_string(action.index + 1)},
            {"cat", "migration"},
            {"ph", "X"},
            {"pid", 0},
            {"tid", static_cast<int64_t>(d)},
            {"ts", event.startSeconds * 1e6},
            {"dur", (event.endSeconds - event.startSeconds) * 1e6},
            {"args", llvm::json::Object{{"step", action.index + 1},
                                        {"why", moves < migrations.size()
                                                    ? migrations[moves]
                                                    : std::string()}}}});
        ++moves;
        continue;
      }
      bool update = action.kind == ActionKind::Update;
      // "F s2 mb5", "B s2 mb5", and a split backward's "I s2 mb5", "W s2 mb5".
      const char *letter = action.kind == ActionKind::Forward         ? "F"
                           : action.kind == ActionKind::Backward      ? "B"
                           : action.kind == ActionKind::InputBackward ? "I"
                                                                      : "W";
      std::string name = update
                             ? action.str()
                             : letter + (" s" + std::to_string(action.stage)) +
                                   " mb" + std::to_string(action.index);
      // A task's time in stage code, waiting for messages, and its thread's
      // CPU time (ms): what --compare-simulator reads, for a person.
      llvm::json::Object args =
          update
              ? llvm::json::Object{{"step", action.index}}
              : llvm::json::Object{{"stage", action.stage},
                                   {"microbatch", action.index},
                                   {"compute_ms", event.computeSeconds * 1e3},
                                   {"wait_ms", event.waitSeconds * 1e3},
                                   {"cpu_ms", event.cpuSeconds * 1e3}};
      if (event.skipped)
        args["skipped"] = true;
      out.push_back(llvm::json::Object{
          {"name", name},
          {"cat", update                               ? "update"
                  : action.kind == ActionKind::Forward ? "forward"
                                                       : "backward"},
          {"ph", "X"},
          {"pid", 0},
          {"tid", static_cast<int64_t>(d)},
          {"ts", event.startSeconds * 1e6},
          {"dur", (event.endSeconds - event.startSeconds) * 1e6},
          {"args", std::move(args)}});
    }
  }
  return llvm::json::Object{{"traceEvents", std::move(out)},
                            {"displayTimeUnit", "ms"}};
}
