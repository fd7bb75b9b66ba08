//===- ftpipe-compile.cpp - Model IR to per-device artifacts --------------===//
//
// ftpipe-compile MODEL.mlir --target=cpu|cuda --devices=P [--hardware=...]
//   [--method=auto|mixed-pipe|seq-dp] [--replicas=none|auto|W|r0,r1,...] -o DIR
//
// Partitions the model (unless it is partitioned already), turns the plan into
// per-device stage programs (docs/StagePrograms.md), lowers every device's
// entry points (CPU: FTPipe's CPU pipeline, OpenBLAS contractions; CUDA: the
// CUDA pipeline, kernels in an embedded fatbin, cuBLAS contractions) and
// writes one shared library per device plus DIR/manifest.json
// (docs/Compile.md). Devices are lowered and compiled in parallel, each in a
// context of its own (--jobs).
// A module that already holds per-device entry points (`ftpipe.entry`) skips
// the first two steps, a partitioned one the first; with --forward-only the
// model function itself becomes the one entry point of one artifact.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/ParseGuard.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/MemoryNeeds.h"
#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/MemoryCheck.h"
#include "FTPipe/Schedule/MemoryReplay.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Target/HostObject.h"
#include "FTPipe/Transforms/FreezeParameters.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace ft = mlir::ftpipe;

