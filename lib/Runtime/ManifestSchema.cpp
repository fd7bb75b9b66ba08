//===- ManifestSchema.cpp - manifest.json, object by object ---------------===//
//
// toJSON and fromJSON of every object of the manifest (ManifestSchema.h),
// one pair per struct. The readers use llvm::json's mappers, so a missing or
// mistyped field is reported with its path; they check what one object can
// say wrong on its own (an unknown kind, a negative dimension), not the
// references between objects (readManifest's).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ManifestSchema.h"
#include "FTPipe/Support/IndexRanges.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>

using namespace ftpipe::runtime;
namespace json = llvm::json;

namespace {

/// The object `value` holds, to add fields to.
json::Object &objectOf(json::Value &value) { return *value.getAsObject(); }

/// `tensor`'s fields written into `object`.
json::Object withTensor(const ManifestTensor &tensor, json::Object object) {
  json::Value fields = toJSON(tensor);
  for (auto &field : objectOf(fields))
    object[field.first] = std::move(field.second);
  return object;
}

struct EntryValueKindName {
  EntryValue::Kind kind;
  const char *name;
};
const EntryValueKindName entryValueKinds[] = {
    {EntryValue::Kind::Microbatch, "microbatch"},
    {EntryValue::Kind::Param, "param"},
    {EntryValue::Kind::Input, "input"},
    {EntryValue::Kind::Saved, "saved"},
    {EntryValue::Kind::Loss, "loss"},
    {EntryValue::Kind::Grad, "grad"},
    {EntryValue::Kind::Output, "output"},
    {EntryValue::Kind::WeightSaved, "weight_saved"},
    {EntryValue::Kind::Metric, "metric"}};

/// Saved and WeightSaved values carry their index (`saved`).
bool isIndexed(EntryValue::Kind kind) {
  return kind == EntryValue::Kind::Saved ||
         kind == EntryValue::Kind::WeightSaved;
}

struct EntryPointKindName {
  bool backward;
  EntryPoint::Part part;
  const char *name;
};
const EntryPointKindName entryPointKinds[] = {
    {false, EntryPoint::Part::Whole, "forward"},
    {true, EntryPoint::Part::Whole, "backward"},
    {true, EntryPoint::Part::Input, "backward_input"},
    {true, EntryPoint::Part::Weight, "backward_weight"}};

bool isNamed(EntryValue::Kind kind) {
  return kind == EntryValue::Kind::Param || kind == EntryValue::Kind::Grad ||
         kind == EntryValue::Kind::Input || kind == EntryValue::Kind::Metric;
}

/// A table by name (`parameters`, `inputs`).
template <typename T>
json::Object tableToJSON(const std::map<std::string, T> &table) {
  json::Object object;
  for (const auto &[name, value] : table)
    object[name] = toJSON(value);
  return object;
}

/// Arguments or results, each with its position as `index`.
json::Array entryValuesToJSON(const std::vector<EntryValue> &values) {
  json::Array array;
  for (auto [i, value] : llvm::enumerate(values)) {
    json::Value object = toJSON(value);
    objectOf(object)["index"] = int64_t(i);
    array.push_back(std::move(object));
  }
  return array;
}

/// Reads `field` of `mapper` as arguments or results; an `index` that is
/// given must be the value's position.
bool entryValuesFromJSON(const json::Value &entry, llvm::StringLiteral field,
                         std::vector<EntryValue> &values, json::Path path) {
  json::ObjectMapper mapper(entry, path);
  if (!mapper.map(field, values))
    return false;
  const json::Array &array = *entry.getAsObject()->getArray(field);
  for (auto [i, value] : llvm::enumerate(array)) {
    std::optional<int64_t> index = value.getAsObject()->getInteger("index");
    if (value.getAsObject()->get("index") && index != int64_t(i)) {
      path.field(field).index(i).field("index").report(
          "expected the value's position");
      return false;
    }
  }
  return true;
}

} // namespace

llvm::StringRef ftpipe::runtime::entryPointKind(const EntryPoint &entry) {
  return llvm::find_if(entryPointKinds,
                       [&](auto &k) {
                         return k.backward == entry.backward &&
                                (!k.backward || k.part == entry.part);
                       })
      ->name;
}

bool ftpipe::runtime::setEntryPointKind(EntryPoint &entry,
                                        llvm::StringRef kind) {
  const auto *it =
      llvm::find_if(entryPointKinds, [&](auto &k) { return kind == k.name; });
  if (it == std::end(entryPointKinds))
    return false;
  entry.backward = it->backward;
  entry.part = it->part;
  return true;
}

