//===- FuzzTarget.cpp - One fuzz input through FTPipe's front doors -------===//
//
// LLVMFuzzerTestOneInput: the first byte of an input picks what the rest is,
// and the rest goes where a user's file would go:
//  - 'I': IR, parsed, then each of several pass pipelines (every FTPipe pass)
//    on its own copy; a result that fails to verify or to parse back after
//    printing is a finding (abort);
//  - 'H': a cluster file, read, then used to cost and partition a small model;
//  - 'P': a profile, applied to a small model;
//  - 'G': a graph file;
//  - 'M': a model config, read, then generated and verified;
//  - 'S': a safetensors file (weights, data set, checkpoint file), parsed;
//    an accepted one must serialize and parse back to the same tensors, and
//    its values go through the runtime's value checks;
//  - 'A': an artifact manifest (manifest.json of ftpipe-compile), read,
//    then its entry points' values and its placement checked;
//  - 'C': a checkpoint manifest, loaded against the tiny MLP's identity;
//  - 'V': data values: the bytes as token ids of a [N, 16] i32 tensor,
//    checked against a table of 512 rows with ignore index -100 (a value
//    accepted must be inside it);
//  - 'T': a schedule in torch.distributed.pipelining's CSV (--schedule-file):
//    parsed (an accepted one must print and parse back the same), then
//    dry-run as ftpipe-run does, on the tiny MLP's stages under 1F1B and
//    ZB-H1;
//  - 'X': a checkpoint index (model.safetensors.index.json) beside three
//    shards: the weights read through it must be exactly those it names;
//  - 'F': a names file of ftpipe-compile --freeze=@FILE, applied to a model
//    of three parameters: an accepted one must freeze exactly the names it
//    lists;
//  - 'Z': a freeze schedule of ftpipe-run --freeze schedule=FILE, planned on
//    the tiny MLP's four layers: an accepted one must freeze a growing
//    prefix of them;
//  - 'O': ftpipe-run's run settings, `OPTION VALUE` lines (steps,
//    micro-batches, lr, weight-decay, warmup, timeout, failure-timeout),
//    checked as ftpipe-run checks them: accepted ones must be finite,
//    non-negative and within the schedule's limit.
// Anything refused with an error is fine; a crash, an abort or a hang is not.
// The same function serves libFuzzer and the project's own mutation driver
// (MutationDriver.cpp).
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/ModelGen/ModelConfig.h"
#include "FTPipe/ModelGen/ModelGen.h"
#include "FTPipe/ParseGuard.h"
#include "FTPipe/Partition/GraphIO.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Runtime/ABICheck.h"
#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/HFCheckpoint.h"
#include "FTPipe/Runtime/PlacementCheck.h"
#include "FTPipe/Runtime/RunFreezing.h"
#include "FTPipe/Runtime/RunLimits.h"
#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Runtime/TinyMlp.h"
#include "FTPipe/Schedule/TorchCsv.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Transforms/FreezeParameters.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

using namespace mlir;

namespace {
/// What the fuzz target needs once: the dialects and the small model that
/// cluster and profile inputs are tried on.
struct FuzzState {
  DialectRegistry registry;
  std::string smallModel;
  std::string scratchPath;