namespace {

cl::OptionCategory category("ftpipe-compile options");
cl::opt<std::string> inputFile(cl::cat(category), cl::Positional,
                               cl::desc("<model.mlir>"), cl::Required);
cl::opt<std::string> outputDir(cl::cat(category), "o",
                               cl::desc("Output directory"),
                               cl::value_desc("dir"), cl::Required);
enum class Target { CPU, CUDA };
cl::opt<Target>
    target(cl::cat(category), "target", cl::desc("Code generation target"),
           cl::init(Target::CPU),
           cl::values(clEnumValN(Target::CPU, "cpu",
                                 "host CPU, contractions on OpenBLAS"),
                      clEnumValN(Target::CUDA, "cuda",
                                 "NVIDIA GPUs, contractions on cuBLAS")));
cl::opt<unsigned>
    devices(cl::cat(category), "devices",
            cl::desc("Number of devices: the processes ftpipe-run starts (a "
                     "plan with replicas has fewer, each run by several)"),
            cl::init(1));
cl::opt<ft::ReplicasOption> replicas(
    cl::cat(category), "replicas",
    cl::desc("Data-parallel replicas of the plan's devices on the --devices "
             "devices (the partitioning passes' replicas, manifest.json's "
             "replicas): none; auto: the partitioner (--method=auto: every "
             "one's plans; the others: their own) chooses the pipeline's "
             "depth and each device's replicas; W: W identical pipelines of "
             "depth --devices / W; r0,r1,...: one factor per plan device, "
             "adding up to --devices. Planned, priced and checked for "
             "memory as replicas; for a model partitioned already, W or the "
             "factors apply to its plan's devices and are checked for "
             "memory"),
    cl::init(ft::ReplicasOption::none()));
cl::opt<bool> allowOverBudget(
    cl::cat(category), "allow-over-budget",
    cl::desc("Compile a model partitioned already whose plan does not fit a "
             "device's memory (checked as ftpipe-run checks its setup); a "
             "warning then"));
cl::opt<std::string>
    hardware(cl::cat(category), "hardware",
             cl::desc("Hardware preset name or cluster JSON file"),
             cl::init(ft::PartitionPipelineOptions().hardware));
cl::opt<std::string>
    profile(cl::cat(category), "profile",
            cl::desc("Measured profile (ftpipe-run --profile-out, or scope -> "
                     "times) whose times replace the cost model's "
                     "(docs/CostModel.md)"),
            cl::value_desc("file"));
cl::opt<std::string>
    freeze(cl::cat(category), "freeze",
           cl::desc("Freeze the parameters whose Hugging Face name matches "
                    "this regex, or those listed in @FILE (one a line; write "
                    "--freeze=@FILE, a lone @FILE is a response file)"),
           cl::value_desc("regex|@file"));
cl::opt<ft::PartitionMethod> method(
    cl::cat(category), "method", cl::desc("Partitioner"),
    cl::init(ft::PartitionMethod::Auto),
    cl::values(clEnumValN(ft::PartitionMethod::Auto, "auto",
                          "every partitioner, the fastest feasible plan"),
               clEnumValN(ft::PartitionMethod::MixedPipe, "mixed-pipe",
                          "Mixed-Pipe"),
               clEnumValN(ft::PartitionMethod::SeqDP, "seq-dp",
                          "contiguous stages, dynamic programming")));
cl::opt<::ftpipe::schedule::Kind> syncSchedule(
    cl::cat(category), "sync-schedule",
    cl::desc("Synchronous schedule whose simulated step chooses among the "
             "partitioner's candidate plans (--method auto or mixed-pipe), "
             "recorded as the setup's schedule (ftpipe-run's default; none: "
             "the time under --schedule decides)"),
    cl::init(ft::PartitionPipelineOptions().syncSchedule),
    ft::syncScheduleOptionValues());
// The training setup, as the partitioning passes take it; recorded in the
// module (#ftpipe.training) and in manifest.json.
cl::opt<::ftpipe::schedule::Kind>
    schedule(cl::cat(category), "schedule", cl::desc("Pipeline schedule"),
             cl::init(::ftpipe::schedule::TrainingSetup().schedule),
             ft::scheduleOptionValues());
cl::opt<unsigned>
    microbatches(cl::cat(category), "microbatches",
                 cl::desc("Micro-batches per optimizer step"),
                 cl::init(::ftpipe::schedule::TrainingSetup().microBatches));
cl::opt<::ftpipe::schedule::Optimizer>
    optimizer(cl::cat(category), "optimizer",
              cl::desc("Optimizer whose state is kept per parameter"),
              cl::init(::ftpipe::schedule::TrainingSetup().optimizer),
              ft::optimizerOptionValues());
cl::opt<::ftpipe::schedule::WeightVersions>
    stashing(cl::cat(category), "stashing",
             cl::desc("Weight versions kept by the async schedule"),
             cl::init(::ftpipe::schedule::TrainingSetup().weightVersions),
             ft::weightVersionsOptionValues());
cl::opt<::ftpipe::schedule::RecomputeMode>
    recompute(cl::cat(category), "recompute",
              cl::desc("Stages that recompute the forward before the "
                       "backward (auto: as the plan chose; default: auto "
                       "for --target=cpu, true for cuda)"),
              cl::init(::ftpipe::schedule::TrainingSetup().recompute),
              ft::recomputeModeOptionValues());
cl::opt<std::string> runtimeDir(cl::cat(category), "runtime-dir",
                                cl::desc("Directory of FTPipe's runtime "
                                         "libraries"),
                                cl::init(FTPIPE_RUNTIME_DIR));
cl::opt<unsigned> optLevel(cl::cat(category), "O",
                           cl::desc("LLVM optimisation level (0-3)"),
                           cl::Prefix, cl::init(2));
cl::opt<bool> blas(cl::cat(category), "blas",
                   cl::desc("Contractions call BLAS (else loops)"),
                   cl::init(true));
cl::opt<bool> fuse(cl::cat(category), "fuse",
                   cl::desc("Fuse element-wise producers"), cl::init(true));
cl::opt<bool> outlineLayers(
    cl::cat(category), "outline-layers",
    cl::desc("Compile each repeated layer once, in a function of its own "
             "(a faster compile; the same buffers at each point)"),
    cl::init(true));
cl::opt<bool> forwardOnly(
    cl::cat(category), "forward-only",
    cl::desc("Compile the model function itself for one device (inference), "
             "no partition and no backward"),
    cl::init(false));
cl::opt<bool> indexGuards(
    cl::cat(category), "index-guards",
    cl::desc("Clamp every gather's indices to its table and stop the run on "
             "an index the model computes outside it (docs/Robustness.md); "
             "false only to measure their cost"),
    cl::init(true));
cl::opt<bool> keepIR(cl::cat(category), "keep-ir",
                     cl::desc("Also write each device's IR before lowering"),
                     cl::init(false));
cl::opt<unsigned> jobs(cl::cat(category), "jobs",
                       cl::desc("Devices compiled at once (0: one per "
                                "hardware thread)"),
                       cl::init(0));
cl::opt<std::string> cudaChip(cl::cat(category), "cuda-chip",
                              cl::desc("CUDA target: GPU architecture "
                                       "(sm_75 to sm_90a)"),
                              cl::init("sm_90"));
cl::opt<std::string> cudaToolkit(cl::cat(category), "cuda-toolkit",
                                 cl::desc("CUDA target: the toolkit whose "
                                          "ptxas compiles the kernels"),
                                 cl::init(FTPIPE_CUDA_TOOLKIT_DIR));

/// Progress on stderr: one line per step with its wall time, written in one
/// piece (devices compile in parallel).
class Progress {
public:
  void start(const std::string &step) {
    current = step;
    begin = std::chrono::steady_clock::now();
  }
  void done() {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    llvm::errs() << llvm::formatv("ftpipe-compile: {0}: {1:F2} s\n", current,
                                  seconds)
                        .str();
  }
  LogicalResult fail(const llvm::Twine &why = "") {
    std::string line = "ftpipe-compile: error in step '" + current + "'";
    if (!why.isTriviallyEmpty())
      line += ": " + why.str();
    llvm::errs() << line + "\n";
    return failure();
  }
  const std::string &step() const { return current; }

private:
  std::string current;
  std::chrono::steady_clock::time_point begin;
};

bool hasEntryPoints(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>())
    if (function->hasAttr("ftpipe.entry"))
      return true;
  return false;
}

