//===- ArtifactManifestTest.cpp - Reading ftpipe-compile's manifest -------===//
//
// Hand-written manifests: the stage graph read off the transfers (a forward
// that receives a tag follows the one that sends it), tied groups from the
// parameters' copies, and the references that are refused.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "ManifestFiles.h"

#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;
namespace json = llvm::json;

namespace {

json::Object tensor(std::vector<int64_t> shape, llvm::StringRef dtype = "f32") {
  return json::Object{{"shape", json::Array(shape)}, {"dtype", dtype.str()}};
}

json::Object entry(llvm::StringRef name, int64_t device, int64_t stage,
                   bool backward, json::Array transfers,
                   json::Array arguments = {}) {
  json::Array args{
      json::Object{{"index", 0}, {"kind", "microbatch"}, {"dtype", "index"}}};
  for (json::Value &argument : arguments)
    args.push_back(std::move(argument));
  return json::Object{{"name", name.str()},
                      {"symbol", ("_mlir_ciface_" + name).str()},
                      {"device", device},
                      {"stage", stage},
                      {"kind", backward ? "backward" : "forward"},
                      {"arguments", std::move(args)},
                      {"results", json::Array{}},
                      {"transfers", std::move(transfers)}};
}

json::Object transfer(bool send, int64_t peer, int64_t tag) {
  json::Object t = tensor({2, 4});
  t["direction"] = send ? "send" : "recv";
  t["peer"] = peer;
  t["tag"] = tag;
  return t;
}

/// Stages 0 (device 0) -> 1 (device 1) -> 2 (device 0), parameter "w" read
/// by stages 0 and 2 (device 0 only) and "e" by stages 0 and 1 (tied).
json::Object threeStages() {
  json::Object param = tensor({4, 4});
  json::Object e = tensor({4, 4});
  e["owner"] = 0;
  e["copies"] = json::Array{1};
  param["owner"] = 0;
  param["copies"] = json::Array{};
  json::Array entries;
  for (int64_t s = 0; s < 3; ++s) {
    int64_t device = s == 1 ? 1 : 0;
    json::Array forward, backward;
    if (s < 2) {
      forward.push_back(transfer(true, s == 0 ? 1 : 0, 2 * s));
      backward.push_back(transfer(false, s == 0 ? 1 : 0, 2 * s + 1));
    }
    if (s > 0) {
      forward.push_back(transfer(false, s == 1 ? 0 : 1, 2 * (s - 1)));
      backward.push_back(transfer(true, s == 1 ? 0 : 1, 2 * (s - 1) + 1));
    }
    std::string name = "stage" + std::to_string(s);
    entries.push_back(
        entry(name + "_forward", device, s, false, std::move(forward)));
    entries.push_back(
        entry(name + "_backward", device, s, true, std::move(backward)));
  }
  json::Array stages;
  for (int64_t s = 0; s < 3; ++s)
    stages.push_back(
        json::Object{{"id", s},
                     {"device", s == 1 ? 1 : 0},
                     {"forward", "stage" + std::to_string(s) + "_forward"},
                     {"backward", "stage" + std::to_string(s) + "_backward"}});
  return json::Object{
      {"format", "ftpipe-manifest"},
      {"version", 1},
      {"target", "cpu"},
      {"devices", json::Array{json::Object{{"id", 0}, {"artifact", "d0.so"}},
                              json::Object{{"id", 1}, {"artifact", "d1.so"}}}},
      {"stages", std::move(stages)},
      {"stage_order", json::Array{0, 1, 2}},
      {"entry_points", std::move(entries)},
      {"parameters",
       json::Object{{"w", std::move(param)}, {"e", std::move(e)}}},
      {"inputs", json::Object{{"input_ids", tensor({2, 8}, "i32")}}}};
}

/// Writes `manifest` into a fresh directory and reads it back.
llvm::Expected<ArtifactManifest> roundTrip(const json::Object &manifest) {
  return readWrittenManifest(json::Object(manifest));
}

std::string errorOf(const json::Object &manifest) {
  auto result = roundTrip(manifest);
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

TEST(ArtifactManifest, StageGraphFromTransfers) {
  auto manifest = roundTrip(threeStages());
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  EXPECT_EQ(manifest->devices(), 2);
  ftpipe::schedule::StageGraph graph = manifest->stageGraph();
  EXPECT_EQ(graph.device, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(graph.producers, (std::vector<std::vector<int64_t>>{{}, {0}, {1}}));
  EXPECT_EQ(graph.tiedDevices, (std::vector<std::vector<int64_t>>{{0, 1}}));
  EXPECT_EQ(manifest->parameters.at("e").devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(manifest->inputs.at("input_ids").type, DType::I32);
  EXPECT_FALSE(bool(graph.validate()));
}

TEST(ArtifactManifest, ReplicasPerDevice) {
  EXPECT_FALSE(roundTrip(threeStages())->replicas.has_value());
  json::Object replicated = threeStages();
  replicated["replicas"] = json::Array{2, 1};
  auto manifest = roundTrip(replicated);
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  ASSERT_TRUE(manifest->replicas.has_value());
  EXPECT_EQ(manifest->replicas->replicas, (std::vector<int64_t>{2, 1}));

  json::Object count = threeStages();
  count["replicas"] = json::Array{2, 1, 1};
  EXPECT_NE(errorOf(count).find("the replicas name 3 devices (2,1,1), the "
                                "plan has 2"),
            std::string::npos);
  json::Object zero = threeStages();
  zero["replicas"] = json::Array{0, 1};
  EXPECT_NE(errorOf(zero).find("expected a replication factor of 1 to 65536 "
                               "at manifest.replicas[0]"),
            std::string::npos)
      << errorOf(zero);
}

TEST(ArtifactManifest, RefusesBrokenReferences) {
  json::Object owner = threeStages();
  (*owner.getObject("parameters")->getObject("e"))["owner"] = 1;
  (*owner.getObject("parameters")->getObject("e"))["copies"] = json::Array{0};
  EXPECT_NE(errorOf(owner).find("parameter 'e': the owner must be the lowest"),
            std::string::npos);

  // stage1_forward's send of tag 2 becomes a second send of tag 0.
  json::Object tag = threeStages();
  json::Object *stage1 = (*tag.getArray("entry_points"))[2].getAsObject();
  (*(*stage1->getArray("transfers"))[0].getAsObject())["tag"] = 0;
  EXPECT_NE(errorOf(tag).find("tag 0 is sent twice"), std::string::npos);

  json::Object stage = threeStages();
  (*(*stage.getArray("stages"))[1].getAsObject())["device"] = 0;
  EXPECT_NE(errorOf(stage).find("entry point 'stage1_backward' is on device "
                                "1, its stage 1 on device 0"),
            std::string::npos);

  json::Object swapped = threeStages();
  (*(*swapped.getArray("stages"))[2].getAsObject())["backward"] =
      "stage0_backward";
  EXPECT_NE(errorOf(swapped).find("entry point 'stage2_backward' is not the "
                                  "backward that stage 2 lists"),
            std::string::npos);

  json::Object input = threeStages();
  (*(*input.getArray("entry_points"))[0].getAsObject()->getArray("arguments"))
      .push_back(json::Object{{"index", 1},
                              {"kind", "input"},
                              {"name", "labels"},
                              {"shape", json::Array{2}},
                              {"dtype", "i32"}});
  EXPECT_NE(errorOf(input).find("reads input 'labels', which is not in"),
            std::string::npos);

  json::Object dtype = threeStages();
  (*dtype.getObject("inputs")->getObject("input_ids"))["dtype"] = "q7";
  EXPECT_NE(errorOf(dtype).find("manifest.inputs.input_ids.dtype"),
            std::string::npos);

  json::Object format = threeStages();
  format["version"] = 2;
  EXPECT_NE(errorOf(format).find("not an ftpipe-compile manifest of version 1"),
            std::string::npos);
}

/// threeStages() with stage 1's backward split (contract version 2): its
/// input part repeats the backward's transfers, its weight part takes one
/// `weight_saved` value.
json::Object splitStage1() {
  json::Object manifest = threeStages();
  json::Array &entries = *manifest.getArray("entry_points");
  json::Object input = *entries[3].getAsObject();
  input["name"] = "stage1_backward_input";
  input["symbol"] = "_mlir_ciface_stage1_backward_input";
  input["kind"] = "backward_input";
  json::Object carried = tensor({2, 4});
  carried["kind"] = "weight_saved";
  carried["saved"] = 0;
  input["results"] = json::Array{json::Object(carried)};
  json::Object weight = entry("stage1_backward_weight", 1, 1, true, {},
                              json::Array{json::Object(carried)});
  weight["kind"] = "backward_weight";
  entries.push_back(std::move(input));
  entries.push_back(std::move(weight));
  json::Object &stage = *(*manifest.getArray("stages"))[1].getAsObject();
  stage["backward_input"] = "stage1_backward_input";
  stage["backward_weight"] = "stage1_backward_weight";
  return manifest;
}

TEST(ArtifactManifest, ReadsSplitBackwards) {
  auto manifest = roundTrip(splitStage1());
  ASSERT_TRUE(bool(manifest)) << llvm::toString(manifest.takeError());
  EXPECT_FALSE(manifest->stages[0].splits());
  ASSERT_TRUE(manifest->stages[1].splits());
  const EntryPoint &input = manifest->entryPoints.at("stage1_backward_input");
  EXPECT_TRUE(input.backward);
  EXPECT_EQ(input.part, EntryPoint::Part::Input);
  ASSERT_EQ(input.results.size(), 1u);
  EXPECT_EQ(input.results[0].kind, EntryValue::Kind::WeightSaved);
  EXPECT_EQ(input.results[0].saved, 0);
  const EntryPoint &weight = manifest->entryPoints.at("stage1_backward_weight");
  EXPECT_EQ(weight.part, EntryPoint::Part::Weight);
  EXPECT_EQ(weight.arguments[1].kind, EntryValue::Kind::WeightSaved);
  EXPECT_EQ(manifest->stageGraph().producers[2], std::vector<int64_t>{1});

  // A stage that lists only an input part (its weight part gone).
  json::Object half = splitStage1();
  (*(*half.getArray("stages"))[1].getAsObject()).erase("backward_weight");
  half.getArray("entry_points")->pop_back();
  EXPECT_NE(errorOf(half).find("stage 1 lists only one part of a split "
                               "backward"),
            std::string::npos);

  json::Object misnamed = splitStage1();
  (*(*misnamed.getArray("stages"))[1].getAsObject())["backward_input"] =
      "stage1_backward";
  EXPECT_NE(errorOf(misnamed).find("entry point 'stage1_backward_input' is "
                                   "not the backward_input that stage 1 "
                                   "lists"),
            std::string::npos);
}

} // namespace
