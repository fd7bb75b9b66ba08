//===- GraphIOTest.cpp - Graph and plan JSON --------------------*- C++ -*-===//
//
// The export schema round-trips losslessly (hyperedges, tied weights, no-grad
// values, plans with shared devices), files with only `nodes` and `edges`
// load with the documented defaults, and bad files are rejected with the
// path of the bad field.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/GraphIO.h"
#include "FTPipe/Partition/Objective.h"

#include "TestUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

void expectSameGraph(const Graph &a, const Graph &b) {
  ASSERT_EQ(a.numNodes(), b.numNodes());
  ASSERT_EQ(a.numValues(), b.numValues());
  ASSERT_EQ(a.numParams(), b.numParams());
  for (NodeId n = 0; n < a.numNodes(); ++n) {
    EXPECT_EQ(a.cost(n).fwdMs, b.cost(n).fwdMs);
    EXPECT_EQ(a.cost(n).bwdMs, b.cost(n).bwdMs);
    EXPECT_EQ(a.cost(n).actBytes, b.cost(n).actBytes);
    EXPECT_EQ(a.cost(n).outBytes, b.cost(n).outBytes);
    EXPECT_EQ(a.scope(n), b.scope(n));
    EXPECT_EQ(a.type(n), b.type(n));
    EXPECT_EQ(a.params(n).vec(), b.params(n).vec());
  }
  for (ValueId v = 0; v < a.numValues(); ++v) {
    EXPECT_EQ(a.producer(v), b.producer(v));
    EXPECT_EQ(a.valueBytes(v), b.valueBytes(v));
    EXPECT_EQ(a.valueNeedsGrad(v), b.valueNeedsGrad(v));
    EXPECT_EQ(a.consumers(v).vec(), b.consumers(v).vec());
  }
  for (ParamId p = 0; p < a.numParams(); ++p) {
    EXPECT_EQ(a.paramBytes(p), b.paramBytes(p));
    EXPECT_EQ(a.paramName(p), b.paramName(p));
  }
}

TEST(GraphIO, RoundTripRandomGraphsWithPlans) {
  for (GraphFamily f :
       {GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide}) {
    RandomGraphOptions o;
    o.family = f;
    o.numNodes = 80;
    o.seed = 7;
    Graph g = unwrap(generateRandomGraph(o));
    Plan plan = randomContiguousPlan(g, 6, 3, 11);
    llvm::json::Value json = graphToJSON(g, &plan);
    // Through text, as a file would go.
    std::string text;
    llvm::raw_string_ostream(text) << json;
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
    ASSERT_TRUE(bool(parsed));
    GraphWithPlan back = unwrap(graphFromJSON(*parsed));
    expectSameGraph(g, back.graph);
    ASSERT_TRUE(back.plan.has_value());
    EXPECT_EQ(*back.plan, plan);
    EXPECT_EQ(graphToJSON(back.graph, &*back.plan), json);
  }
}

TEST(GraphIO, ReplicatedNodesRoundTrip) {
  Graph g = chain(4, 1, 1, 8);
  Plan plan{{0, 0, 1, 1}, {0, 1}};
  plan.nodeReplicated = {true, false, false, false};
  llvm::json::Value json = graphToJSON(g, &plan);
  const llvm::json::Array *nodes = json.getAsObject()->getArray("nodes");
  EXPECT_EQ((*nodes)[0].getAsObject()->getBoolean("replicated"), true);
  EXPECT_FALSE((*nodes)[1].getAsObject()->get("replicated"));
  GraphWithPlan back = unwrap(graphFromJSON(json));
  ASSERT_TRUE(back.plan.has_value());
  EXPECT_EQ(*back.plan, plan);
  // Not a boolean: the error names the field.
  (*(*json.getAsObject()->getArray("nodes"))[0].getAsObject())["replicated"] =
      1;
  llvm::Expected<GraphWithPlan> bad = graphFromJSON(json);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("nodes[0].replicated"),
            std::string::npos);
}