std::string &ManifestStage::entryOf(const EntryPoint &entry) {
  if (!entry.backward)
    return forward;
  switch (entry.part) {
  case EntryPoint::Part::Whole:
    return backward;
  case EntryPoint::Part::Input:
    return backwardInput;
  case EntryPoint::Part::Weight:
    return backwardWeight;
  }
  llvm_unreachable("unknown entry point part");
}

const std::string &ManifestStage::entryOf(const EntryPoint &entry) const {
  return const_cast<ManifestStage *>(this)->entryOf(entry);
}

json::Value ftpipe::runtime::toJSON(const ManifestTensor &tensor) {
  json::Object object{{"shape", tensor.shape},
                      {"dtype", manifestDTypeName(tensor.type)}};
  if (tensor.indexBound)
    object["index_bound"] = *tensor.indexBound;
  if (tensor.indexIgnored)
    object["index_ignored"] = *tensor.indexIgnored;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestTensor &tensor,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string dtype;
  if (!mapper || !mapper.map("dtype", dtype) ||
      !mapper.map("shape", tensor.shape) ||
      !mapper.mapOptional("index_bound", tensor.indexBound) ||
      !mapper.mapOptional("index_ignored", tensor.indexIgnored))
    return false;
  if (tensor.indexBound && *tensor.indexBound < 1) {
    path.field("index_bound").report("must be at least 1");
    return false;
  }
  std::optional<DType> type = parseManifestDType(dtype);
  if (!type) {
    path.field("dtype").report("unknown element type");
    return false;
  }
  if (llvm::any_of(tensor.shape, [](int64_t d) { return d < 0; })) {
    path.field("shape").report("negative dimension");
    return false;
  }
  if (!tensorBytes(*type, tensor.shape)) {
    path.field("shape").report("larger than 256 GiB");
    return false;
  }
  tensor.type = *type;
  return true;
}

json::Value ftpipe::runtime::toJSON(const EntryValue &value) {
  const auto *kind = llvm::find_if(
      entryValueKinds, [&](auto &k) { return k.kind == value.kind; });
  // The micro-batch is an index passed by value: no shape.
  json::Object object = value.kind == EntryValue::Kind::Microbatch
                            ? json::Object{{"dtype", "index"}}
                            : std::move(*toJSON(value.tensor).getAsObject());
  object["kind"] = kind->name;
  if (isNamed(value.kind))
    object["name"] = value.name;
  if (isIndexed(value.kind))
    object["saved"] = value.saved;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value, EntryValue &entry,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string kind;
  if (!mapper || !mapper.map("kind", kind) ||
      !mapper.mapOptional("name", entry.name) ||
      !mapper.mapOptional("saved", entry.saved))
    return false;
  if (kind == "microbatch") {
    entry.kind = EntryValue::Kind::Microbatch;
    entry.tensor = {{}, DType::I64};
    return true;
  }
  if (!fromJSON(value, entry.tensor, path))
    return false;
  const auto *it =
      llvm::find_if(entryValueKinds, [&](auto &k) { return kind == k.name; });
  if (it == std::end(entryValueKinds)) {
    path.field("kind").report("unknown kind");
    return false;
  }
  entry.kind = it->kind;
  if (isNamed(entry.kind) && entry.name.empty()) {
    path.field("name").report("missing");
    return false;
  }
  if (isIndexed(entry.kind) && entry.saved < 0) {
    path.field("saved").report("missing or negative");
    return false;
  }
  return true;
}

json::Value ftpipe::runtime::toJSON(const ManifestTransfer &transfer) {
  return withTensor(transfer.tensor,
                    json::Object{{"direction", transfer.send ? "send" : "recv"},
                                 {"peer", transfer.peer},
                                 {"tag", transfer.tag}});
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               ManifestTransfer &transfer, json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string direction;
  if (!mapper || !mapper.map("direction", direction) ||
      !mapper.map("peer", transfer.peer) || !mapper.map("tag", transfer.tag) ||
      !fromJSON(value, transfer.tensor, path))
    return false;
  if (direction != "send" && direction != "recv") {
    path.field("direction").report("expected send or recv");
    return false;
  }
  transfer.send = direction == "send";
  return true;
}