  FuzzState() {
    mlir::ftpipe::registerAllFTPipe(registry);
    mlir::ftpipe::registerModelGenDialects(registry);
    mlir::ftpipe::registerCPULoweringDialects(registry);
    mlir::ftpipe::registerCUDALoweringDialects(registry);
    mlir::ftpipe::registerFTPipeConversions();
    smallModel =
        "func.func @m(%x: tensor<8x16xf32>, %w: tensor<16x16xf32> "
        "{ftpipe.param, ftpipe.name = \"w\"}) -> tensor<8x16xf32> {\n"
        "  %0 = tosa.abs %x : (tensor<8x16xf32>) -> tensor<8x16xf32> "
        "loc(\"Model/x\")\n"
        "  %1 = tosa.reshape %0 {new_shape = array<i64: 1, 8, 16>} : "
        "(tensor<8x16xf32>) -> tensor<1x8x16xf32>\n"
        "  %2 = tosa.reshape %w {new_shape = array<i64: 1, 16, 16>} : "
        "(tensor<16x16xf32>) -> tensor<1x16x16xf32>\n"
        "  %3 = tosa.matmul %1, %2 : (tensor<1x8x16xf32>, "
        "tensor<1x16x16xf32>) -> tensor<1x8x16xf32> loc(\"Model/y\")\n"
        "  %4 = tosa.reshape %3 {new_shape = array<i64: 8, 16>} : "
        "(tensor<1x8x16xf32>) -> tensor<8x16xf32>\n"
        "  %5 = tosa.tanh %4 : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
        "  return %5 : tensor<8x16xf32>\n}\n";
    llvm::SmallString<128> path;
    llvm::sys::fs::createTemporaryFile("ftpipe-fuzz", "json", path);
    scratchPath = path.str().str();
  }
  ~FuzzState() {
    llvm::sys::fs::remove(scratchPath);
    llvm::sys::fs::remove(scratchPath + ".graph");
    if (!scratchDir.empty())
      llvm::sys::fs::remove_directories(scratchDir);
  }

  /// A directory for manifests (made on first use).
  std::string scratchDir;
  /// What a checkpoint must match: the tiny MLP's run (made on first use).
  std::optional<::ftpipe::runtime::RunIdentity> tinyIdentity;
  /// The tiny MLP's stages, that schedule files are dry-run on (made on
  /// first use).
  std::optional<::ftpipe::schedule::StageGraph> tinyStages;
  /// A checkpoint directory of three shards (made on first use) and the
  /// parameters of its model.
  std::string shardDir;
  std::vector<::ftpipe::runtime::ParameterInfo> shardParams;
};
} // namespace

static FuzzState &getState() {
  static FuzzState state;
  return state;
}

/// Stops the fuzz run: the input found a bug that returned normally.
[[noreturn]] static void finding(const llvm::Twine &what) {
  llvm::errs() << "ftpipe-fuzz: finding: " << what << "\n";
  std::abort();
}

/// Runs `pipeline` (the passes inside builtin.module, without that
/// wrapper: parsePassPipeline nests the text in the pass manager's anchor)
/// on a copy of `module`; on success the result must verify
/// and survive printing and parsing back. Returns whether it succeeded.
static bool runPipeline(MLIRContext &context, ModuleOp module,
                        llvm::StringRef pipeline) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(&context);
  if (failed(parsePassPipeline(pipeline, pm)))
    finding(llvm::Twine("bad pipeline text: ") + pipeline);
  if (failed(pm.run(*copy)))
    return false;
  if (failed(verify(*copy)))
    finding(llvm::Twine("pipeline '") + pipeline +
            "' succeeded with IR that does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os);
  if (!parseSourceString<ModuleOp>(text, &context))
    finding(llvm::Twine("pipeline '") + pipeline +
            "' wrote IR that does not parse back");
  return true;
}

