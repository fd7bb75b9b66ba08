//===- ManifestChecksTest.cpp - Manifests against their entry points ------===//
//
// ABICheck.h and PlacementCheck.h on a hand-made two-device manifest and its
// edits: a manifest that disagrees with the code (a result fewer, a rank
// changed, an argument dropped, symbols swapped), gradients, saved values and
// losses that the executor would index wrongly, and parameter placements
// that no entry point backs (an owner of -1, a wrong owner, a fake tied
// copy, a reader not listed). Each is refused with a message naming it.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ABICheck.h"
#include "FTPipe/Runtime/PlacementCheck.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;
using ftpipe::support::ABIValue;
using ftpipe::support::EntryABI;
using Kind = EntryValue::Kind;

namespace {

EntryValue value(Kind kind, std::vector<int64_t> shape, std::string name = "",
                 int64_t saved = -1) {
  EntryValue v;
  v.kind = kind;
  v.name = std::move(name);
  v.saved = saved;
  v.tensor.shape = std::move(shape);
  v.tensor.type = kind == Kind::Microbatch ? DType::I64 : DType::F32;
  return v;
}

EntryPoint entry(std::string name, int64_t device, int64_t stage,
                 std::vector<EntryValue> arguments,
                 std::vector<EntryValue> results) {
  EntryPoint e;
  e.symbol = "_mlir_ciface_" + name;
  e.name = std::move(name);
  e.device = device;
  e.stage = stage;
  e.backward = e.name.find("backward") != std::string::npos;
  e.arguments = std::move(arguments);
  e.results = std::move(results);
  return e;
}

ManifestParameter parameter(std::vector<int64_t> shape,
                            std::vector<int64_t> devices) {
  ManifestParameter p;
  p.tensor.shape = std::move(shape);
  p.devices = std::move(devices);
  return p;
}

/// Stage 0 on device 0 reads "w" and the tied "e"; stage 1 on device 1
/// reads "e" and returns the loss.
ArtifactManifest twoStages() {
  ArtifactManifest m;
  m.artifacts = {"device0.so", "device1.so"};
  m.stages = {{0, 0, "s0_forward", "s0_backward"},
              {1, 1, "s1_forward", "s1_backward"}};
  m.stageOrder = {0, 1};
  EntryValue mb = value(Kind::Microbatch, {});
  for (EntryPoint e :
       {entry("s0_forward", 0, 0,
              {mb, value(Kind::Param, {4, 4}, "w"),
               value(Kind::Param, {8, 4}, "e"),
               value(Kind::Input, {2, 4}, "x")},
              {value(Kind::Saved, {2, 4}, "", 0)}),
        entry("s0_backward", 0, 0,
              {mb, value(Kind::Param, {4, 4}, "w"),
               value(Kind::Saved, {2, 4}, "", 0)},
              {value(Kind::Grad, {4, 4}, "w"), value(Kind::Grad, {8, 4}, "e")}),
        entry("s1_forward", 1, 1, {mb, value(Kind::Param, {8, 4}, "e")},
              {value(Kind::Loss, {})}),
        entry("s1_backward", 1, 1, {mb, value(Kind::Param, {8, 4}, "e")},
              {value(Kind::Grad, {8, 4}, "e")})})
    m.entryPoints[e.name] = e;
  m.parameters["w"] = parameter({4, 4}, {0});
  m.parameters["e"] = parameter({8, 4}, {0, 1});
  m.inputs["x"].shape = {2, 4};
  m.lossStage = 1;
  return m;
}

/// What the code of `e` declares, as ftpipe-record-entry-abi writes it.
EntryABI abiOf(const EntryPoint &e) {
  EntryABI abi;
  auto convert = [](const EntryValue &v) {
    if (v.kind == Kind::Microbatch)
      return ABIValue{false, "index", {}};
    return ABIValue{true, "f32", v.tensor.shape};
  };
  for (const EntryValue &v : e.arguments)
    abi.arguments.push_back(convert(v));
  for (const EntryValue &v : e.results)
    abi.results.push_back(convert(v));
  return abi;
}

std::string message(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "accepted";
}

TEST(ABICheck, AcceptsTheCode) {
  ArtifactManifest m = twoStages();
  for (const auto &[name, e] : m.entryPoints)
    EXPECT_EQ(message(checkEntryABI(e, abiOf(e))), "accepted") << name;
  EXPECT_EQ(message(checkEntryValues(m)), "accepted");
  EXPECT_EQ(message(checkPlacement(m)), "accepted");
}

TEST(ABICheck, RefusesAManifestThatDisagreesWithTheCode) {
  ArtifactManifest m = twoStages();
  const EntryPoint &backward = m.entryPoints.at("s0_backward");
  EntryABI code = abiOf(backward);

  EntryPoint fewer = backward;
  fewer.results.pop_back();
  EXPECT_EQ(message(checkEntryABI(fewer, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): the "
            "manifest lists 1 results, the code returns 2");

  EntryPoint rank = backward;
  rank.results[1].tensor.shape = {32};
  EXPECT_EQ(message(checkEntryABI(rank, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): result "
            "1: the manifest says tensor f32 [32], the code returns tensor "
            "f32 [8, 4]");

  EntryPoint dropped = backward;
  dropped.arguments.erase(dropped.arguments.begin() + 1);
  EXPECT_EQ(message(checkEntryABI(dropped, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): the "
            "manifest lists 2 arguments, the code takes 3");

  EntryPoint type = backward;
  type.arguments[2].tensor.type = DType::I32;
  EXPECT_EQ(message(checkEntryABI(type, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): argument "
            "2: the manifest says tensor i32 [2, 4], the code takes tensor "
            "f32 [2, 4]");

  // The micro-batch is a scalar passed by value, everything else a tensor.
  EntryPoint scalar = backward;
  scalar.arguments[0] = value(Kind::Input, {}, "x");
  EXPECT_EQ(message(checkEntryABI(scalar, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): argument "
            "0: the manifest says tensor f32 [], the code takes scalar index");
  EntryPoint microbatch = backward;
  microbatch.arguments[1] = value(Kind::Microbatch, {});
  EXPECT_EQ(message(checkEntryABI(microbatch, code)),
            "entry point 's0_backward' ('_mlir_ciface_s0_backward'): argument "
            "1: the manifest says the micro-batch (scalar index), the code "
            "takes tensor f32 [4, 4]");

  // Symbols swapped: the forward's symbol names the backward's code.
  EntryPoint swapped = m.entryPoints.at("s0_forward");
  swapped.symbol = backward.symbol;
  EXPECT_EQ(message(checkEntryABI(swapped, code)),
            "entry point 's0_forward' ('_mlir_ciface_s0_backward'): the "
            "manifest lists 4 arguments, the code takes 3");
}

TEST(ABICheck, RefusesValuesTheExecutorWouldIndexWrongly) {
  auto edited = [](auto edit) {
    ArtifactManifest m = twoStages();
    edit(m);
    return message(checkEntryValues(m));
  };
  // The gradient of a parameter its stage does not read (the executor
  // added it outside its gradient sums).
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_backward").results[0].name = "w";
            }),
            "entry point 's1_backward', result 0 is the gradient of 'w', "
            "which no entry point of stage 1 reads");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s0_backward").results[1].name = "w";
            }),
            "entry point 's0_backward', result 1 is a second gradient of 'w'");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_backward").results[0].tensor.shape = {8, 8};
            }),
            "entry point 's1_backward', result 0 (the gradient of 'e') is f32 "
            "[8, 8], the parameter f32 [8, 4]");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_forward").arguments[1].tensor.shape = {4, 8};
            }),
            "entry point 's1_forward', argument 1 ('e') is f32 [4, 8], the "
            "parameter f32 [8, 4]");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s0_forward").arguments[3].tensor.shape = {4};
            }),
            "entry point 's0_forward', argument 3 ('x') is f32 [4], the input "
            "f32 [2, 4]");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s0_backward").arguments[2].saved = 3;
            }),
            "entry point 's0_backward', argument 2 reads saved value 3, which "
            "no entry point of stage 0 returns");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s0_backward").arguments[2].tensor.shape = {8};
            }),
            "entry point 's0_backward', argument 2 (saved value 0) is f32 [8], "
            "the saved result f32 [2, 4]");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_forward").results[0].tensor.shape = {0};
            }),
            "entry point 's1_forward', result 0 (the loss) is f32 [0]: a loss "
            "is one f32 or f64 value");
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_forward").results[0].tensor.type =
                  DType::I32;
            }),
            "entry point 's1_forward', result 0 (the loss) is i32 []: a loss "
            "is one f32 or f64 value");
  // A loss of shape [1, 1] holds one value.
  EXPECT_EQ(edited([](ArtifactManifest &m) {
              m.entryPoints.at("s1_forward").results[0].tensor.shape = {1, 1};
            }),
            "accepted");
}

