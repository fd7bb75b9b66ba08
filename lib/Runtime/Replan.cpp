//===- Replan.cpp - Re-planning a running pipeline from measurements ------===//

#include "FTPipe/Runtime/Replan.h"

#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/MeasuredProfile.h"
#include "FTPipe/Runtime/Migration.h"
#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Schedule/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <csignal>
#include <numeric>
#include <unistd.h>

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<ReplanPolicy>
ftpipe::runtime::parseReplanPolicy(llvm::StringRef mode, double threshold,
                                   int64_t warmup) {
  ReplanPolicy policy;
  if (mode == "auto") {
    policy.mode = ReplanPolicy::Mode::Auto;
  } else if (mode.consume_front("every=")) {
    if (mode.getAsInteger(10, policy.every) || policy.every < 1)
      return fail("--replan every=N: N is a number of steps, at least 1, "
                  "not '" +
                  mode + "'");
    policy.mode = ReplanPolicy::Mode::Every;
  } else if (mode != "off" && !mode.empty()) {
    return fail("--replan: auto, every=N or off, not '" + mode + "'");
  }
  if (!(threshold >= 0 && threshold < 1))
    return fail("--replan-threshold: a share from 0 to below 1 (0.05 is 5 %)");
  if (warmup < 0)
    return fail("--replan-warmup: a number of steps, at least 0");
  policy.threshold = threshold;
  policy.warmup = warmup;
  return policy;
}

double ftpipe::runtime::busiestOverMean(llvm::ArrayRef<double> values) {
  if (values.empty())
    return 1;
  double sum = std::accumulate(values.begin(), values.end(), 0.0);
  if (sum <= 0)
    return 1;
  return *llvm::max_element(values) / (sum / values.size());
}

bool ftpipe::runtime::replanDue(const ReplanPolicy &policy, int64_t updates,
                                const ReplanState &state,
                                double measuredBalance) {
  int64_t window = updates - state.planStart - policy.warmup;
  if (!policy.enabled() || state.compiling || window < 1)
    return false;
  if (policy.mode == ReplanPolicy::Mode::Every)
    return updates % policy.every == 0;
  if (!state.replanned)
    return true;
  return window >= kReplanDriftSteps && state.baseline &&
         measuredBalance > *state.baseline * (1 + policy.threshold);
}

llvm::Expected<PlanPrediction> ftpipe::runtime::predictStep(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    llvm::ArrayRef<double> forwardMs, llvm::ArrayRef<double> backwardMs,
    const ArtifactManifest *manifest) {
  size_t stages = graph.stages();
  if (forwardMs.size() != stages || backwardMs.size() != stages)
    return fail("a time per stage is needed");
  schedule::ScheduleConfig one = config;
  one.steps = 1;
  auto lists = runSchedule(graph, manifest, one);
  if (!lists)
    return lists.takeError();
  schedule::TimedStageGraph timed = schedule::TimedStageGraph::withCosts(
      graph, forwardMs.vec(), backwardMs.vec(),
      std::vector<double>(stages, 0.0), /*edgeBytes=*/0);
  schedule::SimulatorConfig simulator;
  simulator.kind = config.kind;
  simulator.microBatches = config.microBatches;
  simulator.recordEvents = false;
  simulator.orders = std::move(*lists);
  auto result = schedule::simulate(
      timed, schedule::Links::uniform(graph.devices, 1e15, 0.0), simulator);
  if (!result)
    return result.takeError();
  PlanPrediction prediction;
  prediction.stepMs = result->makespanMs;
  prediction.deviceMs = result->deviceBusyMs;
  prediction.balance = busiestOverMean(prediction.deviceMs);
  return prediction;
}