/// The pipelines every IR input goes through: each FTPipe pass and named
/// pipeline of ftpipe-opt, alone and in the orders the tools use. The stage
/// passes start from the input's plan (a planned seed has one) or from a
/// fresh one, and end in the CPU lowering, as ftpipe-compile does.
static const char *const kPipelines[] = {
    "func.func(ftpipe-mark-params)",
    "func.func(ftpipe-freeze-params{regex=[0-9]}),"
    "ftpipe-stage-programs-pipeline{devices=2 method=seq-greedy}",
    "ftpipe-report",
    "ftpipe-seq-pipe{devices=2},ftpipe-refine",
    "ftpipe-annotate-costs,ftpipe-seq-pipe{method=greedy},ftpipe-report",
    "ftpipe-annotate-costs,ftpipe-seq-pipe{devices=2 method=greedy "
    "replicas=2},ftpipe-report",
    "ftpipe-annotate-costs,ftpipe-seq-pipe{devices=3 method=greedy "
    "replicas=1,2},ftpipe-report",
    "ftpipe-annotate-costs,ftpipe-auto-partition{quiet=true},ftpipe-report",
    "ftpipe-annotate-costs,ftpipe-coarsen,ftpipe-mixed-pipe,ftpipe-refine,"
    "ftpipe-assign-devices",
    "ftpipe-partition-pipeline{devices=2 quiet=true}",
    "ftpipe-mixed-pipe-pipeline{devices=2 stages=4}",
    "ftpipe-differentiate",
    "ftpipe-split-devices",
    "ftpipe-lower-transfers",
    "func.func(ftpipe-clamp-gather-indices),ftpipe-outline-stages,"
    "ftpipe-differentiate,ftpipe-split-devices,ftpipe-lower-transfers,"
    "ftpipe-lower-cpu,ftpipe-plain-glue",
    "ftpipe-stage-programs-pipeline{devices=2 method=seq-greedy},"
    "ftpipe-check-lowerable,ftpipe-drop-annotations,ftpipe-inline-single-calls,"
    "ftpipe-linalg-to-blas,"
    "func.func(ftpipe-fuse-elementwise)",
    "ftpipe-lower-cpu{blas=0}",
    "func.func(ftpipe-copy-globals-to-heap,ftpipe-map-parallel-loops-to-gpu),"
    "ftpipe-merge-gpu-modules",
    "ftpipe-lower-cuda",
    "func.func(ftpipe-strided-copies-to-loops,ftpipe-loop-locality,"
    "ftpipe-approximate-math)",
    "ftpipe-stage-programs-pipeline{devices=2 method=seq-greedy},"
    "ftpipe-lower-cpu{outline-layers=1}",
    "ftpipe-outline-layers{min-ops=2},"
    "func.func(ftpipe-early-deallocation),ftpipe-record-peak-memory",
    "func.func(ftpipe-clamp-gather-indices),ftpipe-trap-computed-indices,"
    "ftpipe-record-entry-abi",
    "ftpipe-outline-layers{min-ops=2},ftpipe-device-copies",
    "ftpipe-host-accesses-to-device",
    "func.func(ftpipe-reductions-innermost)",
    "func.func(ftpipe-elementwise-in-place,ftpipe-parallel-loops-outside)",
};

/// The pipeline that exports the graph of an IR input to `path`.
static std::string exportPipeline(llvm::StringRef path) {
  return llvm::formatv("ftpipe-annotate-costs,ftpipe-export-graph{{file={0}}",
                       path)
      .str();
}

/// Parses an IR input as the tools do (FTPipe/ParseGuard.h): the first
/// parse error ends the process, with status 0 (the input is refused, as an
/// input that fails to parse is), since MLIR 19's parser would go on to
/// crash after some errors. So each input runs in a process of its own.
static OwningOpRef<ModuleOp> parseInput(MLIRContext &context,
                                        llvm::StringRef text) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz-input",
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  {
    mlir::ftpipe::ParseGuard guard(sourceMgr, &context, /*exitCode=*/0,
                                   ftpipeFuzzShowDiagnostics ? llvm::errs()
                                                             : llvm::nulls());
    module = parseSourceFile<ModuleOp>(
        sourceMgr, ParserConfig(&context, /*verifyAfterParse=*/false));
  }
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

static void fuzzIR(MLIRContext &context, llvm::StringRef text) {
  OwningOpRef<ModuleOp> module = parseInput(context, text);
  if (!module)
    return;
  for (const char *pipeline : kPipelines)
    (void)runPipeline(context, *module, pipeline);
  // An exported graph must load back.
  std::string graphPath = getState().scratchPath + ".graph";
  if (runPipeline(context, *module, exportPipeline(graphPath))) {
    llvm::Expected<::ftpipe::partition::GraphWithPlan> graph =
        ::ftpipe::partition::loadGraphJSON(graphPath);
    if (!graph)
      finding("an exported graph does not load back: " +
              llvm::toString(graph.takeError()));
  }
}

