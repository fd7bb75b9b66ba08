//===- ReplicaReductionsTest.cpp - Gradient all-reduces stage by stage ----===//
//
// ReplicaReductions over a communicator that records when each all-reduce
// starts and finishes (and sums as if the other replica held the same
// gradients): a device of stages 0 and 2, replicated twice, starts stage
// 2's all-reduce when its last backward of the step ends and stage 0's
// when its own does (a parameter both read goes with stage 0), while the
// backward goes on; the update finishes them in order and holds the sums;
// a later step's all-reduce waits for the update before it.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ReplicaReductions.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace ftpipe::runtime;
using ftpipe::schedule::Action;

namespace {

/// Process 0 of 2, whose peer holds the same gradients: an all-reduce
/// doubles its values, when it finishes.
class RecordingCommunicator : public Communicator {
public:
  int64_t device() const override { return 0; }
  int64_t devices() const override { return 2; }
  void abort(const std::string &) override {}
  void send(int64_t, int64_t, int64_t, const void *, size_t) override {}
  void recv(int64_t, int64_t, int64_t, void *, size_t) override {}
  int64_t startAllReduceSum(const std::vector<int64_t> &group,
                            int64_t generation, float *values,
                            size_t count) override {
    EXPECT_EQ(group, (std::vector<int64_t>{0, 1}));
    log.push_back("start " + std::to_string(generation) + " of " +
                  std::to_string(count));
    started.push_back({values, count});
    return int64_t(started.size() - 1);
  }
  void finishAllReduce(int64_t handle) override {
    log.push_back("finish " + std::to_string(handle));
    auto [values, count] = started[handle];
    for (size_t i = 0; i < count; ++i)
      values[i] *= 2;
  }

  std::vector<std::string> log;
  std::vector<std::pair<float *, size_t>> started;
};

Tensor filled(std::vector<int64_t> shape, float value) {
  Tensor tensor(DType::F32, std::move(shape));
  for (float &x : tensor.f32Values())
    x = value;
  return tensor;
}

TEST(ReplicaReductions, StagesReduceAsTheirBackwardsEnd) {
  RecordingCommunicator processes;
  ReplicaCommunicator replicas(processes, ftpipe::schedule::ReplicaLayout{{2}});
  std::map<int64_t, ReplicaReductions::TensorMap> gradients;
  // Stage 2 reads b and shared (2 + 3 floats), stage 0 a and shared.
  ReplicaReductions reductions(
      replicas, {{0, {"a", "shared"}}, {2, {"b", "shared"}}}, gradients,
      /*microBatches=*/4);
  // Replica 0 of the device: micro-batches 0 and 2 of step 0, then
  // micro-batch 4 of step 1 (its backward before U0).
  std::vector<Action> actions = {
      Action::forward(0, 0),  Action::forward(2, 0),  Action::backward(2, 0),
      Action::forward(0, 2),  Action::forward(2, 2),  Action::backward(2, 2),
      Action::backward(0, 0), Action::forward(0, 4),  Action::forward(2, 4),
      Action::backward(2, 4), Action::backward(0, 2), Action::update(0),
      Action::backward(0, 4), Action::update(1)};
  reductions.plan(actions);
  auto step = [] {
    return ReplicaReductions::TensorMap{{"a", filled({1}, 1.0f)},
                                        {"b", filled({2}, 2.0f)},
                                        {"shared", filled({3}, 3.0f)}};
  };
  gradients[0] = step();
  for (size_t i = 0; i <= 5; ++i)
    reductions.ran(i);
  // Stage 2's last backward of step 0 ended: its all-reduce (b) runs
  // while stage 0's backwards go on.
  EXPECT_EQ(processes.log, (std::vector<std::string>{"start 0 of 2"}));
  gradients[1] = step();
  for (size_t i = 6; i <= 9; ++i)
    reductions.ran(i);
  // Step 1's stage 2 ended too, but waits for update 0.
  EXPECT_EQ(processes.log, (std::vector<std::string>{"start 0 of 2"}));
  reductions.ran(10);
  EXPECT_EQ(processes.log,
            (std::vector<std::string>{"start 0 of 2", "start 0 of 4"}));
  ReplicaReductions::TensorMap sums = std::move(gradients[0]);
  gradients.erase(0);
  reductions.finish(0, sums);
  EXPECT_EQ(processes.log,
            (std::vector<std::string>{"start 0 of 2", "start 0 of 4",
                                      "finish 0", "finish 1", "start 1 of 2"}));
  for (auto [name, value] :
       {std::pair{"a", 2.0f}, {"b", 4.0f}, {"shared", 6.0f}})
    for (float x : sums.at(name).f32Values())
      EXPECT_EQ(x, value) << name;
  // Step 1: stage 0's all-reduce starts after its last backward.
  reductions.ran(11);
  reductions.ran(12);
  EXPECT_EQ(processes.log.back(), "start 1 of 4");
  sums = std::move(gradients[1]);
  reductions.finish(1, sums);
  EXPECT_EQ(processes.log.back(), "finish 3");
  EXPECT_EQ(sums.at("shared").f32Values()[2], 6.0f);
}

} // namespace