LogicalResult runPipeline(ModuleOp module, Progress &progress,
                          llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(module)))
    return progress.fail();
  return success();
}

/// The training setup of `module`: its #ftpipe.training, which a setup flag
/// given on the command line must agree with, or else the flags' values,
/// then recorded on the module.
FailureOr<::ftpipe::schedule::TrainingSetup> resolveSetup(ModuleOp module) {
  ::ftpipe::schedule::TrainingSetup flags{schedule, microbatches, optimizer,
                                          stashing, recompute};
  // A CPU device's memory is the host's, rarely short: its stages recompute
  // only where the plan needs the memory (FTPipe's setup, every stage, is
  // for GPUs).
  if (target == Target::CPU && !recompute.getNumOccurrences())
    flags.recompute = ::ftpipe::schedule::RecomputeMode::Auto;
  auto recorded =
      module->getAttrOfType<ft::TrainingAttr>(ft::TrainingAttr::kName);
  if (!recorded) {
    module->setAttr(ft::TrainingAttr::kName,
                    ft::TrainingAttr::get(module.getContext(), flags));
    return flags;
  }
  ::ftpipe::schedule::TrainingSetup setup = recorded.getSetup();
  bool given = schedule.getNumOccurrences() ||
               microbatches.getNumOccurrences() ||
               optimizer.getNumOccurrences() || stashing.getNumOccurrences() ||
               recompute.getNumOccurrences();
  ::ftpipe::schedule::TrainingSetup merged = setup;
  if (schedule.getNumOccurrences())
    merged.schedule = schedule;
  if (microbatches.getNumOccurrences())
    merged.microBatches = microbatches;
  if (optimizer.getNumOccurrences())
    merged.optimizer = optimizer;
  if (stashing.getNumOccurrences())
    merged.weightVersions = stashing;
  if (recompute.getNumOccurrences())
    merged.recompute = recompute;
  if (given && merged != setup) {
    module.emitError() << "ftpipe-compile: the setup flags ask for "
                       << ft::TrainingAttr::get(module.getContext(), merged)
                       << " but the module records " << recorded;
    return failure();
  }
  return setup;
}

/// The hardware the plan in `module` was made for, cut to its
/// `planDevices` devices.
FailureOr<::ftpipe::partition::Hardware> planHardware(ModuleOp module,
                                                      int64_t planDevices) {
  FailureOr<::ftpipe::partition::Hardware> hw = ft::readHardware(module);
  if (failed(hw) || planDevices >= int64_t(hw->numDevices()))
    return hw;
  llvm::Expected<::ftpipe::partition::Hardware> first =
      hw->firstDevices(planDevices);
  if (!first) {
    module.emitError() << llvm::toString(first.takeError());
    return failure();
  }
  return std::move(*first);
}

/// What the manifest says of each stage of the plan for measured profiles:
/// the positions of its ops in the model function (`ops`) and whether it
/// recomputes its forward (`recomputes`); and for re-planning, the cost
/// model's times of a micro-batch on its device (`forward_ms`,
/// `backward_ms`, the recomputation in the backward) and for zb-auto, the
/// weight gradients' part of the backward (`backward_weight_ms`).
struct PlannedStage {
  std::vector<int64_t> ops;
  bool recomputes = false;
  double forwardMs = 0, backwardMs = 0, weightMs = 0;
};