std::vector<std::string> ftpipeFuzzPipelines() {
  std::vector<std::string> pipelines(std::begin(kPipelines),
                                     std::end(kPipelines));
  pipelines.push_back(exportPipeline("FILE"));
  return pipelines;
}

/// Writes `text` to the scratch file that cluster and profile inputs are
/// read from.
static void writeScratch(llvm::StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream os(getState().scratchPath, error);
  if (error)
    finding("cannot write the scratch file");
  os << text;
}

static void fuzzHardware(MLIRContext &context, llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json =
      ::ftpipe::support::parseBoundedJSON(text);
  if (!json)
    return llvm::consumeError(json.takeError());
  llvm::Expected<::ftpipe::partition::Hardware> hw =
      ::ftpipe::partition::hardwareFromJSON(*json);
  if (!hw)
    return llvm::consumeError(hw.takeError());
  writeScratch(text);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(getState().smallModel, &context);
  (void)runPipeline(
      context, *module,
      llvm::formatv("ftpipe-annotate-costs{{hardware={0}},"
                    "ftpipe-auto-partition{{quiet=true},ftpipe-report",
                    getState().scratchPath)
          .str());
}

static void fuzzProfile(MLIRContext &context, llvm::StringRef text) {
  writeScratch(text);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(getState().smallModel, &context);
  (void)runPipeline(context, *module,
                    llvm::formatv("ftpipe-annotate-costs{{profile={0}},"
                                  "ftpipe-seq-pipe{{devices=2},ftpipe-report",
                                  getState().scratchPath)
                        .str());
}

static void fuzzGraph(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json =
      ::ftpipe::support::parseBoundedJSON(text);
  if (!json)
    return llvm::consumeError(json.takeError());
  llvm::Expected<::ftpipe::partition::GraphWithPlan> graph =
      ::ftpipe::partition::graphFromJSON(*json);
  if (!graph)
    llvm::consumeError(graph.takeError());
}

static void fuzzModelConfig(MLIRContext &context, llvm::StringRef text) {
  llvm::Expected<mlir::ftpipe::ModelConfig> config =
      mlir::ftpipe::parseModelConfig(text, "fuzz");
  if (!config)
    return llvm::consumeError(config.takeError());
  llvm::Expected<OwningOpRef<ModuleOp>> module = mlir::ftpipe::generateModel(
      context, *config, mlir::ftpipe::ModelGenOptions());
  if (!module)
    return llvm::consumeError(module.takeError());
  if (failed(verify(**module)))
    finding("a generated model does not verify");
}

/// The scratch directory, made on first use.
static const std::string &scratchDirectory() {
  FuzzState &state = getState();
  if (state.scratchDir.empty()) {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("ftpipe-fuzz", path))
      finding("cannot make the scratch directory");
    state.scratchDir = path.str().str();
  }
  return state.scratchDir;
}

/// Writes `text` to `directory`/`name`.
static void writeFile(const std::string &directory, llvm::StringRef name,
                      llvm::StringRef text) {
  llvm::sys::fs::create_directories(directory);
  std::error_code error;
  llvm::raw_fd_ostream os(directory + "/" + name.str(), error);
  if (error)
    finding("cannot write a scratch file");
  os << text;
}

