//===- ManifestSchemaTest.cpp - manifest.json's toJSON and fromJSON -------===//
//
// A manifest with every field set to a value other than its default goes
// through toJSON, text and fromJSON unchanged (and readManifest accepts it);
// a field of the wrong type, or one that contradicts its neighbours, is
// refused with its path in the file.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ManifestSchema.h"
#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/RunSchedule.h"

#include "ManifestFiles.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;
namespace json = llvm::json;
namespace schedule = ftpipe::schedule;

namespace {

ManifestTensor tensor(std::vector<int64_t> shape, DType type = DType::BF16) {
  return {std::move(shape), type, {}, {}};
}

EntryValue value(EntryValue::Kind kind, std::string name, ManifestTensor t,
                 int64_t saved = -1) {
  return {kind, std::move(name), saved, std::move(t)};
}

/// Two stages on two devices, forward and backward each: every object of
/// the schema, no field at its default.
ManifestFile fullManifest() {
  using Kind = EntryValue::Kind;
  ManifestFile file;
  file.target = "cuda";
  file.memory = "cuda-device";
  file.devices = {{0, "device0.so", {0}}, {1, "device1.so", {1}}};
  file.stages = {{0, 0, "stage0_forward", "stage0_backward"},
                 {1, 1, "stage1_forward", "stage1_backward"}};
  file.stageOrder = {0, 1};
  EntryValue microbatch{Kind::Microbatch, "", -1, {{}, DType::I64, {}, {}}};
  ManifestTensor ids = tensor({2, 8}, DType::I32);
  file.entryPoints = {
      {"stage0_forward",
       "_mlir_ciface_stage0_forward",
       0,
       0,
       false,
       {microbatch, value(Kind::Param, "wte", tensor({16, 4})),
        value(Kind::Input, "input_ids", ids)},
       {value(Kind::Saved, "", tensor({2, 8, 4}), 0),
        value(Kind::Output, "", tensor({3}, DType::F64))},
       {{true, 1, 7, tensor({2, 8, 4})}}},
      {"stage0_backward",
       "_mlir_ciface_stage0_backward",
       0,
       0,
       true,
       {microbatch, value(Kind::Saved, "", tensor({2, 8, 4}), 0)},
       {value(Kind::Grad, "wte", tensor({16, 4}))},
       {{false, 1, 8, tensor({2, 8, 4})}}},
      {"stage1_forward",
       "_mlir_ciface_stage1_forward",
       1,
       1,
       false,
       {microbatch, value(Kind::Param, "wte", tensor({16, 4}))},
       {value(Kind::Loss, "", tensor({}, DType::F32)),
        value(Kind::Metric, "correct_tokens", tensor({}, DType::I32))},
       {{false, 0, 7, tensor({2, 8, 4})}}},
      {"stage1_backward",
       "_mlir_ciface_stage1_backward",
       1,
       1,
       true,
       {microbatch, value(Kind::Param, "wte", tensor({16, 4}))},
       {value(Kind::Grad, "wte", tensor({16, 4}))},
       {{true, 0, 8, tensor({2, 8, 4})}}}};
  file.tensors = {{0, 1, 7, tensor({2, 8, 4})}, {1, 0, 8, tensor({2, 8, 4})}};
  file.parameters["wte"] = {tensor({16, 4}), {0, 1}};
  ManifestInput input;
  static_cast<ManifestTensor &>(input) = ids;
  input.indexBound = 16;
  input.indexIgnored = -100;
  input.devices = {0};
  file.inputs["input_ids"] = input;
  file.loss = ManifestLoss{1, 1, 0, "stage1_forward"};
  file.training = schedule::TrainingSetup{
      schedule::Kind::OneFOneB, 3, schedule::Optimizer::SGD,
      schedule::WeightVersions::Stash, schedule::RecomputeMode::Never};
  for (int64_t device = 0; device < 2; ++device) {
    schedule::DeviceMemoryInputs inputs;
    inputs.stages = {{uint32_t(2 - device), uint64_t(100 + device), 40}};
    inputs.stages[0].forwardMessageBytes = 60;
    inputs.stages[0].backwardMessageBytes = 30;
    inputs.paramBytesByHeight = {0, 128, uint64_t(256 + device)};
    inputs.reservedBytes = 1024;
    inputs.budgetBytes = uint64_t(1) << 33;
    file.deviceMemory.push_back(
        {device, schedule::deviceMemory(inputs, *file.training), inputs});
  }
  file.replicas = schedule::ReplicaLayout{{2, 1}};
  return file;
}

/// `file` as ftpipe-compile writes it, parsed back.
json::Value written(const ManifestFile &file) {
  std::string text = llvm::formatv("{0:2}", toJSON(file)).str();
  llvm::Expected<json::Value> parsed = json::parse(text);
  EXPECT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  return parsed ? std::move(*parsed) : json::Value(nullptr);
}

/// fromJSON's error for `value`, or "" when it reads.
std::string readError(const json::Value &value) {
  ManifestFile file;
  json::Path::Root root("manifest");
  if (fromJSON(value, file, root))
    return "";
  return llvm::toString(root.getError());
}

json::Object &object(json::Value &value) { return *value.getAsObject(); }

/// `entry_points[entry].<group>[index]` of a written manifest.
json::Object &entryValue(json::Value &manifest, size_t entry,
                         llvm::StringRef group, size_t index) {
  json::Object &point =
      *(*object(manifest).getArray("entry_points"))[entry].getAsObject();
  return *(*point.getArray(group))[index].getAsObject();
}

TEST(ManifestSchema, FullManifestRoundTrips) {
  ManifestFile file = fullManifest();
  json::Value text = written(file);
  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(text, read, root)) << llvm::toString(root.getError());
  // Every field is back: written again, the same JSON.
  // (Compared as text, so that a failure shows the two.)
  EXPECT_EQ(llvm::formatv("{0:2}", toJSON(read)).str(),
            llvm::formatv("{0:2}", toJSON(file)).str());
  // And some of them looked at directly, in case toJSON forgot them twice.
  EXPECT_EQ(read.memory, "cuda-device");
  EXPECT_EQ(read.devices[1].stages, (std::vector<int64_t>{1}));
  EXPECT_EQ(read.entryPoints[0].arguments[2].tensor.type, DType::I32);
  EXPECT_EQ(read.entryPoints[0].results[0].saved, 0);
  EXPECT_EQ(read.inputs.at("input_ids").indexIgnored, -100);
  EXPECT_EQ(read.inputs.at("input_ids").devices, (std::vector<int64_t>{0}));
  EXPECT_EQ(read.loss->entry, "stage1_forward");
  EXPECT_EQ(read.tensors[1].from, 1);
  EXPECT_EQ(read.training, file.training);
  EXPECT_EQ(read.deviceMemory[1].counted.totalBytes(),
            file.deviceMemory[1].counted.totalBytes());
  EXPECT_EQ(read.deviceMemory[1].inputs.paramBytesByHeight,
            file.deviceMemory[1].inputs.paramBytesByHeight);
  EXPECT_EQ(read.deviceMemory[1].inputs.stages[0].forwardMessageBytes, 60u);
  EXPECT_EQ(read.deviceMemory[1].inputs.stages[0].backwardMessageBytes, 30u);
  ASSERT_TRUE(read.replicas.has_value());
  EXPECT_EQ(read.replicas->replicas, (std::vector<int64_t>{2, 1}));

