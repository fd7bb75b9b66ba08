//===- models.cpp - Partition the paper's models with every method -------===//
//
// The issue-5 benchmark: for BERT-large, GPT2-XL, T5-3B (generated in
// process) and the external LLaMA-2-7B file, on one hardware preset (default
// FTPipe's 8 x RTX 2080 Ti), runs Seq-Pipe dp, Seq-Pipe greedy and Mixed-Pipe,
// with recomputation everywhere (FTPipe's setup) and chosen per stage
// (recompute=auto), re-verifies every plan, and prints one table: stages,
// stages that recompute, busiest device / mean, / lower bound, async time per
// micro-batch by the objective and by the simulator, GPipe time per
// mini-batch, the largest per-device send volume, memory headroom and
// partition time; then Mixed-Pipe's gain over seq dp.
// Not a test: it prints measured figures.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/ModelGen/ModelGen.h"
#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"

#include <chrono>
#include <ctime>
#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::ftpipe;
namespace partition = ::ftpipe::partition;
namespace schedule = ::ftpipe::schedule;

static llvm::cl::opt<std::string>
    hardwareName("hardware", llvm::cl::desc("Hardware preset or JSON file"),
                 llvm::cl::init("rtx2080ti-pcie-x8"));
static llvm::cl::list<std::string>
    modelNames("models", llvm::cl::desc("Bundled models to partition"),
               llvm::cl::CommaSeparated);
static llvm::cl::opt<std::string>
    llamaPath("llama", llvm::cl::desc("LLaMA-2-7B forward IR (empty: skip)"),
              llvm::cl::init(FTPIPE_DEFAULT_LLAMA_PATH));
static llvm::cl::opt<unsigned>
    dpMaxOps("dp-max-ops",
             llvm::cl::desc("Largest graph on which Seq-Pipe dp runs"),
             llvm::cl::init(20000));

namespace {
/// One method's outcome on one model.
struct Row {
  std::string model, setup, method;
  std::optional<partition::PlanMetrics> metrics;
  /// Simulated async time per micro-batch and GPipe time per mini-batch.
  double asyncSimMs = 0.0, gpipeMs = 0.0, seconds = 0.0;
  /// CPU time of the partitioning, summed over its threads.
  double cpuSeconds = 0.0;
  std::string failure;
  /// What each device holds, for encoder-decoder models.
  std::string composition;
  /// The lower bound that accounts for memory, and replicated ops.
  double memoryBoundMs = 0.0;
  size_t replicated = 0;
  /// Weights' transposes costed as folded into a matmul of another stage.
  size_t apartTransposes = 0;
};

/// A fine-tuning setup to partition for, and where stages recompute.
struct Setup {
  std::string name;
  partition::ObjectiveConfig config;
  partition::RecomputeMode recompute = partition::RecomputeMode::Always;
};
} // namespace

/// FTPipe's fine-tuning setup (docs/FineTuningSetup.md): async, one weight
/// version, recomputation, M = 8, and the optimizer of FTPipe's own configs:
/// Adam(W) for BERT and GPT-2, Adafactor for T5.
static partition::ObjectiveConfig
fineTuningSetup(schedule::Optimizer optimizer) {
  partition::ObjectiveConfig config;
  config.schedule = schedule::Kind::Async;
  config.versioning = schedule::WeightVersions::None;
  config.recompute = true;
  config.optimizer = optimizer;
  config.microBatches = 8;
  return config;
}