static void fuzzSafetensors(llvm::StringRef bytes) {
  namespace rt = ::ftpipe::runtime;
  llvm::Expected<rt::SafetensorsFile> file = rt::parseSafetensors(bytes, "f");
  if (!file)
    return llvm::consumeError(file.takeError());
  llvm::consumeError(rt::checkFinite(file->tensors));
  for (const auto &[name, tensor] : file->tensors)
    (void)rt::checkIndexValues({name, tensor.shape, tensor.type, 7, -100},
                               tensor);
  std::string again = rt::serializeSafetensors(file->tensors, file->metadata);
  llvm::Expected<rt::SafetensorsFile> back = rt::parseSafetensors(again, "g");
  if (!back)
    finding("an accepted safetensors file does not parse back: " +
            llvm::toString(back.takeError()));
  if (back->tensors.size() != file->tensors.size() ||
      back->metadata != file->metadata)
    finding("a safetensors file parses back to other tensors or metadata");
  for (const auto &[name, tensor] : file->tensors) {
    auto it = back->tensors.find(name);
    if (it == back->tensors.end() || it->second.bytes != tensor.bytes ||
        it->second.shape != tensor.shape || it->second.type != tensor.type)
      finding("tensor '" + name + "' does not parse back the same");
  }
}

static void fuzzArtifactManifest(llvm::StringRef text) {
  std::string directory = scratchDirectory() + "/artifacts";
  writeFile(directory, "manifest.json", text);
  llvm::Expected<::ftpipe::runtime::ArtifactManifest> manifest =
      ::ftpipe::runtime::readManifest(directory);
  if (!manifest)
    return llvm::consumeError(manifest.takeError());
  // What CompiledModel::open checks next, before any artifact is loaded.
  llvm::consumeError(::ftpipe::runtime::checkEntryValues(*manifest));
  llvm::consumeError(::ftpipe::runtime::checkPlacement(*manifest));
}

static void fuzzCheckpointManifest(llvm::StringRef text) {
  namespace rt = ::ftpipe::runtime;
  FuzzState &state = getState();
  if (!state.tinyIdentity) {
    rt::TinyMlpShape shape;
    std::unique_ptr<rt::PipelineModel> model =
        rt::createTinyMlpModel(shape, {0, 1, 2, 3});
    rt::ExecutorConfig config;
    state.tinyIdentity =
        rt::identifyRun(*model, config, rt::tinyMlpData(shape, 64, 2));
  }
  std::string directory = scratchDirectory() + "/checkpoint/steps-000001";
  writeFile(directory, "manifest.json", text);
  llvm::Expected<rt::LoadedCheckpoint> loaded =
      rt::loadCheckpoint(directory, *state.tinyIdentity);
  if (!loaded)
    llvm::consumeError(loaded.takeError());
}

static void fuzzDataValues(llvm::StringRef bytes) {
  namespace rt = ::ftpipe::runtime;
  int64_t samples = bytes.size() / 64;
  if (samples == 0)
    return;
  rt::Tensor ids(rt::DType::I32, {samples, 16});
  std::memcpy(ids.bytes.data(), bytes.data(), ids.bytes.size());
  rt::DataInputInfo input{"input_ids", {2, 16}, rt::DType::I32, 512, -100};
  bool refused = rt::checkIndexValues(input, ids).has_value();
  bool outside = false;
  for (int64_t i = 0; i < samples * 16; ++i) {
    int32_t value;
    std::memcpy(&value, ids.bytes.data() + 4 * i, 4);
    outside |= value != -100 && (value < 0 || value >= 512);
  }
  if (refused != outside)
    finding(outside ? "an id outside its table was accepted"
                    : "ids inside their table were refused");
}