  // The runtime reads the same file into its view.
  llvm::Expected<ArtifactManifest> manifest = readWrittenManifest(text);
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  EXPECT_EQ(manifest->lossStage, 1);
  EXPECT_EQ(manifest->parameters.at("wte").devices,
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(manifest->deviceMemory.size(), 2u);
  ASSERT_TRUE(manifest->replicas.has_value());
  EXPECT_EQ(manifest->replicas->replicas, (std::vector<int64_t>{2, 1}));
}

TEST(ManifestSchema, ReplicasWrittenOnlyWhenGiven) {
  // An unreplicated plan's manifest has no `replicas` (the file is what it
  // was before replicas existed), and reads back without it.
  ManifestFile file = fullManifest();
  file.replicas.reset();
  json::Value text = written(file);
  EXPECT_EQ(object(text).get("replicas"), nullptr);
  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(text, read, root)) << llvm::toString(root.getError());
  EXPECT_FALSE(read.replicas.has_value());
  // A mistyped one is refused with its path.
  object(text)["replicas"] = json::Array{2, "x"};
  EXPECT_NE(readError(text).find("manifest.replicas[1]"), std::string::npos)
      << readError(text);
  // So is a factor outside 1 .. 65536 (2^40 processes would never start).
  object(text)["replicas"] = json::Array{2, int64_t(1) << 40};
  EXPECT_NE(readError(text).find("expected a replication factor of 1 to "
                                 "65536 at manifest.replicas[1]"),
            std::string::npos)
      << readError(text);
}