json::Value ftpipe::runtime::toJSON(const EntryPoint &entry) {
  return json::Object{{"name", entry.name},
                      {"symbol", entry.symbol},
                      {"device", entry.device},
                      {"stage", entry.stage},
                      {"kind", entryPointKind(entry)},
                      {"arguments", entryValuesToJSON(entry.arguments)},
                      {"results", entryValuesToJSON(entry.results)},
                      {"transfers", entry.transfers}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value, EntryPoint &entry,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string kind;
  if (!mapper || !mapper.map("name", entry.name) ||
      !mapper.map("symbol", entry.symbol) ||
      !mapper.map("device", entry.device) ||
      !mapper.map("stage", entry.stage) || !mapper.map("kind", kind) ||
      !entryValuesFromJSON(value, "arguments", entry.arguments, path) ||
      !entryValuesFromJSON(value, "results", entry.results, path) ||
      !mapper.mapOptional("transfers", entry.transfers))
    return false;
  if (!setEntryPointKind(entry, kind)) {
    path.field("kind").report(
        "expected forward, backward, backward_input or backward_weight");
    return false;
  }
  return true;
}

json::Value ftpipe::runtime::toJSON(const ManifestDevice &device) {
  return json::Object{{"id", device.id},
                      {"artifact", device.artifact},
                      {"stages", device.stages}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestDevice &device,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("id", device.id) &&
         mapper.map("artifact", device.artifact) &&
         mapper.mapOptional("stages", device.stages);
}

json::Value ftpipe::runtime::toJSON(const ManifestStage &stage) {
  json::Object object{
      {"id", stage.id}, {"device", stage.device}, {"forward", stage.forward}};
  if (!stage.backward.empty())
    object["backward"] = stage.backward;
  if (!stage.backwardInput.empty())
    object["backward_input"] = stage.backwardInput;
  if (!stage.backwardWeight.empty())
    object["backward_weight"] = stage.backwardWeight;
  if (!stage.ops.empty())
    object["ops"] = ftpipe::support::indexRangesToJSON(stage.ops);
  if (stage.recomputes)
    object["recomputes"] = *stage.recomputes;
  if (stage.forwardMs)
    object["forward_ms"] = *stage.forwardMs;
  if (stage.backwardMs)
    object["backward_ms"] = *stage.backwardMs;
  if (stage.weightMs)
    object["backward_weight_ms"] = *stage.weightMs;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestStage &stage,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  if (!(mapper && mapper.map("id", stage.id) &&
        mapper.map("device", stage.device) &&
        mapper.map("forward", stage.forward) &&
        mapper.mapOptional("backward", stage.backward) &&
        mapper.mapOptional("backward_input", stage.backwardInput) &&
        mapper.mapOptional("backward_weight", stage.backwardWeight) &&
        mapper.mapOptional("recomputes", stage.recomputes) &&
        mapper.mapOptional("forward_ms", stage.forwardMs) &&
        mapper.mapOptional("backward_ms", stage.backwardMs) &&
        mapper.mapOptional("backward_weight_ms", stage.weightMs) &&
        (!value.getAsObject()->get("ops") ||
         ftpipe::support::indexRangesFromJSON(*value.getAsObject()->get("ops"),
                                              stage.ops, path.field("ops")))))
    return false;
  // Times schedule the run (zb-auto) and judge re-plans: finite, not
  // negative, and the weight part within the backward.
  for (auto [name, ms] : {std::pair{"forward_ms", stage.forwardMs},
                          std::pair{"backward_ms", stage.backwardMs},
                          std::pair{"backward_weight_ms", stage.weightMs}})
    if (ms && !(std::isfinite(*ms) && *ms >= 0.0)) {
      path.field(name).report("expected a finite time of at least 0 ms");
      return false;
    }
  if (stage.weightMs &&
      (!stage.backwardMs || *stage.weightMs > *stage.backwardMs)) {
    path.field("backward_weight_ms")
        .report("the weight part of a backward needs backward_ms, and is at "
                "most it");
    return false;
  }
  return true;
}

json::Value ftpipe::runtime::toJSON(const ManifestEdge &edge) {
  return withTensor(
      edge.tensor,
      json::Object{{"from", edge.from}, {"to", edge.to}, {"tag", edge.tag}});
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestEdge &edge,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("from", edge.from) && mapper.map("to", edge.to) &&
         mapper.map("tag", edge.tag) && fromJSON(value, edge.tensor, path);
}

json::Value ftpipe::runtime::toJSON(const ManifestParameter &parameter) {
  json::Array copies;
  for (int64_t device : llvm::drop_begin(parameter.devices))
    copies.push_back(device);
  json::Object object{{"owner", parameter.devices.empty()
                                    ? json::Value(nullptr)
                                    : json::Value(parameter.devices.front())},
                      {"copies", std::move(copies)}};
  if (parameter.frozen)
    object["frozen"] = true;
  return withTensor(parameter.tensor, std::move(object));
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               ManifestParameter &parameter, json::Path path) {
  json::ObjectMapper mapper(value, path);
  int64_t owner = 0;
  std::vector<int64_t> copies;
  parameter.frozen = false;
  if (!mapper || !mapper.map("owner", owner) ||
      !mapper.mapOptional("copies", copies) ||
      !mapper.mapOptional("frozen", parameter.frozen) ||
      !fromJSON(value, parameter.tensor, path))
    return false;
  parameter.devices = {owner};
  llvm::append_range(parameter.devices, copies);
  return true;
}

json::Value ftpipe::runtime::toJSON(const ManifestInput &input) {
  return withTensor(input, json::Object{{"devices", input.devices}});
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestInput &input,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.mapOptional("devices", input.devices) &&
         fromJSON(value, static_cast<ManifestTensor &>(input), path);
}

json::Value ftpipe::runtime::toJSON(const ManifestLoss &loss) {
  return json::Object{{"device", loss.device},
                      {"stage", loss.stage},
                      {"entry", loss.entry},
                      {"result", loss.result}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestLoss &loss,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("device", loss.device) &&
         mapper.map("stage", loss.stage) && mapper.map("entry", loss.entry) &&
         mapper.map("result", loss.result);
}

json::Value ftpipe::runtime::toJSON(const ManifestCompile &compile) {
  return json::Object{{"model", compile.model},
                      {"arguments", compile.arguments},
                      {"plans_replicas", compile.plansReplicas}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               ManifestCompile &compile, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("model", compile.model) &&
         mapper.map("arguments", compile.arguments) &&
         mapper.mapOptional("plans_replicas", compile.plansReplicas);
}

json::Value ftpipe::runtime::toJSON(const ManifestDeviceMemory &memory) {
  return json::Object{{"device", memory.device},
                      {"counted", schedule::toJSON(memory.counted)},
                      {"inputs", schedule::toJSON(memory.inputs)}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               ManifestDeviceMemory &memory, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("device", memory.device) &&
         mapper.mapOptional("counted", memory.counted) &&
         mapper.map("inputs", memory.inputs);
}

json::Value ftpipe::runtime::toJSON(const ManifestFile &file) {
  json::Object object{{"format", kManifestFormat},
                      {"version", kManifestVersion},
                      {"target", file.target},
                      {"devices", file.devices},
                      {"stages", file.stages},
                      {"stage_order", file.stageOrder},
                      {"entry_points", file.entryPoints},
                      {"tensors", file.tensors},
                      {"parameters", tableToJSON(file.parameters)},
                      {"inputs", tableToJSON(file.inputs)},
                      {"loss", file.loss}};
  if (!file.memory.empty())
    object["memory"] = file.memory;
  if (file.training)
    object["training"] = *file.training;
  if (!file.deviceMemory.empty())
    object["device_memory"] = file.deviceMemory;
  if (file.replicas)
    object["replicas"] = *file.replicas;
  if (file.compile)
    object["compile"] = *file.compile;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ManifestFile &file,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string format;
  int64_t version = 0;
  if (!mapper || !mapper.map("format", format) ||
      !mapper.map("version", version))
    return false;
  if (format != kManifestFormat) {
    path.field("format").report("not an ftpipe-compile manifest of version 1");
    return false;
  }
  if (version != kManifestVersion) {
    path.field("version").report("not an ftpipe-compile manifest of version 1");
    return false;
  }
  return mapper.map("target", file.target) &&
         mapper.mapOptional("memory", file.memory) &&
         mapper.map("devices", file.devices) &&
         mapper.map("stages", file.stages) &&
         mapper.mapOptional("stage_order", file.stageOrder) &&
         mapper.map("entry_points", file.entryPoints) &&
         mapper.mapOptional("tensors", file.tensors) &&
         mapper.mapOptional("parameters", file.parameters) &&
         mapper.mapOptional("inputs", file.inputs) &&
         mapper.mapOptional("loss", file.loss) &&
         mapper.mapOptional("training", file.training) &&
         mapper.mapOptional("device_memory", file.deviceMemory) &&
         mapper.mapOptional("replicas", file.replicas) &&
         mapper.mapOptional("compile", file.compile);
}