/// What the plan in `module` fixes before the model function is outlined:
/// the memory of each of its devices (`layout`'s) and what each stage holds.
/// With `checkPlan`, fails where the plan does not fit in memory run as
/// `layout`, with or without replicas (schedule::checkMemory, by which the
/// passes' replicas search checks every option and ftpipe-run its setup),
/// unless --allow-over-budget, which makes it a warning.
struct PlanFacts {
  std::vector<::ftpipe::schedule::DeviceMemoryInputs> memory;
  std::vector<PlannedStage> stages;
};
FailureOr<PlanFacts>
readPlanFacts(ModuleOp module, const ::ftpipe::schedule::TrainingSetup &setup,
              const ::ftpipe::schedule::ReplicaLayout &layout, bool checkPlan) {
  FailureOr<func::FuncOp> function = ft::getModelFunction(module, "");
  if (failed(function))
    return failure();
  FailureOr<ft::OpGraph> opGraph = ft::buildOpGraph(*function);
  if (failed(opGraph))
    return failure();
  FailureOr<::ftpipe::partition::Hardware> hw =
      planHardware(module, layout.devices());
  if (failed(hw))
    return failure();
  FailureOr<::ftpipe::partition::Plan> plan = ft::readPlan(module, *opGraph);
  if (failed(plan))
    return failure();
  auto fail = [&](llvm::Error error) {
    module.emitError() << llvm::toString(std::move(error));
    return failure();
  };
  ::ftpipe::partition::ObjectiveConfig config =
      ::ftpipe::partition::objectiveConfigOf(setup);
  llvm::Expected<::ftpipe::partition::PlanMetrics> metrics =
      ::ftpipe::partition::evaluatePlan(opGraph->graph, *hw, *plan, config);
  if (!metrics)
    return fail(metrics.takeError());
  llvm::Expected<::ftpipe::partition::StageGraph> timed =
      ::ftpipe::partition::buildStageGraph(opGraph->graph, *hw, *plan, config);
  if (!timed)
    return fail(timed.takeError());
  if (checkPlan) {
    std::vector<uint64_t> planned;
    for (const ::ftpipe::partition::DeviceMetrics &device : metrics->devices)
      planned.push_back(device.memoryBytes);
    ::ftpipe::schedule::MemoryCheck checked = ::ftpipe::schedule::checkMemory(
        timed->topology(uint32_t(hw->numDevices())), metrics->memoryInputs,
        setup, layout, planned);
    if (!checked.fits()) {
      std::string which = !layout.replicated() ? ""
                          : replicas.isNone()
                              ? " (its own replicas)"
                              : " (--replicas=" + replicas.str() + ")";
      std::string message = "ftpipe-compile: the plan's " +
                            std::to_string(hw->numDevices()) + " devices" +
                            which + ": " + checked.failure;
      if (!allowOverBudget) {
        emitError(module.getLoc())
            << message << " (--allow-over-budget compiles it anyway)";
        return failure();
      }
      emitWarning(module.getLoc()) << message;
    }
  }
  PlanFacts facts;
  facts.memory = std::move(metrics->memoryInputs);
  facts.stages.resize(plan->numStages());
  for (auto [node, stage] : llvm::enumerate(plan->nodeStage))
    facts.stages[stage].ops.push_back(int64_t(node));
  for (auto [s, stage] : llvm::enumerate(facts.stages)) {
    stage.recomputes = ::ftpipe::partition::stageRecomputes(*plan, config, s);
    stage.forwardMs = timed->fwdMs[s];
    stage.backwardMs = timed->bwdMs[s] + timed->recomputeMs[s];
    stage.weightMs = timed->weightMs.empty() ? 0.0 : timed->weightMs[s];
  }
  return facts;
}

/// What --replicas=W or r0,r1,... asks of the --devices devices, for a
/// partitioning that failed (they were plan devices before).
std::string describeRequest() {
  llvm::ArrayRef<int64_t> factors = replicas.requested();
  std::string request =
      "--devices counts processes: --replicas=" + replicas.str() + " on " +
      std::to_string(devices) + " devices ";
  if (factors.size() == 1)
    return request +
           (devices % factors.front() != 0
                ? "does not divide them into identical pipelines"
                : "plans " + std::to_string(factors.front()) +
                      " identical pipelines of " +
                      std::to_string(devices / factors.front()) + " device(s)");
  ::ftpipe::schedule::ReplicaLayout layout;
  layout.replicas.assign(factors.begin(), factors.end());
  if (layout.processes() != devices)
    return request + "cannot run it: the factors add up to " +
           std::to_string(layout.processes()) +
           "; use --devices=" + std::to_string(layout.processes());
  return request + "plans " + std::to_string(layout.devices()) +
         " devices run as those processes";
}

/// The replicas the plan in `module` records (none when it records none).
::ftpipe::schedule::ReplicaLayout plannedReplicas(ModuleOp module,
                                                  int64_t planDevices) {
  auto plan = module->getAttrOfType<ft::PlanAttr>("ftpipe.plan");
  if (!plan || plan.getReplicas().empty())
    return ::ftpipe::schedule::ReplicaLayout::none(planDevices);
  ::ftpipe::schedule::ReplicaLayout layout;
  layout.replicas.assign(plan.getReplicas().begin(), plan.getReplicas().end());
  return layout;
}