TEST(ManifestSchema, StageTimesAndCompileCommandRoundTrip) {
  // What re-planning reads (Replan.h): the planner's stage times and how the
  // plan was compiled; both optional, and absent from older manifests.
  ManifestFile file = fullManifest();
  json::Value plain = written(file);
  EXPECT_EQ(object(plain).get("compile"), nullptr);
  file.stages[0].forwardMs = 1.5;
  file.stages[0].backwardMs = 3.25;
  file.compile = ManifestCompile{"/models/m.mlir", {"--devices=2", "-O0"}};
  json::Value text = written(file);
  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(text, read, root)) << llvm::toString(root.getError());
  EXPECT_EQ(read.stages[0].forwardMs, 1.5);
  EXPECT_EQ(read.stages[0].backwardMs, 3.25);
  EXPECT_FALSE(read.stages[1].forwardMs.has_value());
  ASSERT_TRUE(read.compile.has_value());
  EXPECT_EQ(read.compile->model, "/models/m.mlir");
  EXPECT_EQ(read.compile->arguments,
            (std::vector<std::string>{"--devices=2", "-O0"}));
  EXPECT_FALSE(read.compile->plansReplicas);
  file.compile->plansReplicas = true;
  ManifestFile planned;
  ASSERT_TRUE(fromJSON(written(file), planned, root));
  EXPECT_TRUE(planned.compile->plansReplicas);
  llvm::Expected<ArtifactManifest> manifest = readWrittenManifest(text);
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  ASSERT_TRUE(manifest->compile.has_value());
  EXPECT_EQ(manifest->compile->model, "/models/m.mlir");
  EXPECT_EQ(manifest->stages[0].backwardMs, 3.25);
  // A mistyped one is refused with its path.
  object(text)["compile"] = json::Object{{"model", 3}, {"arguments", {}}};
  EXPECT_NE(readError(text).find("manifest.compile.model"), std::string::npos)
      << readError(text);
}

TEST(ManifestSchema, WeightTimesGiveZeroBubbleCosts) {
  // backward_weight_ms: the W part of a stage's backward, what zb-auto
  // schedules with (RunSchedule.h's plannedCosts); every stage needs all
  // three times, else the run keeps equal costs.
  ManifestFile file = fullManifest();
  for (auto [s, stage] : llvm::enumerate(file.stages)) {
    stage.forwardMs = 1.0 + double(s);
    stage.backwardMs = 3.0 + double(s);
    stage.weightMs = 1.25;
  }
  json::Value text = written(file);
  llvm::Expected<ArtifactManifest> manifest = readWrittenManifest(text);
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  std::optional<StageCosts> costs = plannedCosts(*manifest);
  ASSERT_TRUE(costs.has_value());
  ASSERT_EQ(costs->forwardMs.size(), file.stages.size());
  EXPECT_EQ(costs->forwardMs[1], 2.0);
  EXPECT_EQ(costs->inputMs[1], 2.75);
  EXPECT_EQ(costs->weightMs[1], 1.25);
  manifest->stages[0].weightMs.reset();
  EXPECT_FALSE(plannedCosts(*manifest).has_value());

  // Times that cannot be are refused with their path.
  json::Value negative = written(file);
  (*(*object(negative).getArray("stages"))[0].getAsObject())["forward_ms"] =
      -1.0;
  EXPECT_NE(readError(negative).find("manifest.stages[0].forward_ms"),
            std::string::npos)
      << readError(negative);
  json::Value over = written(file);
  (*(*object(over).getArray("stages"))[1].getAsObject())["backward_weight_ms"] =
      9.0;
  EXPECT_NE(readError(over).find("manifest.stages[1].backward_weight_ms"),
            std::string::npos)
      << readError(over);
}

