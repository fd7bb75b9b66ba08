//===- GraphIO.cpp - Graph and plan as JSON -----------------------------===//
//
// The `ftpipe-export-graph` schema (docs/Partition.md). Writing emits both
// the issue-4 view (`nodes`, `edges`) and the lossless one (`values`,
// `params`, `stage_device`); reading prefers the lossless arrays and falls
// back to `edges` and `param_bytes` for files written by other tools.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/GraphIO.h"
#include "FTPipe/Support/BoundedInput.h"

#include "JSONFields.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;
namespace json = llvm::json;
namespace support = ftpipe::support;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

json::Value ftpipe::partition::graphToJSON(const Graph &graph, const Plan *plan,
                                           llvm::ArrayRef<int64_t> replicas) {
  assert((!plan || plan->nodeStage.size() == graph.numNodes()) &&
         "plan does not match graph");
  json::Array nodes, edges, values, params;
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const NodeCost &c = graph.cost(n);
    int64_t stage = plan ? int64_t(plan->nodeStage[n]) : -1;
    int64_t device = plan && plan->nodeStage[n] < plan->numStages()
                         ? int64_t(plan->stageDevice[plan->nodeStage[n]])
                         : -1;
    json::Object node{
        {"id", int64_t(n)},        {"op", graph.type(n)},
        {"scope", graph.scope(n)}, {"fwd_ms", c.fwdMs},
        {"bwd_ms", c.bwdMs},       {"param_bytes", graph.nodeParamBytes(n)},
        {"act_bytes", c.actBytes}, {"out_bytes", c.outBytes},
        {"stage", stage},          {"device", device}};
    if (c.bwdWeightMs > 0)
      node["bwd_weight_ms"] = c.bwdWeightMs;
    if (plan && plan->replicated(n))
      node["replicated"] = true;
    if (plan && plan->forwarded(n))
      node["forwarded"] = true;
    nodes.push_back(std::move(node));
  }
  for (ValueId v = 0; v < graph.numValues(); ++v) {
    NodeId p = graph.producer(v);
    json::Array dsts;
    for (NodeId c : graph.consumers(v)) {
      dsts.push_back(int64_t(c));
      if (p != kNoNode)
        edges.push_back(json::Object{{"src", int64_t(p)},
                                     {"dst", int64_t(c)},
                                     {"bytes", graph.valueBytes(v)}});
    }
    values.push_back(json::Object{{"id", int64_t(v)},
                                  {"src", p == kNoNode ? -1 : int64_t(p)},
                                  {"bytes", graph.valueBytes(v)},
                                  {"grad", graph.valueNeedsGrad(v)},
                                  {"dsts", std::move(dsts)}});
  }
  for (ParamId p = 0; p < graph.numParams(); ++p) {
    json::Array readers;
    for (NodeId r : graph.paramReaders(p))
      readers.push_back(int64_t(r));
    json::Object param{{"id", int64_t(p)},
                       {"name", graph.paramName(p)},
                       {"bytes", graph.paramBytes(p)},
                       {"readers", std::move(readers)}};
    if (graph.paramFrozen(p))
      param["frozen"] = true;
    params.push_back(std::move(param));
  }
  json::Object root{{"version", 1},
                    {"nodes", std::move(nodes)},
                    {"edges", std::move(edges)},
                    {"values", std::move(values)},
                    {"params", std::move(params)}};
  if (plan) {
    json::Array stageDevice;
    for (DeviceId d : plan->stageDevice)
      stageDevice.push_back(int64_t(d));
    root["stage_device"] = std::move(stageDevice);
    if (llvm::any_of(replicas, [](int64_t r) { return r != 1; }))
      root["replicas"] = json::Array(replicas);
  }
  return std::move(root);
}

namespace {
/// Typed field access that reports the first problem through json::Path.
class FieldReader {
public:
  explicit FieldReader(json::Path path) : path(path) {}

  const json::Array *array(const json::Object &obj, llvm::StringRef key,
                           bool required) {
    const json::Value *v = obj.get(key);
    if (!v) {
      if (required)
        path.field(key).report("missing required array");
      return nullptr;
    }
    const json::Array *a = v->getAsArray();
    if (!a) {
      path.field(key).report("expected an array");
      failed = true;
    }
    return a;
  }