static void fuzzTorchCsv(llvm::StringRef text) {
  namespace sched = ::ftpipe::schedule;
  namespace rt = ::ftpipe::runtime;
  llvm::Expected<sched::Schedule> parsed = sched::parseTorchCsv(text);
  if (!parsed)
    return llvm::consumeError(parsed.takeError());
  llvm::Expected<std::string> printed = sched::toTorchCsv(*parsed);
  if (!printed)
    finding("an accepted schedule file does not print: " +
            llvm::toString(printed.takeError()));
  llvm::Expected<sched::Schedule> back = sched::parseTorchCsv(*printed);
  if (!back)
    finding("a printed schedule file does not parse back: " +
            llvm::toString(back.takeError()));
  if (back->str() != parsed->str())
    finding("a schedule file parses back to other lists");
  FuzzState &state = getState();
  if (!state.tinyStages) {
    std::unique_ptr<rt::PipelineModel> model =
        rt::createTinyMlpModel(rt::TinyMlpShape(), {0, 1, 0, 1});
    state.tinyStages = model->stageGraph();
  }
  // What ftpipe-run does with --schedule-file (Run.cpp).
  for (sched::Kind kind : {sched::Kind::OneFOneB, sched::Kind::ZeroBubbleH1}) {
    sched::ScheduleConfig config;
    config.kind = kind;
    config.microBatches = 4;
    config.steps = 2;
    llvm::Expected<sched::Schedule> lists =
        rt::scheduleFromTorchCsv(text, config);
    if (!lists)
      finding("a parsed schedule file is refused when repeated: " +
              llvm::toString(lists.takeError()));
    llvm::Expected<sched::DryRunResult> checked =
        sched::dryRun(*state.tinyStages, config, *lists);
    if (!checked)
      llvm::consumeError(checked.takeError());
  }
}

/// The shard directory of 'X' inputs: three tensors in two shards (and a
/// third shard that the seed index does not name).
static void makeShards(FuzzState &state) {
  namespace rt = ::ftpipe::runtime;
  state.shardDir = scratchDirectory() + "/hf-checkpoint";
  llvm::sys::fs::create_directories(state.shardDir);
  auto tensor = [](rt::DType type, std::vector<int64_t> shape) {
    rt::Tensor t(type, shape);
    for (size_t i = 0; i < t.bytes.size(); ++i)
      t.bytes[i] = static_cast<uint8_t>(i % 7 + 0x38);
    return t;
  };
  rt::TensorMap shards[3];
  shards[0]["a.weight"] = tensor(rt::DType::BF16, {2, 3});
  shards[0]["b.bias"] = tensor(rt::DType::F16, {3});
  shards[1]["c.weight"] = tensor(rt::DType::F32, {3, 2});
  shards[2]["d.weight"] = tensor(rt::DType::BF16, {2});
  const char *names[3] = {"model-00001-of-00002.safetensors",
                          "model-00002-of-00002.safetensors",
                          "extra.safetensors"};
  for (int i = 0; i < 3; ++i)
    writeFile(state.shardDir, names[i],
              rt::serializeSafetensors(shards[i], {}));
  state.shardParams = {{"a.weight", {2, 3}, rt::DType::F32},
                       {"b.bias", {3}, rt::DType::F32},
                       {"c.weight", {3, 2}, rt::DType::F32},
                       {"d.weight", {2}, rt::DType::F32}};
}

static void fuzzCheckpointIndex(llvm::StringRef text) {
  namespace rt = ::ftpipe::runtime;
  FuzzState &state = getState();
  if (state.shardDir.empty())
    makeShards(state);
  writeFile(state.shardDir, rt::kHFIndexFile, text);
  llvm::Expected<rt::LoadedWeights> loaded =
      rt::readCheckpointWeights(state.shardDir, state.shardParams);
  if (!loaded)
    return llvm::consumeError(loaded.takeError());
  // Accepted: the index was read, so it is JSON with a weight_map, and the
  // weights are exactly the tensors it names.
  llvm::Expected<llvm::json::Value> json =
      ::ftpipe::support::parseBoundedJSON(text);
  if (!json)
    finding("an index that does not parse was accepted: " +
            llvm::toString(json.takeError()));
  const llvm::json::Object *map = json->getAsObject()->getObject("weight_map");
  if (map->size() != loaded->weights.size())
    finding("the weights read are not those the index names");
  for (const auto &entry : *map)
    if (!loaded->weights.count(entry.first.str()))
      finding("tensor '" + entry.first.str() +
              "' of the index was accepted but not read");
}