TEST(ManifestSchema, FrozenParametersRoundTrip) {
  ManifestFile file = fullManifest();
  // Written only for a frozen parameter.
  json::Value text = written(file);
  EXPECT_EQ(
      object(text).getObject("parameters")->getObject("wte")->get("frozen"),
      nullptr);
  file.parameters["wte"].frozen = true;
  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(written(file), read, root))
      << llvm::toString(root.getError());
  EXPECT_TRUE(read.parameters.at("wte").frozen);
}

/// fullManifest() with stage 1's backward split (contract version 2): the
/// input part repeats the backward's transfers and returns a `weight_saved`
/// value that the weight part takes.
ManifestFile splitManifest() {
  using Kind = EntryValue::Kind;
  ManifestFile file = fullManifest();
  EntryPoint input = file.entryPoints[3];
  input.name = "stage1_backward_input";
  input.symbol = "_mlir_ciface_" + input.name;
  input.part = EntryPoint::Part::Input;
  input.results = {value(Kind::WeightSaved, "", tensor({2, 8, 4}), 0)};
  EntryPoint weight = file.entryPoints[3];
  weight.name = "stage1_backward_weight";
  weight.symbol = "_mlir_ciface_" + weight.name;
  weight.part = EntryPoint::Part::Weight;
  weight.arguments.push_back(
      value(Kind::WeightSaved, "", tensor({2, 8, 4}), 0));
  weight.transfers.clear();
  file.entryPoints.push_back(input);
  file.entryPoints.push_back(weight);
  file.stages[1].backwardInput = input.name;
  file.stages[1].backwardWeight = weight.name;
  return file;
}

TEST(ManifestSchema, SplitBackwardRoundTrips) {
  // Without a split, no stage names the parts.
  json::Value whole = written(fullManifest());
  for (const json::Value &stage : *object(whole).getArray("stages")) {
    EXPECT_FALSE(stage.getAsObject()->get("backward_input"));
    EXPECT_FALSE(stage.getAsObject()->get("backward_weight"));
  }

  ManifestFile file = splitManifest();
  json::Value text = written(file);
  json::Object &stage1 = *(*object(text).getArray("stages"))[1].getAsObject();
  EXPECT_EQ(stage1.getString("backward_input"), "stage1_backward_input");
  EXPECT_EQ(stage1.getString("backward_weight"), "stage1_backward_weight");
  json::Object &point =
      *(*object(text).getArray("entry_points"))[4].getAsObject();
  EXPECT_EQ(point.getString("kind"), "backward_input");
  EXPECT_EQ(entryValue(text, 4, "results", 0).getString("kind"),
            "weight_saved");
  EXPECT_EQ(entryValue(text, 4, "results", 0).getInteger("saved"), 0);

  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(text, read, root)) << llvm::toString(root.getError());
  EXPECT_EQ(llvm::formatv("{0:2}", toJSON(read)).str(),
            llvm::formatv("{0:2}", toJSON(file)).str());
  EXPECT_EQ(read.entryPoints[4].part, EntryPoint::Part::Input);
  EXPECT_TRUE(read.entryPoints[5].backward);
  EXPECT_EQ(read.entryPoints[5].part, EntryPoint::Part::Weight);
  EXPECT_EQ(read.entryPoints[5].arguments.back().kind,
            EntryValue::Kind::WeightSaved);
  EXPECT_EQ(read.stages[1].backwardWeight, "stage1_backward_weight");

  // The runtime's view: the input part's sends repeat the backward's.
  llvm::Expected<ArtifactManifest> manifest = readWrittenManifest(text);
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  EXPECT_FALSE(manifest->stages[0].splits());
  EXPECT_TRUE(manifest->stages[1].splits());

  json::Value kind = written(splitManifest());
  (*(*object(kind).getArray("entry_points"))[4].getAsObject())["kind"] =
      "backward_inputs";
  EXPECT_NE(readError(kind).find("manifest.entry_points[4].kind"),
            std::string::npos)
      << readError(kind);
  json::Value saved = written(splitManifest());
  entryValue(saved, 4, "results", 0).erase("saved");
  EXPECT_NE(readError(saved).find("manifest.entry_points[4].results[0].saved"),
            std::string::npos)
      << readError(saved);
}