/// For encoder-decoder graphs (scopes with `[encoder]` and `[decoder]`): per
/// device, the compute of encoder and decoder ops and the parameters it
/// holds. This is where Mixed-Pipe's gain on T5 comes from: it can pair a
/// compute-heavy encoder chunk with a parameter-heavy decoder chunk on each
/// GPU, which contiguous stages cannot. Empty for other graphs.
static std::string describeEncoderDecoder(const partition::Graph &graph,
                                          const partition::Plan &plan,
                                          const partition::PlanMetrics &m) {
  size_t numDevices = m.devices.size();
  std::vector<double> encoder(numDevices, 0.0), decoder(numDevices, 0.0);
  bool any = false;
  for (partition::NodeId n = 0; n < graph.numNodes(); ++n) {
    llvm::StringRef scope = graph.scope(n);
    bool enc = scope.contains("[encoder]"), dec = scope.contains("[decoder]");
    any |= enc || dec;
    double ms = graph.cost(n).fwdMs + graph.cost(n).bwdMs;
    partition::DeviceId d = plan.stageDevice[plan.nodeStage[n]];
    (enc ? encoder : dec ? decoder : encoder)[d] += enc || dec ? ms : 0.0;
  }
  if (!any)
    return "";
  std::string text;
  for (size_t d = 0; d < numDevices; ++d)
    text +=
        llvm::formatv("    device {0}: encoder {1,7:f1} ms, decoder {2,7:f1} "
                      "ms, parameters {3:f2} GiB, memory {4:f2} GiB\n",
                      d, encoder[d], decoder[d],
                      double(m.devices[d].paramBytes) / (1ull << 30),
                      double(m.devices[d].memoryBytes) / (1ull << 30))
            .str();
  return text;
}

static Row runMethod(StringRef model, StringRef setup, StringRef method,
                     const OpGraph &opGraph, const partition::Graph &graph,
                     const partition::Hardware &hw,
                     const partition::ObjectiveConfig &config,
                     std::function<llvm::Expected<partition::Plan>()> solve) {
  Row row;
  row.model = model.str();
  row.setup = setup.str();
  row.method = method.str();
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpuStart = std::clock();
  llvm::Expected<partition::Plan> plan = solve();
  row.cpuSeconds = double(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  row.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!plan) {
    row.failure = llvm::toString(plan.takeError());
    return row;
  }
  // Every plan is re-verified independently before it is reported.
  if (llvm::Error error = partition::verifyPlan(graph, hw, *plan, config)) {
    row.failure = "INVALID PLAN: " + llvm::toString(std::move(error));
    return row;
  }
  llvm::Expected<partition::PlanMetrics> metrics =
      partition::evaluatePlan(graph, hw, *plan, config);
  partition::ObjectiveConfig gpipe = config;
  gpipe.schedule = schedule::Kind::GPipe;
  llvm::Expected<partition::SimResult> sim =
      partition::simulatePlan(graph, hw, *plan, gpipe, /*recordEvents=*/false);
  partition::ObjectiveConfig async = config;
  async.schedule = schedule::Kind::Async;
  llvm::Expected<partition::SimResult> asyncSim =
      partition::simulatePlan(graph, hw, *plan, async, /*recordEvents=*/false);
  if (!metrics || !sim || !asyncSim) {
    row.failure = llvm::toString(
        llvm::joinErrors(llvm::joinErrors(metrics.takeError(), sim.takeError()),
                         asyncSim.takeError()));
    return row;
  }
  row.metrics = std::move(*metrics);
  row.gpipeMs = sim->msPerMiniBatch;
  row.asyncSimMs = asyncSim->msPerMicroBatch;
  row.composition = describeEncoderDecoder(graph, *plan, *row.metrics);
  row.replicated = llvm::count(plan->nodeReplicated, true);
  row.apartTransposes = findApartTransposes(opGraph, *plan).count;
  return row;
}