/// The layout of a module not partitioned here, on --devices processes: its
/// plan's own replicas, or --replicas (W or a factor per device) for its
/// plan's devices (its hardware's; without a plan, --devices / W or one
/// per factor).
FailureOr<::ftpipe::schedule::ReplicaLayout> givenLayout(ModuleOp module) {
  using ::ftpipe::schedule::ReplicaLayout;
  auto plan = module->getAttrOfType<ft::PlanAttr>("ftpipe.plan");
  auto fail = [&](const llvm::Twine &why) {
    emitError(module.getLoc()) << "ftpipe-compile: " << why;
    return failure();
  };
  if (plan && !plan.getReplicas().empty()) {
    ReplicaLayout own = plannedReplicas(module, 0);
    if (!replicas.isNone())
      return fail("--replicas=" + replicas.str() +
                  " but the plan has its own replicas " + own.str());
    if (devices.getNumOccurrences() && devices != own.processes())
      return fail("--devices counts processes: the plan's replicas " +
                  own.str() + " run " + llvm::Twine(own.processes()) +
                  "; use --devices=" + llvm::Twine(own.processes()));
    return own;
  }
  if (replicas.isNone())
    return ReplicaLayout::none(devices);
  llvm::ArrayRef<int64_t> factors = replicas.requested();
  int64_t planDevices = 0;
  if (plan) {
    FailureOr<::ftpipe::partition::Hardware> hw = ft::readHardware(module);
    if (failed(hw))
      return failure();
    planDevices = hw->numDevices();
  } else if (factors.size() == 1) {
    if (devices % factors.front() != 0)
      return fail("--devices counts processes: " + llvm::Twine(devices) +
                  " devices cannot run " + llvm::Twine(factors.front()) +
                  " identical pipelines");
    planDevices = devices / factors.front();
  } else {
    planDevices = int64_t(factors.size());
  }
  llvm::Expected<ReplicaLayout> layout =
      ::ftpipe::schedule::parseReplicas(replicas.str(), planDevices);
  if (!layout)
    return fail("--" + llvm::toString(layout.takeError()));
  if (layout->processes() == devices)
    return std::move(*layout);
  if (factors.size() == 1)
    return fail(
        "--devices counts processes: " + llvm::Twine(devices) +
        " devices cannot hold " + llvm::Twine(factors.front()) +
        " replicas of a " + llvm::Twine(planDevices) +
        "-device pipeline; use --devices=" + llvm::Twine(layout->processes()));
  return fail("--devices counts processes: the replicas " + layout->str() +
              " of the plan's " + llvm::Twine(planDevices) + " devices run " +
              llvm::Twine(layout->processes()) +
              " processes; use --devices=" + llvm::Twine(layout->processes()));
}

/// Partitions `module` (on --devices devices, with --replicas: then
/// `layout` becomes the plan's) unless it has a plan, and turns it into
/// per-device stage programs; `setup` becomes what the plan records (with
/// --sync-schedule, that schedule). A plan made already is checked for
/// memory as `layout` (the passes check their own).
LogicalResult
buildStagePrograms(ModuleOp module, ::ftpipe::schedule::TrainingSetup &setup,
                   ::ftpipe::schedule::ReplicaLayout &layout,
                   std::vector<::ftpipe::schedule::DeviceMemoryInputs> &memory,
                   std::vector<PlannedStage> &stages, Progress &progress) {
  bool partitioned = !module->hasAttr("ftpipe.plan");
  if (partitioned) {
    progress.start("partition (" + std::to_string(devices) + " devices)");
    ft::PartitionPipelineOptions options;
    options.hardware = hardware;
    options.devices = devices;
    options.method = method;
    options.replicas = replicas;
    options.syncSchedule = syncSchedule;
    options.setup = setup;
    options.profile = profile;
    if (failed(runPipeline(module, progress, [&](OpPassManager &pm) {
          ft::buildPartitionPipeline(pm, options);
        }))) {
      if (!replicas.requested().empty())
        llvm::errs() << "ftpipe-compile: note: " + describeRequest() + "\n";
      return failure();
    }
    setup = module->getAttrOfType<ft::TrainingAttr>(ft::TrainingAttr::kName)
                .getSetup();
    layout = plannedReplicas(module, devices);
    progress.done();
  }
  progress.start("memory of the plan");
  FailureOr<PlanFacts> facts =
      readPlanFacts(module, setup, layout, /*checkPlan=*/!partitioned);
  if (failed(facts))
    return progress.fail();
  memory = std::move(facts->memory);
  stages = std::move(facts->stages);
  progress.done();
  progress.start("stage programs (outline, differentiate, split)");
  if (failed(runPipeline(module, progress, [&](OpPassManager &pm) {
        ft::buildStageProgramPasses(pm, setup.recompute, /*function=*/"",
                                    indexGuards);
      })))
    return failure();
  progress.done();
  return success();
}

/// The module of one device: its entry points and the private declarations.
OwningOpRef<ModuleOp> extractDevice(ModuleOp module, int64_t device) {
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto function : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (!function.isPrivate() && ft::getEntryDevice(function) != device)
      function.erase();
  // The helpers that only other devices' entry points call go too.
  PassManager pm(module.getContext());
  pm.addPass(createSymbolDCEPass());
  (void)pm.run(*copy);
  return copy;
}

std::string artifactName(int64_t device) {
  return "device" + std::to_string(device) + ".so";
}

std::string targetName() { return target == Target::CUDA ? "cuda" : "cpu"; }