TEST(ManifestSchema, WrongTypesAreRefusedWithTheirPath) {
  json::Value saved = written(fullManifest());
  entryValue(saved, 0, "results", 0)["saved"] = "zero";
  EXPECT_NE(readError(saved).find("manifest.entry_points[0].results[0].saved"),
            std::string::npos)
      << readError(saved);

  json::Value copies = written(fullManifest());
  (*object(copies).getObject("parameters")->getObject("wte"))["copies"] = 1;
  EXPECT_NE(readError(copies).find("manifest.parameters.wte.copies"),
            std::string::npos)
      << readError(copies);

  json::Value total = written(fullManifest());
  (*(*object(total).getArray("device_memory"))[1].getAsObject()->getObject(
      "counted"))["total_bytes"] = 5;
  EXPECT_NE(readError(total).find("not the sum of the parts at "
                                  "manifest.device_memory[1].counted."
                                  "total_bytes"),
            std::string::npos)
      << readError(total);

  // A stage's messages are part of its kept bytes and working set.
  json::Value messages = written(fullManifest());
  (*(*(*object(messages).getArray("device_memory"))[0]
          .getAsObject()
          ->getObject("inputs")
          ->getArray("stages"))[0]
        .getAsObject())["forward_message_bytes"] = 101;
  EXPECT_NE(readError(messages).find("message bytes beyond the kept bytes or "
                                     "the working set that hold them at "
                                     "manifest.device_memory[0].inputs."
                                     "stages[0]"),
            std::string::npos)
      << readError(messages);

  json::Value index = written(fullManifest());
  entryValue(index, 2, "arguments", 1)["index"] = 0;
  EXPECT_NE(readError(index).find("manifest.entry_points[2].arguments[1]."
                                  "index"),
            std::string::npos)
      << readError(index);

  json::Value version = written(fullManifest());
  object(version)["version"] = 2;
  EXPECT_NE(readError(version).find("manifest.version"), std::string::npos)
      << readError(version);
}

TEST(ManifestSchema, MetricResultsAreNamed) {
  json::Value text = written(fullManifest());
  EXPECT_EQ(entryValue(text, 2, "results", 1).getString("kind"), "metric");
  EXPECT_EQ(entryValue(text, 2, "results", 1).getString("name"),
            "correct_tokens");
  ManifestFile read;
  json::Path::Root root("manifest");
  ASSERT_TRUE(fromJSON(text, read, root)) << llvm::toString(root.getError());
  EXPECT_EQ(read.entryPoints[2].results[1].kind, EntryValue::Kind::Metric);
  EXPECT_EQ(read.entryPoints[2].results[1].name, "correct_tokens");

  entryValue(text, 2, "results", 1).erase("name");
  EXPECT_NE(readError(text).find("manifest.entry_points[2].results[1].name"),
            std::string::npos)
      << readError(text);
}

TEST(ManifestSchema, LossMustNameTheLossResult) {
  json::Value text = written(fullManifest());
  (*object(text).getObject("loss"))["result"] = 1;
  llvm::Expected<ArtifactManifest> manifest = readWrittenManifest(text);
  ASSERT_FALSE(bool(manifest));
  EXPECT_NE(llvm::toString(manifest.takeError())
                .find("'loss' names entry point 'stage1_forward' result 1"),
            std::string::npos);
}

} // namespace