/// A model of three parameters for 'F' inputs, Hugging Face names as
/// ftpipe-model-gen writes them.
static const char *const kFreezeModel =
    "func.func @m(%x: tensor<4xf32>,\n"
    "  %a: tensor<4xf32> {ftpipe.param, ftpipe.name = "
    "\"bert.embeddings.word_embeddings.weight\"},\n"
    "  %b: tensor<4xf32> {ftpipe.param, ftpipe.name = "
    "\"bert.encoder.layer.0.output.dense.weight\"},\n"
    "  %c: tensor<4xf32> {ftpipe.param, ftpipe.name = \"qa_outputs.bias\"})"
    " -> tensor<4xf32> {\n"
    "  %0 = tosa.add %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  %1 = tosa.add %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  %2 = tosa.add %1, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %2 : tensor<4xf32>\n}\n";

static void fuzzFreezeNames(MLIRContext &context, llvm::StringRef text) {
  writeScratch(text);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      kFreezeModel, ParserConfig(&context, /*verifyAfterParse=*/true));
  if (!module)
    finding("the freeze model does not parse");
  if (failed(mlir::ftpipe::freezeParameters(*module,
                                            "@" + getState().scratchPath)))
    return;
  // Accepted: the frozen parameters are exactly the lines that are neither
  // blank nor comments.
  std::set<std::string> listed, frozen;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (!line.trim().empty() && !line.trim().starts_with("#"))
      listed.insert(line.trim().str());
  auto model = *module->getOps<func::FuncOp>().begin();
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    if (model.getArgAttr(i, "ftpipe.frozen"))
      frozen.insert(model.getArgAttrOfType<StringAttr>(i, "ftpipe.name").str());
  if (listed != frozen)
    finding("a names file froze other parameters than it lists");
  if (failed(verify(*module)))
    finding("a model with frozen parameters does not verify");
}

static void fuzzFreezeSchedule(llvm::StringRef text) {
  namespace rt = ::ftpipe::runtime;
  writeScratch(text);
  rt::TinyMlpShape shape;
  std::unique_ptr<rt::PipelineModel> model =
      rt::createTinyMlpModel(shape, {0, 1, 0, 1});
  // What ftpipe-run --freeze schedule=FILE does (Run.cpp).
  llvm::Expected<rt::RunFreezing> freezing =
      rt::planFreezing("schedule=" + getState().scratchPath, *model,
                       rt::tinyMlpData(shape, 16, 1), /*steps=*/8,
                       /*microBatches=*/2);
  if (!freezing)
    return llvm::consumeError(freezing.takeError());
  // Accepted: a prefix of the layers that only grows, step by step.
  const auto &points = freezing->depths.points;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].second > freezing->layers.size() ||
        (i && (points[i].first <= points[i - 1].first ||
               points[i].second < points[i - 1].second)))
      finding("a freeze schedule out of order or too deep was accepted");
  std::set<std::string> previous;
  std::vector<int64_t> steps = {0, 1, 7};
  for (const auto &point : points) {
    steps.push_back(point.first);
    if (point.first > 0)
      steps.push_back(point.first - 1);
    if (point.first < std::numeric_limits<int64_t>::max())
      steps.push_back(point.first + 1);
  }
  llvm::sort(steps);
  for (int64_t step : steps) {
    std::set<std::string> frozen = freezing->frozenAt(step, {});
    if (!std::includes(frozen.begin(), frozen.end(), previous.begin(),
                       previous.end()))
      finding("a freeze schedule thaws a layer at step " +
              std::to_string(step));
    if (frozen != ::ftpipe::schedule::frozenNames(
                      freezing->layers, freezing->depths.depthAt(step)))
      finding("the frozen set is not the schedule's prefix at step " +
              std::to_string(step));
    previous = std::move(frozen);
  }
}