/// Annotates costs and runs the three methods on `module` for each setup.
static LogicalResult partitionModel(ModuleOp module, StringRef model,
                                    ArrayRef<Setup> setups, bool markParams,
                                    std::vector<Row> &rows) {
  PassManager pm(module.getContext());
  if (markParams)
    pm.addNestedPass<func::FuncOp>(createMarkParamsPass());
  AnnotateCostsPassOptions annotate;
  annotate.hardware = hardwareName;
  pm.addPass(createAnnotateCostsPass(annotate));
  if (failed(pm.run(module)))
    return failure();
  FailureOr<func::FuncOp> func = getModelFunction(module, "");
  if (failed(func))
    return failure();
  FailureOr<OpGraph> opGraph = buildOpGraph(*func);
  FailureOr<partition::Hardware> hw = readHardware(module);
  if (failed(opGraph) || failed(hw))
    return failure();
  const partition::Graph &graph = opGraph->graph;

  auto planOf = [](auto result) -> llvm::Expected<partition::Plan> {
    if (!result)
      return result.takeError();
    return std::move(result->plan);
  };
  for (const Setup &setup : setups) {
    // As the passes do: cheap values replicated where that is faster, and
    // only seq-dp does not also plan for keeping everything under
    // recompute=auto.
    auto run = [&](StringRef method, auto solveOne) {
      rows.push_back(runMethod(
          model, setup.name, method, *opGraph, graph, *hw, setup.config, [&] {
            return partition::solvePartitioning(
                setup.recompute, /*replicate=*/true, /*forward=*/true, graph,
                *hw, setup.config, solveOne, method != "seq-dp");
          }));
      rows.back().memoryBoundMs = partition::memoryLowerBoundMs(
          graph, *hw, setup.config, setup.recompute);
    };
    if (graph.numNodes() <= dpMaxOps)
      run("seq-dp", [&](const partition::Graph &g,
                        const partition::ObjectiveConfig &config) {
        partition::SeqPipeConfig seq;
        seq.objective = config;
        return planOf(partition::seqPipeDP(g, *hw, seq));
      });
    run("seq-greedy", [&](const partition::Graph &g,
                          const partition::ObjectiveConfig &config) {
      partition::SeqPipeConfig seq;
      seq.objective = config;
      return planOf(partition::seqPipeGreedy(g, *hw, seq));
    });
    run("mixed-pipe", [&](const partition::Graph &g,
                          const partition::ObjectiveConfig &config) {
      partition::MixedPipeConfig mixed;
      mixed.objective = config;
      return planOf(partition::runMixedPipe(g, *hw, mixed));
    });
  }
  return success();
}

static void printRows(ArrayRef<Row> rows) {
  llvm::outs() << llvm::formatv(
      "{0,-18} {1,-16} {2,-10} {3,6} {4,4} {5,4} {6,5} {7,8} {8,7} {9,7} "
      "{10,11} {11,10} {12,7} {13,14} {14,10} {15,9} {16,7} {17,7}\n",
      "model", "setup", "method", "stages", "rc", "repl", "apart", "max/mean",
      "max/LB", "max/LBm", "async_ms/mb", "sim_ms/mb", "obj/sim",
      "gpipe_ms/minib", "send_GiB", "free_GiB", "time_s", "cpu_s");
  for (const Row &row : rows) {
    if (!row.metrics) {
      llvm::outs() << llvm::formatv("{0,-18} {1,-16} {2,-10} no plan "
                                    "({3:f2} s): {4}\n",
                                    row.model, row.setup, row.method,
                                    row.seconds, row.failure);
      continue;
    }
    const partition::PlanMetrics &m = *row.metrics;
    double headroom = 1e30, sent = 0.0;
    for (const partition::DeviceMetrics &d : m.devices) {
      headroom =
          std::min(headroom, (double(d.budgetBytes) - double(d.memoryBytes)) /
                                 double(1ull << 30));
      sent = std::max(sent, double(d.sentBytes) / double(1ull << 30));
    }
    size_t recomputing = llvm::count_if(
        m.stages, [](const partition::StageMetrics &s) { return s.recompute; });
    llvm::outs() << llvm::formatv(
        "{0,-18} {1,-16} {2,-10} {3,6} {4,4} {5,4} {6,5} {7,8:f3} {8,7:f3} "
        "{9,7:f3} {10,11:f2} {11,10:f2} {12,7:f3} {13,14:f1} {14,10:f2} "
        "{15,9:f2} {16,7:f3} {17,7:f3}\n",
        row.model, row.setup, row.method, m.stages.size(), recomputing,
        row.replicated, row.apartTransposes, m.imbalance,
        m.asyncMsPerMicroBatch / m.lowerBoundMs,
        m.asyncMsPerMicroBatch / row.memoryBoundMs, m.asyncMsPerMicroBatch,
        row.asyncSimMs, m.asyncMsPerMicroBatch / row.asyncSimMs, row.gpipeMs,
        sent, headroom, row.seconds, row.cpuSeconds);
  }
}