llvm::Expected<PlanPrediction> ftpipe::runtime::predictMeasured(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const MeasuredProfile &profile, const ArtifactManifest *manifest) {
  // The times the new plan was priced with (ftpipe-annotate-costs).
  bool cpuTime = profile.pricesCpuTime();
  std::vector<double> forward(graph.stages()), backward(graph.stages());
  for (const ProfileStage &stage : profile.stages) {
    if (stage.id < 0 || stage.id >= graph.stages())
      return fail("the profile's stage " + llvm::Twine(stage.id) +
                  " is not one of the plan's");
    forward[stage.id] = stage.measuredForwardMs(cpuTime);
    backward[stage.id] = stage.measuredBackwardMs(cpuTime);
  }
  return predictStep(graph, config, forward, backward, manifest);
}

llvm::Expected<PlanPrediction>
ftpipe::runtime::predictPlanned(const schedule::StageGraph &graph,
                                const schedule::ScheduleConfig &config,
                                const ArtifactManifest &manifest) {
  std::vector<double> forward, backward;
  for (const ManifestStage &stage : manifest.stages) {
    if (!stage.forwardMs || !stage.backwardMs)
      return fail(manifest.directory +
                  ": the manifest records no stage times (forward_ms, "
                  "backward_ms)");
    forward.push_back(*stage.forwardMs);
    backward.push_back(*stage.backwardMs);
  }
  schedule::ScheduleConfig planned = config;
  planned.split.clear();
  if (schedule::isZeroBubble(config.kind))
    planned.split = splitStages(manifest);
  return predictStep(graph, planned, forward, backward, &manifest);
}

ReplanDecision ftpipe::runtime::decideReplan(const PlanPrediction &current,
                                             const PlanPrediction &next,
                                             double threshold,
                                             llvm::StringRef unusable) {
  ReplanDecision decision;
  decision.gain = current.stepMs > 0 ? 1 - next.stepMs / current.stepMs : 0.0;
  std::string predicted = llvm::formatv(
      "predicted step {0:f3} ms -> {1:f3} ms ({2:f1} %), busiest / mean "
      "{3:f3} -> {4:f3}",
      current.stepMs, next.stepMs, 100 * decision.gain, current.balance,
      next.balance);
  if (!unusable.empty()) {
    decision.reason = "not taken: " + unusable.str() + "; " + predicted;
    return decision;
  }
  if (decision.gain <= threshold) {
    decision.reason = llvm::formatv("not taken: {0}, not above the threshold "
                                    "({1:f1} %)",
                                    predicted, 100 * threshold);
    return decision;
  }
  decision.migrate = true;
  decision.reason = "taken: " + predicted;
  return decision;
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The compile's output directory and log are made under the user's work
/// directory, and opened by name: a link or a special file planted at either
/// name would have the compiler write through it (docs/Robustness.md).
static llvm::Error checkWorkPath(llvm::StringRef path, bool directory) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status, /*Follow=*/false))
    return llvm::Error::success(); // not there yet
  llvm::sys::fs::file_type type = status.type();
  if (type == llvm::sys::fs::file_type::symlink_file)
    return fail(path + " is a link: the re-compile does not write through it; "
                       "move it away");
  llvm::sys::fs::file_type expected =
      directory ? llvm::sys::fs::file_type::directory_file
                : llvm::sys::fs::file_type::regular_file;
  if (type != expected)
    return fail(path + " exists and is not a " +
                (directory ? "directory" : "regular file") +
                ": the re-compile does not write there; move it away");
  return llvm::Error::success();
}

llvm::Expected<PlanCompile> PlanCompile::start(llvm::StringRef compiler,
                                               const ManifestCompile &command,
                                               llvm::StringRef profile,
                                               llvm::StringRef directory,
                                               llvm::StringRef log) {
  if (llvm::Error error = checkWorkPath(directory, /*directory=*/true))
    return std::move(error);
  if (llvm::Error error = checkWorkPath(log, /*directory=*/false))
    return std::move(error);
  std::vector<std::string> args = {compiler.str(), command.model};
  llvm::append_range(args, command.arguments);
  if (!profile.empty())
    args.push_back("--profile=" + profile.str());
  args.push_back("-o");
  args.push_back(directory.str());
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), log, log};
  std::string error;
  bool failed = false;
  PlanCompile compile;
  compile.process = llvm::sys::ExecuteNoWait(compiler, refs, std::nullopt,
                                             redirects, 0, &error, &failed);
  if (failed)
    return fail("cannot start " + compiler + ": " + error);
  compile.outputDirectory = directory.str();
  compile.logPath = log.str();
  compile.startSeconds = now();
  return std::move(compile);
}