static void fuzzRunSettings(llvm::StringRef text) {
  namespace rt = ::ftpipe::runtime;
  rt::ExecutorConfig config;
  config.schedule.steps = 2;
  config.schedule.microBatches = 4;
  double timeout = 60, failureTimeout = 5;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  // As llvm::cl parses them: a value that is not a number is refused there.
  for (llvm::StringRef line : lines) {
    auto [option, value] = line.trim().split(' ');
    value = value.trim();
    int64_t *integer = llvm::StringSwitch<int64_t *>(option)
                           .Case("steps", &config.schedule.steps)
                           .Case("micro-batches", &config.schedule.microBatches)
                           .Case("warmup", &config.optimizer.warmupSteps)
                           .Default(nullptr);
    double *real = llvm::StringSwitch<double *>(option)
                       .Case("lr", &config.optimizer.lr)
                       .Case("weight-decay", &config.optimizer.weightDecay)
                       .Case("timeout", &timeout)
                       .Case("failure-timeout", &failureTimeout)
                       .Default(nullptr);
    if ((integer && value.getAsInteger(0, *integer)) ||
        (real && !llvm::to_float(value, *real)))
      return;
  }
  const int64_t stages = 4; // the tiny MLP's
  if (llvm::Error error = rt::checkRunSettings(config, stages))
    return llvm::consumeError(std::move(error));
  if (llvm::Error error = rt::checkTimeout(timeout, "--timeout"))
    return llvm::consumeError(std::move(error));
  if (llvm::Error error = rt::checkTimeout(failureTimeout, "--failure-timeout"))
    return llvm::consumeError(std::move(error));
  // Accepted: numbers a run can use, and a schedule within its limit.
  const rt::OptimizerConfig &optimizer = config.optimizer;
  for (double value : {optimizer.lr, optimizer.weightDecay})
    if (!std::isfinite(value) || value < 0)
      finding("a learning rate or weight decay that is not a finite number "
              "of at least 0 was accepted");
  for (double value : {timeout, failureTimeout})
    if (!std::isfinite(value) || value <= 0 || value > rt::kMaxTimeoutSeconds)
      finding("a timeout outside (0, a week] was accepted");
  if (optimizer.warmupSteps < 0 || config.schedule.steps < 1 ||
      config.schedule.microBatches < 1 ||
      static_cast<__int128>(config.schedule.steps) *
              config.schedule.microBatches * stages * 2 >
          rt::kMaxScheduleActions)
    finding("run sizes outside their limits were accepted");
}

bool ftpipeFuzzShowDiagnostics = false;

int ftpipeFuzzOne(const uint8_t *data, size_t size) {
  FuzzState &state = getState(); // made once, before any fork
  if (size == 0)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data + 1), size - 1);
  MLIRContext context(state.registry);
  context.allowUnregisteredDialects();
  // Errors are the expected outcome of most inputs: keep them quiet.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
    return success(!ftpipeFuzzShowDiagnostics);
  });
  switch (data[0]) {
  case 'I':
    fuzzIR(context, text);
    break;
  case 'H':
    fuzzHardware(context, text);
    break;
  case 'P':
    fuzzProfile(context, text);
    break;
  case 'G':
    fuzzGraph(text);
    break;
  case 'M':
    fuzzModelConfig(context, text);
    break;
  case 'S':
    fuzzSafetensors(text);
    break;
  case 'A':
    fuzzArtifactManifest(text);
    break;
  case 'C':
    fuzzCheckpointManifest(text);
    break;
  case 'V':
    fuzzDataValues(text);
    break;
  case 'T':
    fuzzTorchCsv(text);
    break;
  case 'X':
    fuzzCheckpointIndex(text);
    break;
  case 'F':
    fuzzFreezeNames(context, text);
    break;
  case 'Z':
    fuzzFreezeSchedule(text);
    break;
  case 'O':
    fuzzRunSettings(text);
    break;
  default:
    break;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return ftpipeFuzzOne(data, size);
}
