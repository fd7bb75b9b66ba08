//===- ProfileSchemaTest.cpp - Measured profiles: schema and collection ---===//
//
// A profile with every field set to a value other than its default goes
// through toJSON, text and fromJSON unchanged; the older form (op scope ->
// times) reads as ops only; bad fields are refused with their path. And a
// hand-made two-step timeline becomes the profile its figures say: the
// warm-up step is left out, stage times are medians of the stage code, a
// process's per-step totals (its CPU time among them) are medians over the
// steps.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ProfileSchema.h"
#include "FTPipe/Runtime/MeasuredProfile.h"

#include "gtest/gtest.h"

using namespace ftpipe;
using namespace ftpipe::runtime;
namespace json = llvm::json;
using schedule::Action;

namespace {

MeasuredProfile fullProfile() {
  MeasuredProfile profile;
  profile.source = {"/tmp/gpt2", "cpu", "host1", 2,        "1f1b",
                    4,           1,     9,       "median", {{1, 3.0}}};
  ProfileStage first;
  first.ops = {0, 1, 2, 5};
  first.recomputes = true;
  first.forwardMs = 1.5;
  first.backwardMs = 3.25;
  first.forwardWaitMs = 0.25;
  first.backwardWaitMs = 0.5;
  first.samples = 36;
  ProfileStage second;
  second.id = second.device = 1;
  second.ops = {3, 4, 6, 7};
  second.recomputes = false;
  second.forwardMs = 2.5;
  second.backwardMs = 5;
  second.inputMs = 2;
  second.weightMs = 3;
  second.forwardWaitMs = 0.125;
  second.samples = 36;
  second.forwardCpuMs = 2.25;
  second.backwardCpuMs = 4.5;
  profile.stages = {first, second};
  profile.processes = {{0, 0, 40, 19, 20, 1, 18.5}, {1, 1, 41, 30, 9, 2}};
  profile.ops["Model/Block[0]"] = {0.75, 1.5};
  return profile;
}

llvm::Expected<MeasuredProfile> read(const json::Value &value) {
  MeasuredProfile profile;
  json::Path::Root root("profile");
  if (!fromJSON(value, profile, root))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::toString(root.getError()));
  return profile;
}

std::string refusal(const json::Value &value) {
  auto profile = read(value);
  if (profile)
    return "accepted";
  return llvm::toString(profile.takeError());
}

TEST(ProfileSchema, RoundTripsEveryField) {
  MeasuredProfile profile = fullProfile();
  std::string text = llvm::formatv("{0}", toJSON(profile)).str();
  auto parsed = json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  auto back = read(*parsed);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  // The text again: every field survived (the writer is deterministic).
  EXPECT_EQ(llvm::formatv("{0}", toJSON(*back)).str(), text);
  EXPECT_EQ(back->stages[0].ops, (std::vector<int64_t>{0, 1, 2, 5}));
  EXPECT_EQ(back->stages[1].inputMs, 2.0);
  EXPECT_EQ(back->stages[0].recomputes, true);
  // A recomputing stage's backward proper leaves out its forward.
  EXPECT_EQ(back->stages[0].backwardOnlyMs(), 1.75);
  EXPECT_EQ(back->stages[1].backwardOnlyMs(), 5.0);
  EXPECT_EQ(back->stages[1].forwardCpuMs, 2.25);
  EXPECT_EQ(back->stages[1].backwardOnlyMs(/*cpuTime=*/true), 4.5);
  EXPECT_FALSE(back->stages[0].backwardCpuMs.has_value());
  EXPECT_FALSE(back->stages[0].weightMs.has_value());
  EXPECT_EQ(back->source.slowdowns.at(1), 3.0);
  EXPECT_EQ(back->processes[1].waitMs, 9.0);
  // A process's CPU time is written where it was measured.
  EXPECT_EQ(back->processes[0].cpuMs, 18.5);
  EXPECT_FALSE(back->processes[1].cpuMs.has_value());
  // Ops are written as [begin, end) ranges.
  EXPECT_NE(text.find("\"ops\":[[0,3],[5,6]]"), std::string::npos) << text;
}