/// The peak heap bytes ftpipe-record-peak-memory recorded in a lowered
/// device module, by entry point.
std::map<std::string, int64_t> recordedPeaks(ModuleOp module) {
  constexpr llvm::StringLiteral prefix = "ftpipe_peak_bytes_";
  std::map<std::string, int64_t> peaks;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getSymName().starts_with(prefix) || !global.getValueOrNull())
      continue;
    std::optional<int64_t> bytes;
    if (auto value = dyn_cast<IntegerAttr>(global.getValueOrNull()))
      bytes = value.getInt();
    else if (auto value =
                 dyn_cast<DenseIntElementsAttr>(global.getValueOrNull());
             value && value.isSplat())
      bytes = value.getSplatValue<APInt>().getSExtValue();
    if (bytes)
      peaks[global.getSymName().drop_front(prefix.size()).str()] = *bytes;
  }
  return peaks;
}

/// Lowers, compiles and links the module of one device, given as bytecode,
/// in a context of its own: devices run in parallel.
LogicalResult compileDevice(const DialectRegistry &registry,
                            const std::string &bytecode, int64_t device,
                            std::map<std::string, int64_t> &peaks) {
  Progress progress;
  std::string prefix = "device " + std::to_string(device) + ": ";
  progress.start(prefix + "lower to LLVM (" + targetName() + ")");
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  OwningOpRef<ModuleOp> deviceModule =
      parseSourceString<ModuleOp>(bytecode, ParserConfig(&context));
  if (!deviceModule)
    return progress.fail("cannot read the device's module back");
  if (failed(runPipeline(*deviceModule, progress, [&](OpPassManager &pm) {
        if (target == Target::CUDA) {
          ft::CUDALoweringOptions lowering;
          lowering.chip = cudaChip;
          lowering.toolkitPath = cudaToolkit;
          lowering.blas = blas;
          lowering.fuse = fuse;
          lowering.outlineLayers = outlineLayers;
          ft::buildCUDALoweringPipeline(pm, lowering);
        } else {
          ft::CPULoweringOptions lowering;
          lowering.blas = blas;
          lowering.fuse = fuse;
          lowering.outlineLayers = outlineLayers;
          ft::buildCPULoweringPipeline(pm, lowering);
        }
      })))
    return failure();
  progress.done();
  peaks = recordedPeaks(*deviceModule);

  progress.start(prefix + "emit object (-O" + std::to_string(optLevel) +
                 ", host CPU)");
  std::string object = outputDir + "/device" + std::to_string(device) + ".o";
  std::string error;
  if (failed(ft::emitHostObject(*deviceModule, object, optLevel, error)))
    return progress.fail(error);
  progress.done();

  progress.start(prefix + "link " + artifactName(device));
  ft::HostLinkOptions link;
  link.runtimeDir = runtimeDir;
  link.mlirLibDir = FTPIPE_MLIR_LIB_DIR;
  if (target == Target::CUDA)
    link.runtimeLibraries = {"FTPipeCUDARuntime", "FTPipeStageABI"};
  if (failed(ft::linkHostSharedLibrary(
          {object}, outputDir + "/" + artifactName(device), link, error)))
    return progress.fail(error);
  llvm::sys::fs::remove(object);
  progress.done();
  return success();
}

/// Sets the manifest's `device_memory`: per device what the plan counts for
/// `setup` and what it fixes; by the runtime's rules for any list of the
/// kind (schedule::runtimeMemory) or, given the stages, replayed over the
/// kind's lists (schedule::replayedMemory, as ftpipe-run counts it).
void setDeviceMemory(
    ::ftpipe::runtime::ManifestFile &manifest,
    llvm::ArrayRef<::ftpipe::schedule::DeviceMemoryInputs> memory,
    const ::ftpipe::schedule::TrainingSetup &setup,
    const ::ftpipe::schedule::StageGraph *graph = nullptr) {
  std::vector<::ftpipe::schedule::DeviceMemory> counted;
  if (graph)
    counted = ::ftpipe::schedule::replayedMemory(
        *graph, memory, setup,
        manifest.replicas ? llvm::ArrayRef(manifest.replicas->replicas)
                          : llvm::ArrayRef<int64_t>());
  else
    for (const ::ftpipe::schedule::DeviceMemoryInputs &inputs : memory)
      counted.push_back(::ftpipe::schedule::runtimeMemory(inputs, setup));
  manifest.deviceMemory.clear();
  for (auto [device, inputs] : llvm::enumerate(memory))
    manifest.deviceMemory.push_back({int64_t(device), counted[device], inputs});
}

LogicalResult writeManifest(const ::ftpipe::runtime::ManifestFile &manifest,
                            Progress &progress) {
  std::string error;
  auto file = openOutputFile(outputDir + "/manifest.json", &error);
  if (!file)
    return progress.fail(error);
  file->os() << llvm::formatv("{0:2}", ::ftpipe::runtime::toJSON(manifest))
             << "\n";
  file->keep();
  return success();
}