std::optional<llvm::Error> PlanCompile::poll(bool wait) {
  std::string error;
  std::optional<llvm::sys::ProcessStatistics> statistics;
  llvm::sys::ProcessInfo done =
      llvm::sys::Wait(process, wait ? std::nullopt : std::optional<unsigned>(0),
                      &error, &statistics, /*Polling=*/true);
  if (done.Pid == 0)
    return std::nullopt;
  if (statistics)
    cpuSeconds = std::chrono::duration<double>(statistics->TotalTime).count();
  if (done.ReturnCode == 0 && error.empty())
    return llvm::Error::success();
  // Its last lines say why.
  std::string tail;
  if (auto log = llvm::MemoryBuffer::getFile(logPath)) {
    llvm::SmallVector<llvm::StringRef> lines;
    (*log)->getBuffer().rtrim().split(lines, '\n');
    for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size();
         ++i)
      tail += (tail.empty() ? "" : " | ") + lines[i].str();
  }
  return fail("ftpipe-compile exited with status " +
              llvm::Twine(done.ReturnCode) +
              (error.empty() ? "" : " (" + error + ")") + ": " + tail +
              " (log " + logPath + ")");
}

std::optional<llvm::Expected<PlanCompile::Plan>>
PlanCompile::finish(bool wait) {
  std::optional<llvm::Error> finished = poll(wait);
  if (!finished)
    return std::nullopt;
  if (*finished)
    return llvm::Expected<Plan>(std::move(*finished));
  auto model = CompiledModel::open(outputDirectory);
  if (!model)
    return llvm::Expected<Plan>(model.takeError());
  return llvm::Expected<Plan>(Plan{std::move(*model), outputDirectory,
                                   now() - startSeconds, cpuSeconds});
}

void PlanCompile::stop() {
  if (process.Pid > 0)
    ::kill(process.Pid, SIGTERM);
  std::string error;
  llvm::sys::Wait(process, std::nullopt, &error);
}

ReplanControl ftpipe::runtime::exchangeReplanControl(
    Communicator &communicator, int64_t step, double computeSeconds,
    const std::function<ReplanControl(std::vector<double>)> &decide) {
  int64_t reportTag = tagOf(RuntimeTag::ReplanReport);
  int64_t controlTag = tagOf(RuntimeTag::ReplanControl);
  int64_t pathTag = tagOf(RuntimeTag::ReplanPath);
  int64_t devices = communicator.devices();
  // A control message: the action and the length of the path after it.
  struct Header {
    int64_t action = 0, length = 0;
  };
  if (communicator.device() != 0) {
    communicator.send(0, reportTag, step, &computeSeconds,
                      sizeof(computeSeconds));
    Header header;
    communicator.recv(0, controlTag, step, &header, sizeof(header));
    ReplanControl control;
    control.action = static_cast<ReplanControl::Action>(header.action);
    control.directory.resize(header.length);
    if (header.length > 0)
      communicator.recv(0, pathTag, step, control.directory.data(),
                        header.length);
    return control;
  }
  std::vector<double> compute(devices);
  compute[0] = computeSeconds;
  for (int64_t d = 1; d < devices; ++d)
    communicator.recv(d, reportTag, step, &compute[d], sizeof(double));
  ReplanControl control = decide(std::move(compute));
  Header header{static_cast<int64_t>(control.action),
                int64_t(control.directory.size())};
  for (int64_t d = 1; d < devices; ++d) {
    communicator.send(d, controlTag, step, &header, sizeof(header));
    if (header.length > 0)
      communicator.send(d, pathTag, step, control.directory.data(),
                        header.length);
  }
  return control;
}