TEST(ProfileSchema, ReadsTheOlderForm) {
  auto profile = read(json::Object{
      {"Model/Block[0]", json::Object{{"fwd_ms", 1.0}, {"bwd_ms", 4.0}}}});
  ASSERT_TRUE(bool(profile)) << llvm::toString(profile.takeError());
  EXPECT_TRUE(profile->stages.empty());
  EXPECT_EQ(profile->ops.at("Model/Block[0]").backwardMs, 4.0);
}

TEST(ProfileSchema, RefusalsNameTheField) {
  json::Value good = toJSON(fullProfile());
  auto edited = [&](auto edit) {
    json::Value copy = good;
    edit(*copy.getAsObject());
    return refusal(copy);
  };
  auto stage = [](json::Object &o, size_t i) -> json::Object & {
    return *(*o.getArray("stages"))[i].getAsObject();
  };
  EXPECT_EQ(refusal(good), "accepted");
  EXPECT_EQ(edited([](json::Object &o) { o["version"] = 2; }),
            "not an ftpipe-profile of version 1 at profile.version");
  EXPECT_EQ(edited([&](json::Object &o) { stage(o, 1).erase("fwd_ms"); }),
            "missing value at profile.stages[1].fwd_ms");
  EXPECT_EQ(edited([&](json::Object &o) { stage(o, 0)["bwd_ms"] = -1.0; }),
            "expected a time in [0, 1e9] ms at profile.stages[0].bwd_ms");
  EXPECT_EQ(edited([&](json::Object &o) { stage(o, 1)["id"] = 0; }),
            "expected the stage's position (stages are listed 0, 1, ...) at "
            "profile.stages[1].id");
  EXPECT_EQ(edited([&](json::Object &o) {
              stage(o, 1)["ops"] = json::Array{json::Array{5, 6}};
            }),
            "an op of this stage is in an earlier one too at "
            "profile.stages[1].ops");
  EXPECT_EQ(
      edited([&](json::Object &o) {
        stage(o, 1)["ops"] = json::Array{json::Array{4, 6}, json::Array{2, 3}};
      }),
      "expected [begin, end) with begin < end, after the range before "
      "at profile.stages[1].ops[1]");
  EXPECT_EQ(edited([&](json::Object &o) { stage(o, 1).erase("weight_ms"); }),
            "a split backward gives both input_ms and weight_ms at "
            "profile.stages[1].weight_ms");
  EXPECT_EQ(edited([](json::Object &o) {
              (*(*o.getArray("processes"))[0].getAsObject())["step_ms"] =
                  "fast";
            }),
            "expected number at profile.processes[0].step_ms");
  EXPECT_EQ(edited([&](json::Object &o) { stage(o, 1).erase("bwd_cpu_ms"); }),
            "CPU times come as fwd_cpu_ms and bwd_cpu_ms together at "
            "profile.stages[1].bwd_cpu_ms");
  EXPECT_EQ(edited([](json::Object &o) {
              (*(*o.getArray("processes"))[0].getAsObject())["cpu_ms"] = -2.0;
            }),
            "expected a time in [0, 1e9] ms at profile.processes[0].cpu_ms");
  EXPECT_EQ(refusal(json::Object{{"Model/x", json::Object{{"fwd_ms", 1.0}}}}),
            "missing value at profile.Model/x.bwd_ms");
}

/// An action's event; its CPU time is its compute, and half its wait (the
/// polls), plus 0.5 ms for an update.
TraceEvent event(Action action, double startMs, double endMs, double computeMs,
                 double waitMs = 0) {
  TraceEvent event{action, startMs / 1e3, endMs / 1e3, computeMs / 1e3,
                   waitMs / 1e3};
  event.cpuSeconds = (computeMs + waitMs / 2 +
                      (action.kind == schedule::ActionKind::Update ? 0.5 : 0)) /
                     1e3;
  return event;
}

/// Manifest stages with these ops (recomputation not recorded).
std::vector<ManifestStage> stages(std::vector<std::vector<int64_t>> ops) {
  std::vector<ManifestStage> planned(ops.size());
  for (size_t s = 0; s < ops.size(); ++s)
    planned[s].ops = ops[s];
  return planned;
}

ProfileSource warmUp(int64_t steps) {
  ProfileSource source;
  source.warmupSteps = steps;
  return source;
}