TEST(PlacementCheck, RefusesHoldersNoEntryPointBacks) {
  auto placed = [](const std::string &name, std::vector<int64_t> devices,
                   auto edit) {
    ArtifactManifest m = twoStages();
    m.parameters.at(name).devices = std::move(devices);
    edit(m);
    return message(checkPlacement(m));
  };
  auto none = [](ArtifactManifest &) {};
  // An owner of -1: the parameter was never trained and not saved.
  EXPECT_EQ(placed("w", {-1}, none),
            "parameter 'w': device -1 is its owner, but no entry point reads "
            "it there (it is read on device 0, by 's0_backward')");
  // A wrong owner: the run trained, then aborted before saving.
  EXPECT_EQ(placed("w", {1}, none),
            "parameter 'w': device 1 is its owner, but no entry point reads "
            "it there (it is read on device 0, by 's0_backward')");
  // A fake tied copy: the owner waited for its gradient until the timeout.
  EXPECT_EQ(placed("w", {0, 1}, none),
            "parameter 'w': device 1 is a copy, but no entry point reads it "
            "there (it is read on device 0, by 's0_backward')");
  // A reader not listed.
  EXPECT_EQ(placed("e", {0}, none),
            "parameter 'e': entry point 's1_backward' reads it on device 1, "
            "which is neither its owner nor one of its copies");
  // A parameter no entry point reads.
  EXPECT_EQ(placed("e", {0, 1},
                   [](ArtifactManifest &m) {
                     m.parameters["unread"] = parameter({2}, {0});
                   }),
            "parameter 'unread': no entry point reads it, but the manifest "
            "places it on device 0 (its owner)");
}

} // namespace