std::string ftpipe::runtime::opsPerDevice(const PipelineModel &model) {
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  if (!compiled)
    return "?";
  std::vector<int64_t> ops(model.stageGraph().devices);
  for (const ManifestStage &stage : compiled->manifest().stages)
    if (stage.device >= 0 && stage.device < int64_t(ops.size()))
      ops[stage.device] += stage.ops.size();
  return llvm::join(
      llvm::map_range(ops, [](int64_t n) { return std::to_string(n); }), "/");
}

std::string ReplanCoordinator::prefix() const {
  return "re-plan " + std::to_string(replans);
}

int64_t ReplanCoordinator::windowStart(int64_t updates) const {
  return std::max(state.planStart + setup.policy.warmup,
                  updates - kReplanWindowSteps);
}

double ReplanCoordinator::windowBalance() const {
  std::vector<double> perProcess;
  size_t from = std::min<size_t>(setup.policy.warmup, computes.size());
  for (size_t p = 0; !computes.empty() && p < computes.front().size(); ++p) {
    std::vector<double> steps;
    for (size_t k = from; k < computes.size(); ++k)
      steps.push_back(computes[k][p]);
    perProcess.push_back(median(steps));
  }
  return busiestOverMean(perProcess);
}

ReplanControl ReplanCoordinator::afterStep(int64_t updates,
                                           llvm::ArrayRef<double> compute,
                                           const PipelineModel &current,
                                           const ExecutorConfig &config) {
  computes.push_back(compute.vec());
  // The warm-up's steps, then at most the window's.
  size_t warmup = std::max<int64_t>(setup.policy.warmup, 0);
  if (computes.size() > warmup + kReplanWindowSteps)
    computes.erase(computes.begin() + warmup);
  ReplanControl control;
  if (!compile) {
    double balance = windowBalance();
    // A plan the run moved to: its first full window is its baseline.
    if (!state.baseline && state.replanned &&
        updates - state.planStart - setup.policy.warmup >= kReplanDriftSteps)
      state.baseline = balance;
    if (replanDue(setup.policy, updates, state, balance))
      control.action = ReplanControl::Action::Measure;
    return control;
  }
  auto finished = compile->finish(setup.waitForCompile);
  if (!finished)
    return control;
  compile.reset();
  state.compiling = false;
  // A plan not taken is not tried again until the balance drifts further.
  state.baseline = measuredBalance;
  auto goOn = [&](const std::string &why) {
    setup.note(prefix() + " after step " + std::to_string(updates) + ": " +
               why + "; the run goes on under the current plan");
    return control;
  };
  if (!*finished)
    return goOn(llvm::toString(finished->takeError()));
  std::string directory = (*finished)->directory;
  double compileSeconds = (*finished)->seconds;
  std::unique_ptr<CompiledModel> &next = (*finished)->model;
  auto *compiled = dynamic_cast<const CompiledModel *>(&current);
  auto before = predictMeasured(current.stageGraph(), config.schedule, profile,
                                compiled ? &compiled->manifest() : nullptr);
  if (!before)
    return goOn("the current plan: " + llvm::toString(before.takeError()));
  auto after =
      predictPlanned(next->stageGraph(), config.schedule, next->manifest());
  if (!after)
    return goOn(llvm::toString(after.takeError()));
  std::string ops = opsPerDevice(current) + " -> " + opsPerDevice(*next);
  std::string unusable;
  // Re-planning measures and moves between unreplicated plans only.
  bool replicated =
      next->manifest().replicas && next->manifest().replicas->replicated();
  auto planned = planMigration(
      current, schedule::ReplicaLayout::none(current.stageGraph().devices),
      config, std::move(next), directory, updates, setup.allowOverBudget);
  if (!planned)
    unusable = llvm::toString(planned.takeError());
  else if (replicated)
    unusable = "the plan has replicas (re-planning moves between plans "
               "without replicas only)";
  ReplanDecision decision =
      decideReplan(*before, *after, setup.policy.threshold, unusable);
  setup.note(llvm::formatv("{0} after step {1}: plan {2} (compiled in {3:f1} "
                           "s) {4}; ops per device {5}",
                           prefix(), updates, directory, compileSeconds,
                           decision.reason, ops)
                 .str());
  if (!decision.migrate)
    return control;
  decidedAt = now();
  control.action = ReplanControl::Action::Migrate;
  control.directory = directory;
  control.reason = decision.reason;
  return control;
}