/// Two steps of GPipe, two micro-batches each, on a two-stage chain: step 0
/// (the warm-up) is slow, step 1 has forwards of 1 and 3 ms (median: the
/// upper, 3) on stage 0.
TEST(MeasuredProfile, MediansAfterTheWarmUp) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 2};
  std::vector<std::vector<TraceEvent>> traces = {
      {event(Action::forward(0, 0), 0, 50, 50),
       event(Action::forward(0, 1), 50, 100, 50),
       event(Action::backward(0, 0), 100, 200, 100),
       event(Action::backward(0, 1), 200, 300, 100),
       event(Action::update(0), 300, 301, 0),
       event(Action::forward(0, 2), 1000, 1001, 1),
       event(Action::forward(0, 3), 1001, 1004, 3),
       event(Action::backward(0, 2), 1004, 1012, 2, 6),
       event(Action::backward(0, 3), 1012, 1014, 2),
       event(Action::update(1), 1014, 1015.5, 0)},
      {event(Action::forward(1, 0), 0, 100, 50, 50),
       event(Action::forward(1, 1), 100, 150, 50),
       event(Action::backward(1, 0), 150, 250, 100),
       event(Action::backward(1, 1), 250, 350, 100),
       event(Action::update(0), 350, 351, 0),
       event(Action::forward(1, 2), 1000, 1002, 1, 1),
       event(Action::forward(1, 3), 1002, 1006, 1, 3),
       event(Action::backward(1, 2), 1006, 1010, 4),
       event(Action::backward(1, 3), 1010, 1014, 4),
       event(Action::update(1), 1014, 1014.5, 0)}};
  auto profile =
      measureProfile(graph, config, traces, schedule::ReplicaLayout::none(2),
                     stages({{0, 1}, {2}}), warmUp(1));
  ASSERT_TRUE(bool(profile)) << llvm::toString(profile.takeError());
  EXPECT_EQ(profile->source.warmupSteps, 1);
  EXPECT_EQ(profile->source.steps, 1);
  EXPECT_EQ(profile->source.processes, 2);
  EXPECT_EQ(profile->source.microBatches, 2);
  ASSERT_EQ(profile->stages.size(), 2u);
  EXPECT_DOUBLE_EQ(profile->stages[0].forwardMs, 3);
  EXPECT_DOUBLE_EQ(profile->stages[0].backwardMs, 2);
  EXPECT_DOUBLE_EQ(profile->stages[0].backwardWaitMs, 6);
  EXPECT_EQ(profile->stages[0].ops, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(profile->stages[0].samples, 2);
  EXPECT_DOUBLE_EQ(profile->stages[1].forwardMs, 1);
  EXPECT_DOUBLE_EQ(profile->stages[1].forwardWaitMs, 3);
  EXPECT_DOUBLE_EQ(profile->stages[1].backwardMs, 4);
  EXPECT_EQ(profile->stages[1].device, 1);
  ASSERT_EQ(profile->processes.size(), 2u);
  EXPECT_NEAR(profile->processes[0].stepMs, 15.5, 1e-9);
  EXPECT_DOUBLE_EQ(profile->processes[0].computeMs, 8);
  EXPECT_DOUBLE_EQ(profile->processes[0].waitMs, 6);
  EXPECT_NEAR(profile->processes[0].updateMs, 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(profile->processes[1].computeMs, 10);
  EXPECT_DOUBLE_EQ(profile->processes[1].waitMs, 4);
  // A stage's CPU times: medians like the wall times (stage 0's forwards
  // 1 and 3 ms with no wait, its backwards 2 ms with waits of 6 and 0).
  EXPECT_EQ(profile->stages[0].forwardCpuMs, 3.0);
  EXPECT_EQ(profile->stages[0].backwardCpuMs, 5.0);
  EXPECT_EQ(profile->stages[1].forwardCpuMs, 2.5);
  // CPU time a step: every action's, the update's included.
  EXPECT_EQ(profile->processes[0].cpuMs, 8 + 3 + 0.5);
  EXPECT_EQ(profile->processes[1].cpuMs, 10 + 2 + 0.5);

  // Without a warm-up the slow step counts too.
  profile = measureProfile(graph, config, traces,
                           schedule::ReplicaLayout::none(2), {}, warmUp(0));
  ASSERT_TRUE(bool(profile));
  EXPECT_EQ(profile->source.steps, 2);
  EXPECT_DOUBLE_EQ(profile->stages[0].forwardMs, 50);
  EXPECT_TRUE(profile->stages[0].ops.empty());
}

} // namespace