/// Rewrites the manifest's `device_memory` with what the compiled code keeps
/// (runtime::compiledMemoryInputs: the stages' saved values, messages, data
/// and the peaks recorded in `peaks`), so that the plan's figure is the
/// bound the runtime's memory stays under.
LogicalResult
recordCompiledMemory(::ftpipe::runtime::ManifestFile manifest,
                     std::vector<::ftpipe::schedule::DeviceMemoryInputs> memory,
                     const std::vector<std::map<std::string, int64_t>> &peaks,
                     const ::ftpipe::schedule::TrainingSetup &setup) {
  Progress progress;
  progress.start("memory of the compiled code");
  llvm::Expected<::ftpipe::runtime::ArtifactManifest> read =
      ::ftpipe::runtime::readManifest(outputDir);
  if (!read)
    return progress.fail(llvm::toString(read.takeError()));
  auto peakOf = [&](const std::string &entry) -> std::optional<int64_t> {
    auto it = read->entryPoints.find(entry);
    if (it == read->entryPoints.end())
      return std::nullopt;
    const std::map<std::string, int64_t> &device = peaks[it->second.device];
    auto peak = device.find(entry);
    if (peak == device.end())
      return std::nullopt;
    return peak->second;
  };
  if (llvm::Error error =
          ::ftpipe::runtime::compiledMemoryInputs(*read, peakOf, memory))
    return progress.fail(llvm::toString(std::move(error)));
  ::ftpipe::schedule::StageGraph graph = read->stageGraph();
  setDeviceMemory(manifest, memory, setup, &graph);
  if (failed(writeManifest(manifest, progress)))
    return failure();
  progress.done();
  // The plan was checked on the cost model's figures; ftpipe-run checks
  // these, by the same rule, before it starts.
  ::ftpipe::schedule::ReplicaLayout layout =
      manifest.replicas
          ? *manifest.replicas
          : ::ftpipe::schedule::ReplicaLayout::none(int64_t(memory.size()));
  ::ftpipe::schedule::MemoryCheck compiled =
      ::ftpipe::schedule::checkMemory(graph, memory, setup, layout);
  if (!compiled.fits())
    llvm::errs() << "ftpipe-compile: warning: the compiled code " +
                        compiled.failure +
                        "; ftpipe-run refuses it without "
                        "--allow-over-budget\n";
  return success();
}

/// This compile's command for the manifest (`compile`): set by main.
::ftpipe::runtime::ManifestCompile compileCommand;

/// The model (made absolute) and the arguments of `argv` but the model,
/// `-o` and `--profile`: what re-planning passes to ftpipe-compile again.
::ftpipe::runtime::ManifestCompile recordCommand(int argc, char **argv) {
  ::ftpipe::runtime::ManifestCompile command;
  llvm::SmallString<256> model(inputFile.getValue());
  llvm::sys::fs::make_absolute(model);
  command.model = model.str().str();
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    llvm::StringRef name = arg.ltrim('-').split('=').first;
    bool dashed = arg.starts_with("-") && arg.size() > 1;
    if (dashed && (name == "o" || name == "profile")) {
      if (!arg.contains('='))
        ++i;
      continue;
    }
    if (arg == inputFile.getValue())
      continue;
    command.arguments.push_back(arg.str());
  }
  return command;
}