// A plan's replica layout (issue 28) travels as `replicas`, one factor per
// plan device; all ones are no replicas and are left out; refusals name
// the field.
TEST(GraphIO, ReplicasRoundTrip) {
  Graph g = chain(4, 1, 1, 8);
  Plan plan{{0, 0, 1, 1}, {0, 1}};
  llvm::json::Value json = graphToJSON(g, &plan, {2, 1});
  EXPECT_EQ(*json.getAsObject()->get("replicas"),
            llvm::json::Value(llvm::json::Array({2, 1})));
  GraphWithPlan back = unwrap(graphFromJSON(json));
  ASSERT_TRUE(back.plan.has_value());
  EXPECT_EQ(back.replicas, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(graphToJSON(back.graph, &*back.plan, back.replicas), json);
  EXPECT_FALSE(graphToJSON(g, &plan, {1, 1}).getAsObject()->get("replicas"));
  EXPECT_TRUE(unwrap(graphFromJSON(graphToJSON(g, &plan))).replicas.empty());

  auto error = [&](llvm::json::Value replicas) {
    llvm::json::Value bad = graphToJSON(g, &plan, {2, 1});
    (*bad.getAsObject())["replicas"] = std::move(replicas);
    llvm::Expected<GraphWithPlan> read = graphFromJSON(bad);
    return read ? std::string("read") : llvm::toString(read.takeError());
  };
  EXPECT_EQ(error(llvm::json::Array({2})),
            "graph: replicas name 1 devices, the plan uses 2");
  EXPECT_EQ(error(llvm::json::Array({2, 0})), "graph: replicas[1] is 0");
  EXPECT_NE(error(llvm::json::Array({"2", 1})).find("graph.replicas[0]"),
            std::string::npos);
  llvm::json::Value unplanned = graphToJSON(g);
  (*unplanned.getAsObject())["replicas"] = llvm::json::Array({2});
  llvm::Expected<GraphWithPlan> read = graphFromJSON(unplanned);
  ASSERT_FALSE(bool(read));
  EXPECT_EQ(llvm::toString(read.takeError()), "graph: replicas without a plan");
}

TEST(GraphIO, WithoutPlanEveryNodeSaysMinusOne) {
  Graph g = chain(3, 1, 1, 8);
  llvm::json::Value json = graphToJSON(g);
  const llvm::json::Object *node =
      json.getAsObject()->getArray("nodes")->front().getAsObject();
  EXPECT_EQ(node->getInteger("stage"), -1);
  EXPECT_EQ(node->getInteger("device"), -1);
  GraphWithPlan back = unwrap(graphFromJSON(json));
  EXPECT_FALSE(back.plan.has_value());
}

TEST(GraphIO, SaveAndLoadFile) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("ftpipe-graph", "json", path));
  Graph g = chain(5, 1, 2, 100);
  Plan plan{{0, 0, 1, 1, 2}, {0, 1, 0}};
  ASSERT_EQ(message(saveGraphJSON(path, g, &plan)), "");
  GraphWithPlan back = unwrap(loadGraphJSON(path));
  expectSameGraph(g, back.graph);
  EXPECT_EQ(*back.plan, plan);
  llvm::sys::fs::remove(path);
  llvm::Expected<GraphWithPlan> missing = loadGraphJSON("/nonexistent/x.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot read"),
            std::string::npos);
}

GraphWithPlan parse(const char *text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    ADD_FAILURE() << llvm::toString(json.takeError());
    return {};
  }
  return unwrap(graphFromJSON(*json));
}

std::string parseError(const char *text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return "bad test json";
  llvm::Expected<GraphWithPlan> g = graphFromJSON(*json);
  return g ? std::string() : llvm::toString(g.takeError());
}

TEST(GraphIO, IssueFourSchemaOnly) {
  // A file with only `nodes` and `edges`, as another tool might write it:
  // node 0's single result (8 bytes) feeds nodes 1 and 2 and becomes one
  // value; the 4-byte edge is a second value; param_bytes become weights.
  GraphWithPlan g = parse(R"({
    "nodes": [
      {"id": 0, "op": "tosa.matmul", "scope": "m/a", "fwd_ms": 1, "bwd_ms": 2,
       "param_bytes": 64, "act_bytes": 8, "out_bytes": 8, "stage": 0,
       "device": 1},
      {"id": 1, "op": "tosa.add", "scope": "m/b", "fwd_ms": 1, "bwd_ms": 1,
       "param_bytes": 0, "act_bytes": 0, "out_bytes": 8, "stage": 1,
       "device": 0},
      {"id": 2, "op": "tosa.add", "scope": "m/c", "fwd_ms": 1, "bwd_ms": 1,
       "param_bytes": 0, "act_bytes": 0, "out_bytes": 8, "stage": 1,
       "device": 0}
    ],
    "edges": [{"src": 0, "dst": 1, "bytes": 8}, {"src": 0, "dst": 2,
               "bytes": 8}, {"src": 0, "dst": 2, "bytes": 4}]
  })");
  ASSERT_EQ(g.graph.numNodes(), 3u);
  ASSERT_EQ(g.graph.numValues(), 2u);
  EXPECT_EQ(g.graph.consumers(0).vec(), (std::vector<NodeId>{1, 2}));
  EXPECT_EQ(g.graph.valueBytes(1), 4u);
  ASSERT_EQ(g.graph.numParams(), 1u);
  EXPECT_EQ(g.graph.paramName(0), "m/a.params");
  EXPECT_EQ(g.graph.type(0), "tosa.matmul");
  ASSERT_TRUE(g.plan.has_value());
  EXPECT_EQ(g.plan->stageDevice, (std::vector<DeviceId>{1, 0}));
}

TEST(GraphIO, ErrorsNameTheField) {
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": "x", "bwd_ms": 1}]})")
                .find("graph.nodes[0].fwd_ms"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": 1}]})").find("bwd_ms"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"edges": []})").find("nodes"), std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"id": 1, "fwd_ms": 1, "bwd_ms": 1}]})")
                .find("in order"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": 1, "bwd_ms": 1}],
                     "edges": [{"src": 0, "dst": 3, "bytes": 1}]})")
                .find("graph.edges[0]"),
            std::string::npos);
  // Validation errors of the builder come through.
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": 1, "bwd_ms": 1},
                                     {"fwd_ms": 1, "bwd_ms": 1}],
                           "edges": [{"src": 1, "dst": 0, "bytes": 1}]})")
                .find("topological"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": -1, "bwd_ms": 1}]})")
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": 1, "bwd_ms": 1, "stage": 0,
                                      "device": 0},
                                     {"fwd_ms": 1, "bwd_ms": 1}]})")
                .find("all or none"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [{"fwd_ms": 1, "bwd_ms": 1, "stage": 0,
                                      "device": 0},
                                     {"fwd_ms": 1, "bwd_ms": 1, "stage": 0,
                                      "device": 1}]})")
                .find("stage 0 is on device 0 and on device 1"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"nodes": [], "values": 3})").find("values"),
            std::string::npos);
}

} // namespace