/// Mixed-Pipe's bottleneck against seq dp's, per model and setup, and for
/// encoder-decoder models what each device holds under both.
static void printGains(ArrayRef<Row> rows) {
  llvm::outs() << "\nMixed-Pipe vs Seq-Pipe dp (async time per micro-batch; "
                  "FTPipe reported a 5-19% lower bottleneck on T5-3B):\n";
  for (const Row &mixed : rows) {
    if (mixed.method != "mixed-pipe")
      continue;
    const Row *dp = nullptr;
    for (const Row &row : rows)
      if (row.model == mixed.model && row.setup == mixed.setup &&
          row.method == "seq-dp")
        dp = &row;
    if (!dp || !dp->metrics || !mixed.metrics) {
      llvm::outs() << llvm::formatv("  {0,-20} {1,-16} n/a (a method has no "
                                    "plan)\n",
                                    mixed.model, mixed.setup);
      continue;
    }
    double ratio =
        dp->metrics->asyncMsPerMicroBatch / mixed.metrics->asyncMsPerMicroBatch;
    llvm::outs() << llvm::formatv(
        "  {0,-20} {1,-16} seq-dp {2,9:f2} ms, mixed {3,9:f2} ms: "
        "{4:f3}x ({5:+f1}% lower bottleneck)\n",
        mixed.model, mixed.setup, dp->metrics->asyncMsPerMicroBatch,
        mixed.metrics->asyncMsPerMicroBatch, ratio,
        100.0 * (1.0 - 1.0 / ratio));
    if (!mixed.composition.empty())
      llvm::outs() << "    where the time goes, seq-dp (contiguous stages: "
                      "encoder-only and decoder-only GPUs):\n"
                   << dp->composition
                   << "    where the time goes, mixed-pipe (encoder and "
                      "decoder chunks share GPUs):\n"
                   << mixed.composition;
  }
}