LogicalResult compile(MLIRContext &context, const DialectRegistry &registry) {
  Progress progress;
  progress.start("parse " + inputFile);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  {
    ft::ParseGuard guard(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(
        inputFile, sourceMgr,
        ParserConfig(&context, /*verifyAfterParse=*/false));
  }
  if (!module || failed(verify(*module)))
    return progress.fail();
  progress.done();

#ifndef FTPIPE_HAVE_CUDA_RUNTIME
  if (target == Target::CUDA)
    return progress.fail("the CUDA target needs lib/Runtime's "
                         "FTPipeCUDARuntime, which this build lacks (no CUDA "
                         "toolkit at configure time)");
#endif
  if (forwardOnly && devices != 1)
    return progress.fail("--forward-only compiles for one device");
  if (!profile.empty() && (forwardOnly || (*module)->hasAttr("ftpipe.plan") ||
                           hasEntryPoints(*module)))
    return progress.fail("--profile prices the partitioning, and this model "
                         "is not partitioned here (it has a plan already, or "
                         "--forward-only)");
  FailureOr<::ftpipe::schedule::TrainingSetup> setup = resolveSetup(*module);
  if (failed(setup))
    return progress.fail();
  // A partitioner partitions the model here: then --replicas plans
  // replicas (recorded for a re-compile: the manifest's plans_replicas).
  compileCommand.plansReplicas = !forwardOnly &&
                                 !(*module)->hasAttr("ftpipe.plan") &&
                                 !hasEntryPoints(*module);
  if (replicas.isAutomatic() && !compileCommand.plansReplicas)
    return progress.fail("--replicas=auto plans while partitioning, and this "
                         "model is not partitioned here (it has a plan "
                         "already, or --forward-only)");
  // The processes each plan device runs as: the passes' choice when they
  // partition here, else the plan's own or --replicas for its devices.
  progress.start("replicas");
  FailureOr<::ftpipe::schedule::ReplicaLayout> layout =
      compileCommand.plansReplicas
          ? ::ftpipe::schedule::ReplicaLayout::none(devices)
          : givenLayout(*module);
  if (failed(layout))
    return progress.fail();
  if (!freeze.empty()) {
    progress.start("freeze " + freeze);
    if (hasEntryPoints(*module))
      return progress.fail("--freeze needs the model function, not entry "
                           "points");
    if (failed(ft::freezeParameters(*module, freeze)))
      return progress.fail();
    progress.done();
  }
  std::vector<::ftpipe::schedule::DeviceMemoryInputs> memory;
  std::vector<PlannedStage> stages;
  if (!forwardOnly && !hasEntryPoints(*module))
    if (failed(buildStagePrograms(*module, *setup, *layout, memory, stages,
                                  progress)))
      return failure();
  int64_t planDevices = layout->devices();

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
    progress.start("create " + outputDir);
    return progress.fail(ec.message());
  }
  progress.start("manifest");
  FailureOr<::ftpipe::runtime::ManifestFile> manifest =
      ft::buildManifest(*module, targetName(), planDevices,
                        [](int64_t d) { return artifactName(d); });
  if (failed(manifest))
    return progress.fail();
  manifest->memory = target == Target::CUDA ? "cuda-device" : "host";
  manifest->training = *setup;
  for (::ftpipe::runtime::ManifestStage &stage : manifest->stages)
    if (stage.id < int64_t(stages.size())) {
      stage.ops = stages[stage.id].ops;
      stage.recomputes = stages[stage.id].recomputes;
      stage.forwardMs = stages[stage.id].forwardMs;
      stage.backwardMs = stages[stage.id].backwardMs;
      stage.weightMs = stages[stage.id].weightMs;
    }
  manifest->compile = compileCommand;
  if (layout->replicated())
    manifest->replicas = *layout;
  // What the plan counted per device, and what it fixes, so that the
  // runtime can count it again for the setup it runs.
  // (The cost model's figures until the devices' code is compiled.)
  setDeviceMemory(*manifest, memory, *setup);
  if (failed(writeManifest(*manifest, progress)))
    return failure();
  progress.done();

  // Each device's module travels as bytecode to a context of its own.
  std::vector<std::string> bytecode(planDevices);
  for (int64_t device = 0; device < planDevices; ++device) {
    OwningOpRef<ModuleOp> deviceModule = extractDevice(*module, device);
    if (keepIR) {
      std::string path =
          outputDir + "/device" + std::to_string(device) + ".mlir";
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      deviceModule->print(os, OpPrintingFlags().enableDebugInfo());
    }
    llvm::raw_string_ostream os(bytecode[device]);
    if (failed(writeBytecodeToFile(*deviceModule, os))) {
      progress.start("device " + std::to_string(device) + ": write bytecode");
      return progress.fail();
    }
  }
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  std::vector<char> failed(planDevices, 0);
  std::vector<std::map<std::string, int64_t>> peaks(planDevices);
  for (int64_t device = 0; device < planDevices; ++device)
    pool.async([&, device] {
      failed[device] = mlir::failed(
          compileDevice(registry, bytecode[device], device, peaks[device]));
    });
  pool.wait();
  if (llvm::is_contained(failed, 1))
    return failure();
  // Targets whose lowering records no peaks (CUDA) keep the cost model's.
  if (memory.empty() ||
      llvm::all_of(peaks, [](const auto &device) { return device.empty(); }))
    return success();
  return recordCompiledMemory(std::move(*manifest), memory, peaks, *setup);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  ft::registerAllFTPipe(registry);
  ft::registerCPULoweringDialects(registry);
  ft::registerCUDALoweringDialects(registry);
  ft::registerFTPipeConversions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "FTPipe compiler: model IR to one artifact per device and a manifest\n");
  compileCommand = recordCommand(argc, argv);
  // Once, before devices compile in parallel: registering a target is not
  // thread-safe (later calls return early).
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  MLIRContext context(registry);
  // The setup is recorded as #ftpipe.training even in a module that does not
  // mention the dialect.
  context.loadDialect<ft::FTPipeDialect>();
  return failed(compile(context, registry)) ? 1 : 0;
}