  /// Signed integer (ids may be -1).
  bool integer(const json::Value &v, int64_t &out, json::Path at) {
    if (std::optional<int64_t> i = v.getAsInteger()) {
      out = *i;
      return true;
    }
    std::optional<double> d = v.getAsNumber();
    if (d && std::floor(*d) == *d && std::fabs(*d) < 9e18) {
      out = int64_t(*d);
      return true;
    }
    at.report("expected an integer");
    return false;
  }

  bool integer(const json::Object &obj, llvm::StringRef key, int64_t &out,
               json::Path at, bool required) {
    const json::Value *v = obj.get(key);
    if (!v) {
      if (required)
        at.field(key).report("missing required integer");
      return !required;
    }
    return integer(*v, out, at.field(key));
  }

  /// An id in [lo, limit).
  bool id(const json::Value &v, int64_t lo, size_t limit, int64_t &out,
          json::Path at) {
    if (!integer(v, out, at))
      return false;
    if (out < lo || out >= int64_t(limit)) {
      at.report("id out of range");
      return false;
    }
    return true;
  }

  /// Set when array() reported a problem (it returns null then, as it does
  /// for an absent optional array).
  bool failed = false;

private:
  json::Path path;
};
} // namespace

Expected<GraphWithPlan>
ftpipe::partition::graphFromJSON(const json::Value &value) {
  json::Path::Root root("graph");
  json::Path path(root);
  FieldReader rd(path);
  auto fail = [&]() -> Error { return root.getError(); };

  const json::Object *obj = value.getAsObject();
  if (!obj) {
    path.report("expected an object");
    return fail();
  }
  const json::Array *nodes = rd.array(*obj, "nodes", true);
  if (!nodes)
    return fail();
  json::Path nodesPath = path.field("nodes");

  GraphBuilder b;
  std::vector<int64_t> nodeStage(nodes->size(), -1),
      nodeDevice(nodes->size(), -1);
  std::vector<bool> nodeReplicated(nodes->size(), false),
      nodeForwarded(nodes->size(), false);
  std::vector<uint64_t> nodeParamBytes(nodes->size(), 0);
  for (size_t i = 0; i < nodes->size(); ++i) {
    json::Path at = nodesPath.index(i);
    const json::Object *n = (*nodes)[i].getAsObject();
    if (!n) {
      at.report("expected an object");
      return fail();
    }
    int64_t id = int64_t(i);
    NodeCost c;
    if (!rd.integer(*n, "id", id, at, false) ||
        !detail::readNumber(*n, "fwd_ms", c.fwdMs, at, true) ||
        !detail::readNumber(*n, "bwd_ms", c.bwdMs, at, true) ||
        !detail::readNumber(*n, "bwd_weight_ms", c.bwdWeightMs, at, false) ||
        !detail::readUnsigned(*n, "act_bytes", c.actBytes, at, false) ||
        !detail::readUnsigned(*n, "out_bytes", c.outBytes, at, false) ||
        !detail::readUnsigned(*n, "param_bytes", nodeParamBytes[i], at,
                              false) ||
        !rd.integer(*n, "stage", nodeStage[i], at, false) ||
        !rd.integer(*n, "device", nodeDevice[i], at, false))
      return fail();
    if (id != int64_t(i)) {
      at.field("id").report("node ids must be 0, 1, 2, ... in order");
      return fail();
    }
    for (auto [key, flags] : {std::make_pair("replicated", &nodeReplicated),
                              std::make_pair("forwarded", &nodeForwarded)}) {
      const json::Value *r = n->get(key);
      if (!r)
        continue;
      std::optional<bool> flag = r->getAsBoolean();
      if (!flag) {
        at.field(key).report("expected true or false");
        return fail();
      }
      (*flags)[i] = *flag;
    }
    b.addNode(n->getString("scope").value_or(""),
              n->getString("op").value_or(""), c);
  }

  // Values: the lossless array, or grouped edges.
  const json::Array *values = rd.array(*obj, "values", false);
  const json::Array *edges = values ? nullptr : rd.array(*obj, "edges", false);
  const json::Array *params = rd.array(*obj, "params", false);
  if (rd.failed)
    return fail();
  if (values) {
    json::Path vp = path.field("values");
    for (size_t i = 0; i < values->size(); ++i) {
      json::Path at = vp.index(i);
      const json::Object *v = (*values)[i].getAsObject();
      if (!v) {
        at.report("expected an object");
        return fail();
      }
      int64_t src = -1;
      uint64_t bytes = 0;
      if (!rd.integer(*v, "src", src, at, true) ||
          !detail::readUnsigned(*v, "bytes", bytes, at, true))
        return fail();
      if (src < -1 || src >= int64_t(nodes->size())) {
        at.field("src").report("node id out of range");
        return fail();
      }
      const json::Array *dsts = v->getArray("dsts");
      if (!dsts) {
        at.field("dsts").report("missing required array");
        return fail();
      }
      std::vector<NodeId> consumers;
      for (size_t j = 0; j < dsts->size(); ++j) {
        int64_t dst = 0;
        if (!rd.id((*dsts)[j], 0, nodes->size(), dst,
                   at.field("dsts").index(j)))
          return fail();
        consumers.push_back(NodeId(dst));
      }
      b.addValue(src < 0 ? kNoNode : NodeId(src), bytes, consumers,
                 v->getBoolean("grad").value_or(true));
    }
  } else if (edges) {
    json::Path ep = path.field("edges");
    // (src, bytes) -> values with that key; a new value when the consumer is
    // already taken (two same-sized results feeding one op).
    std::map<std::pair<int64_t, uint64_t>, std::vector<ValueId>> byKey;
    std::vector<std::vector<NodeId>> consumersOf;
    std::vector<std::pair<int64_t, uint64_t>> keyOf;
    for (size_t i = 0; i < edges->size(); ++i) {
      json::Path at = ep.index(i);
      const json::Object *e = (*edges)[i].getAsObject();
      if (!e) {
        at.report("expected an object");
        return fail();
      }
      int64_t src = 0, dst = 0;
      uint64_t bytes = 0;
      if (!rd.integer(*e, "src", src, at, true) ||
          !rd.integer(*e, "dst", dst, at, true) ||
          !detail::readUnsigned(*e, "bytes", bytes, at, true))
        return fail();
      if (src < 0 || src >= int64_t(nodes->size()) || dst < 0 ||
          dst >= int64_t(nodes->size())) {
        at.report("node id out of range");
        return fail();
      }
      std::vector<ValueId> &candidates = byKey[{src, bytes}];
      ValueId chosen = ~ValueId(0);
      for (ValueId v : candidates)
        if (!llvm::is_contained(consumersOf[v], NodeId(dst))) {
          chosen = v;
          break;
        }
      if (chosen == ~ValueId(0)) {
        chosen = ValueId(consumersOf.size());
        consumersOf.emplace_back();
        keyOf.push_back({src, bytes});
        candidates.push_back(chosen);
      }
      consumersOf[chosen].push_back(NodeId(dst));
    }
    for (size_t v = 0; v < consumersOf.size(); ++v)
      b.addValue(NodeId(keyOf[v].first), keyOf[v].second, consumersOf[v]);
  }

  if (params) {
    json::Path pp = path.field("params");
    for (size_t i = 0; i < params->size(); ++i) {
      json::Path at = pp.index(i);
      const json::Object *p = (*params)[i].getAsObject();
      if (!p) {
        at.report("expected an object");
        return fail();
      }
      uint64_t bytes = 0;
      if (!detail::readUnsigned(*p, "bytes", bytes, at, true))
        return fail();
      ParamId id = b.addParam(p->getString("name").value_or(""), bytes,
                              p->getBoolean("frozen").value_or(false));
      if (const json::Array *readers = p->getArray("readers"))
        for (size_t j = 0; j < readers->size(); ++j) {
          int64_t r = 0;
          if (!rd.id((*readers)[j], 0, nodes->size(), r,
                     at.field("readers").index(j)))
            return fail();
          b.addParamUse(NodeId(r), id);
        }
    }
  } else {
    for (size_t i = 0; i < nodes->size(); ++i)
      if (nodeParamBytes[i] > 0) {
        const json::Object *n = (*nodes)[i].getAsObject();
        std::string name =
            (n->getString("scope").value_or("node" + std::to_string(i)) +
             ".params")
                .str();
        b.addParamUse(NodeId(i), b.addParam(name, nodeParamBytes[i]));
      }
  }

  Expected<Graph> graph = b.build();
  if (!graph)
    return makeError("graph: " + llvm::toString(graph.takeError()));
  GraphWithPlan result{std::move(*graph), std::nullopt, {}};

  // The replicas of the plan's devices.
  const json::Array *replicas = rd.array(*obj, "replicas", false);
  if (rd.failed)
    return fail();
  if (replicas)
    for (size_t d = 0; d < replicas->size(); ++d) {
      int64_t r = 0;
      if (!rd.integer((*replicas)[d], r, path.field("replicas").index(d)))
        return fail();
      if (r < 1)
        return makeError(llvm::formatv("graph: replicas[{0}] is {1}", d, r));
      result.replicas.push_back(r);
    }

  // The plan, when every node has one.
  size_t placed = llvm::count_if(nodeStage, [](int64_t s) { return s >= 0; });
  if (placed == 0) {
    if (replicas)
      return makeError("graph: replicas without a plan");
    return std::move(result);
  }
  if (placed != nodeStage.size())
    return makeError(
        llvm::formatv("graph: {0} of {1} nodes have a stage; give all or none",
                      placed, nodeStage.size()));
  Plan plan;
  int64_t maxStage = *std::max_element(nodeStage.begin(), nodeStage.end());
  for (int64_t s : nodeStage)
    plan.nodeStage.push_back(StageId(s));
  const json::Array *sd = rd.array(*obj, "stage_device", false);
  if (rd.failed)
    return fail();
  if (sd) {
    for (size_t s = 0; s < sd->size(); ++s) {
      int64_t d = 0;
      if (!rd.integer((*sd)[s], d, path.field("stage_device").index(s)))
        return fail();
      if (d < 0)
        return makeError(
            llvm::formatv("graph: stage_device[{0}] is {1}", s, d));
      plan.stageDevice.push_back(DeviceId(d));
    }
    if (int64_t(plan.stageDevice.size()) <= maxStage)
      return makeError(llvm::formatv(
          "graph: stage_device lists {0} stages but nodes use stage {1}",
          plan.stageDevice.size(), maxStage));
  } else {
    std::vector<int64_t> dev(size_t(maxStage) + 1, -1);
    for (size_t n = 0; n < nodeStage.size(); ++n) {
      int64_t &d = dev[size_t(nodeStage[n])];
      if (nodeDevice[n] < 0)
        return makeError(llvm::formatv("graph: node {0} has a stage but no "
                                       "device",
                                       n));
      if (d >= 0 && d != nodeDevice[n])
        return makeError(
            llvm::formatv("graph: stage {0} is on device {1} and on device {2}",
                          nodeStage[n], d, nodeDevice[n]));
      d = nodeDevice[n];
    }
    for (int64_t d : dev)
      plan.stageDevice.push_back(d < 0 ? 0 : DeviceId(d));
  }
  for (size_t n = 0; n < nodeStage.size(); ++n)
    if (nodeDevice[n] >= 0 &&
        plan.stageDevice[plan.nodeStage[n]] != DeviceId(nodeDevice[n]))
      return makeError(llvm::formatv(
          "graph: node {0} says device {1} but its stage {2} is on device {3}",
          n, nodeDevice[n], plan.nodeStage[n],
          plan.stageDevice[plan.nodeStage[n]]));
  if (llvm::is_contained(nodeReplicated, true))
    plan.nodeReplicated = std::move(nodeReplicated);
  if (llvm::is_contained(nodeForwarded, true))
    plan.nodeForwarded = std::move(nodeForwarded);
  if (replicas) {
    DeviceId devices =
        *std::max_element(plan.stageDevice.begin(), plan.stageDevice.end()) + 1;
    if (result.replicas.size() < devices)
      return makeError(
          llvm::formatv("graph: replicas name {0} devices, the plan uses {1}",
                        result.replicas.size(), devices));
  }
  result.plan = std::move(plan);
  return std::move(result);
}

Error ftpipe::partition::saveGraphJSON(llvm::StringRef path, const Graph &graph,
                                       const Plan *plan) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return makeError(
        llvm::formatv("cannot write '{0}': {1}", path, ec.message()));
  os << llvm::formatv("{0:2}", graphToJSON(graph, plan)) << "\n";
  return Error::success();
}

Expected<GraphWithPlan> ftpipe::partition::loadGraphJSON(llvm::StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> text =
      support::readBoundedFile(path, "graph file", support::kMaxInputFileBytes,
                               support::FileKinds::RegularOrStream);
  if (!text)
    return text.takeError();
  Expected<json::Value> json = support::parseBoundedJSON((*text)->getBuffer());
  if (!json)
    return makeError(
        llvm::formatv("{0}: {1}", path, llvm::toString(json.takeError())));
  Expected<GraphWithPlan> g = graphFromJSON(*json);
  if (!g)
    return makeError(
        llvm::formatv("{0}: {1}", path, llvm::toString(g.takeError())));
  return g;
}