/// Per model, setup and method: recompute=auto against recomputation
/// everywhere, by the objective and the simulator.
static void printRecomputeGains(ArrayRef<Row> rows) {
  llvm::outs() << "\nrecompute=auto vs recomputation everywhere (async time "
                  "per micro-batch, objective / simulated):\n";
  for (const Row &autoRow : rows) {
    StringRef setup = autoRow.setup;
    if (!setup.consume_back("+auto"))
      continue;
    const Row *always = nullptr;
    for (const Row &row : rows)
      if (row.model == autoRow.model && row.setup == setup &&
          row.method == autoRow.method)
        always = &row;
    if (!always || !always->metrics || !autoRow.metrics)
      continue;
    double a = always->metrics->asyncMsPerMicroBatch;
    double b = autoRow.metrics->asyncMsPerMicroBatch;
    llvm::outs() << llvm::formatv(
        "  {0,-20} {1,-12} {2,-10} {3,9:f2} -> {4,9:f2} ms ({5:+f1}%), "
        "simulated {6,9:f2} -> {7,9:f2} ms ({8:+f1}%)\n",
        autoRow.model, setup, autoRow.method, a, b, 100.0 * (b / a - 1.0),
        always->asyncSimMs, autoRow.asyncSimMs,
        100.0 * (autoRow.asyncSimMs / always->asyncSimMs - 1.0));
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "FTPipe benchmark: partition the paper's models\n");
  std::vector<std::string> models(modelNames.begin(), modelNames.end());
  if (models.empty())
    models = {"bert-large-uncased", "gpt2-xl", "t5-3b", "flan-t5-xl",
              "llama-2-7b"};

  DialectRegistry registry;
  registerModelGenDialects(registry);
  registry.insert<linalg::LinalgDialect, math::MathDialect>();
  registerFTPipeDialect(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  llvm::outs() << llvm::formatv(
      "hardware {0}; setup 'ftpipe' = FTPipe's: async 1F1B, one weight "
      "version, recomputation, M = 8, Adam for BERT/GPT-2/LLaMA and Adafactor "
      "for T5 (docs/FineTuningSetup.md); '+adam', '+sgd': another "
      "optimizer; '+auto': recompute=auto (rc: stages that recompute); "
      "repl: ops replicated where they are read; apart: weights' transposes "
      "costed as folded into a matmul that the plan puts in another stage "
      "(a copy the figures leave out); max/LBm: busiest over the "
      "lower bound with memory; "
      "sim_ms/mb: the simulated async time, obj/sim: the objective over it; "
      "send_GiB: the largest bytes a device sends per micro-batch; time_s, "
      "cpu_s: wall-clock and CPU seconds (summed over threads) of "
      "partitioning\n\n",
      hardwareName);
  std::vector<Row> rows;
  for (const std::string &name : models) {
    llvm::Expected<ModelConfig> config = loadModelConfig(name);
    if (!config) {
      llvm::errs() << name << ": " << llvm::toString(config.takeError())
                   << "\n";
      return 1;
    }
    llvm::Expected<OwningOpRef<ModuleOp>> module =
        generateModel(context, *config, ModelGenOptions());
    if (!module) {
      llvm::errs() << name << ": " << llvm::toString(module.takeError())
                   << "\n";
      return 1;
    }
    bool t5 = config->getFamily() == ModelFamily::T5;
    partition::ObjectiveConfig ftpipe = fineTuningSetup(
        t5 ? schedule::Optimizer::Adafactor : schedule::Optimizer::Adam);
    std::vector<Setup> setups = {
        {"ftpipe", ftpipe, partition::RecomputeMode::Always},
        {"ftpipe+auto", ftpipe, partition::RecomputeMode::Auto}};
    // T5-3B under Adam as well: the memory-bound case.
    if (t5) {
      partition::ObjectiveConfig adam =
          fineTuningSetup(schedule::Optimizer::Adam);
      setups.push_back({"ftpipe+adam", adam, partition::RecomputeMode::Always});
      setups.push_back(
          {"ftpipe+adam+auto", adam, partition::RecomputeMode::Auto});
    }
    if (failed(
            partitionModel(**module, name, setups, /*markParams=*/false, rows)))
      return 1;
  }
  if (!llamaPath.empty()) {
    OwningOpRef<ModuleOp> llama =
        parseSourceFile<ModuleOp>(llamaPath, &context);
    if (!llama)
      return 1;
    // 6.7 B parameters need 100 GiB with Adam's state: more than 8 x 11 GB.
    // Also shown with SGD, which fits.
    partition::ObjectiveConfig adam =
        fineTuningSetup(schedule::Optimizer::Adam);
    partition::ObjectiveConfig sgd = fineTuningSetup(schedule::Optimizer::SGD);
    std::vector<Setup> setups = {
        {"ftpipe", adam, partition::RecomputeMode::Always},
        {"ftpipe+sgd", sgd, partition::RecomputeMode::Always},
        {"ftpipe+sgd+auto", sgd, partition::RecomputeMode::Auto}};
    if (failed(partitionModel(*llama, "llama2-7b (ext.)", setups,
                              /*markParams=*/true, rows)))
      return 1;
  }
  printRows(rows);
  printGains(rows);
  printRecomputeGains(rows);
  return 0;
}