void ReplanCoordinator::measured(
    int64_t updates, const std::vector<std::vector<TraceEvent>> &traces,
    const PipelineModel &current, const ExecutorConfig &config) {
  ++replans;
  state.replanned = true;
  measuredBalance = windowBalance();
  auto say = [&](const std::string &what) {
    setup.note(prefix() + " after step " + std::to_string(updates) + ": " +
               what);
  };
  if (setup.directory.empty()) {
    llvm::SmallString<128> made;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("ftpipe-replan", made))
      return say("no work directory: " + ec.message());
    setup.directory = made.str().str();
  } else if (std::error_code ec =
                 llvm::sys::fs::create_directories(setup.directory)) {
    return say(setup.directory + ": " + ec.message());
  }
  std::string base = setup.directory + "/replan" + std::to_string(replans);
  ProfileSource source;
  source.schedule = schedule::nameOf(config.schedule.kind).str();
  source.warmupSteps = windowStart(updates);
  source.slowdowns = setup.slowdowns;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0)
    source.host = host;
  // planTraining refused a model without a manifest; plans moved to are
  // compiled ones.
  const ArtifactManifest &manifest =
      static_cast<const CompiledModel &>(current).manifest();
  source.artifacts = manifest.directory;
  source.target = manifest.target;
  schedule::ScheduleConfig window = config.schedule;
  window.steps = updates;
  auto measuredProfile = measureProfile(
      current.stageGraph(), window, traces,
      schedule::ReplicaLayout::none(current.stageGraph().devices),
      manifest.stages, std::move(source));
  if (!measuredProfile)
    return say("profile: " + llvm::toString(measuredProfile.takeError()));
  profile = std::move(*measuredProfile);
  std::string profilePath = base + "-profile.json";
  if (llvm::Error error = writeProfile(profilePath, profile))
    return say(profilePath + ": " + llvm::toString(std::move(error)));
  std::string why =
      setup.policy.mode == ReplanPolicy::Mode::Every
          ? "every=" + std::to_string(setup.policy.every)
      : state.baseline
          ? llvm::formatv("auto: busiest / mean drifted over {0:f3} by more "
                          "than {1:f1} %",
                          *state.baseline, 100 * setup.policy.threshold)
                .str()
          : std::string("auto: after the warm-up");
  auto started = PlanCompile::start(setup.compiler, *manifest.compile,
                                    profilePath, base, base + "-compile.log");
  if (!started) {
    state.baseline = measuredBalance;
    return say(llvm::toString(started.takeError()) +
               "; the run goes on under the current plan");
  }
  compile = std::move(*started);
  state.compiling = true;
  // What the plan promised, when its manifest records stage times.
  std::string promised;
  if (auto predicted =
          predictPlanned(current.stageGraph(), config.schedule, manifest))
    promised = llvm::formatv(" (the plan's {0:f3})", predicted->balance).str();
  else
    llvm::consumeError(predicted.takeError());
  say(llvm::formatv("{0}; measured busiest / mean {1:f3}{2} over steps "
                    "{3}-{4}; compiling {5} in the background",
                    why, measuredBalance, promised, windowStart(updates),
                    updates - 1, base)
          .str());
}

void ReplanCoordinator::migrated(int64_t updates) {
  setup.note(llvm::formatv("{0}: running on the new plan after step {1}, "
                           "{2:f3} s after the decision",
                           prefix(), updates, now() - decidedAt)
                 .str());
  state.planStart = updates;
  state.baseline.reset();
  computes.clear();
}

void ReplanCoordinator::finish() {
  if (compile) {
    compile->stop();
    setup.note(prefix() + ": the run ended before its compile; stopped it");
  }
  compile.reset();
}
