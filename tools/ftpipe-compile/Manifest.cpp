//===- Manifest.cpp - The manifest of compiled device artifacts -----------===//
//
// buildManifest (Manifest.h): everything the runtime needs to drive the
// artifacts without reading IR, read off the attributes of
// docs/StagePrograms.md.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "FTPipe/Analysis/IndexBounds.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <set>

using namespace mlir;
namespace json = llvm::json;

namespace {

std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

json::Object describeTensor(Type type) {
  auto shaped = cast<ShapedType>(type);
  json::Array shape;
  for (int64_t size : shaped.getShape())
    shape.push_back(size);
  return json::Object{{"shape", std::move(shape)},
                      {"dtype", typeName(shaped.getElementType())}};
}

int64_t intAttr(Operation *op, StringRef name, int64_t fallback) {
  auto attr = op->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : fallback;
}

/// A data input's name: `ftpipe.input`, else the argument's location name
/// (the model generator names its inputs so), else argN.
std::string inputName(func::FuncOp function, unsigned index) {
  if (auto name = function.getArgAttrOfType<StringAttr>(index, "ftpipe.input"))
    return name.str();
  Location loc = function.getArgument(index).getLoc();
  if (auto nameLoc = dyn_cast<NameLoc>(loc))
    return nameLoc.getName().str();
  return "arg" + std::to_string(index);
}

} // namespace

int64_t mlir::ftpipe::getEntryDevice(func::FuncOp function) {
  return intAttr(function, "ftpipe.device", 0);
}

json::Object mlir::ftpipe::buildManifest(
    ModuleOp module, StringRef target, int64_t devices,
    llvm::function_ref<std::string(int64_t)> artifactName) {
  json::Array entries, tensors;
  std::map<int64_t, std::set<int64_t>> stagesOf;
  /// Per stage, its entry points by kind ("forward", "backward", and for a
  /// split backward "backward_input" and "backward_weight").
  std::map<int64_t, std::map<std::string, std::string>> stageEntries;
  std::map<std::string, json::Object> parameters;
  std::map<std::string, std::set<int64_t>> parameterDevices;
  std::map<std::string, json::Object> inputs;
  std::map<std::string, std::set<int64_t>> inputDevices;
  std::map<std::string, IndexBound> inputBounds;
  json::Value loss = nullptr;

  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal() || function.isPrivate())
      continue;
    int64_t device = getEntryDevice(function);
    int64_t stage = intAttr(function, "ftpipe.stage", 0);
    auto entryAttr = function->getAttrOfType<StringAttr>("ftpipe.entry");
    std::string kind = entryAttr ? entryAttr.str() : "forward";
    std::string name = function.getSymName().str();
    stagesOf[device].insert(stage);
    stageEntries[stage][kind] = name;
    // A split backward's input part sends what the whole backward sends:
    // each edge is listed once, from the whole one.
    bool repeatsSends = kind == "backward_input";

    json::Array arguments;
    for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
      Type type = function.getArgument(i).getType();
      json::Object argument{{"index", int64_t(i)}};
      if (function.getArgAttr(i, "ftpipe.microbatch")) {
        argument["kind"] = "microbatch";
        argument["dtype"] = "index";
      } else if (function.getArgAttr(i, "ftpipe.param")) {
        auto hfName = function.getArgAttrOfType<StringAttr>(i, "ftpipe.name");
        std::string param = hfName ? hfName.str() : "arg" + std::to_string(i);
        argument["kind"] = "param";
        argument["name"] = param;
        json::Object description = describeTensor(type);
        description["owner"] =
            function.getArgAttrOfType<IntegerAttr>(i, "ftpipe.owner")
                ? function.getArgAttrOfType<IntegerAttr>(i, "ftpipe.owner")
                      .getInt()
                : device;
        parameters[param] = std::move(description);
        parameterDevices[param].insert(device);
      } else if (auto saved = function.getArgAttrOfType<IntegerAttr>(
                     i, "ftpipe.saved")) {
        argument["kind"] = "saved";
        argument["saved"] = saved.getInt();
      } else if (auto carried = function.getArgAttrOfType<IntegerAttr>(
                     i, "ftpipe.weight_saved")) {
        argument["kind"] = "weight_saved";
        argument["saved"] = carried.getInt();
      } else {
        std::string input = inputName(function, i);
        argument["kind"] = "input";
        argument["name"] = input;
        inputs[input] = describeTensor(type);
        // Entry points that read the input differently (a backward reads
        // saved values) find different tables or none: the smallest holds.
        if (std::optional<IndexBound> bound =
                findIndexBound(function.getArgument(i))) {
          IndexBound &known =
              inputBounds.try_emplace(input, *bound).first->second;
          known.bound = std::min(known.bound, bound->bound);
          if (bound->ignored)
            known.ignored = bound->ignored;
        }
        inputDevices[input].insert(device);
      }
      if (isa<ShapedType>(type))
        for (auto &field : describeTensor(type))
          argument[field.first] = field.second;
      arguments.push_back(std::move(argument));
    }

    json::Array results;
    for (unsigned i = 0, e = function.getNumResults(); i < e; ++i) {
      json::Object result = describeTensor(function.getResultTypes()[i]);
      result["index"] = int64_t(i);
      if (function.getResultAttr(i, "ftpipe.loss") ||
          (!entryAttr && i == 0 && e == 1)) {
        result["kind"] = "loss";
        loss = json::Object{{"device", device},
                            {"stage", stage},
                            {"entry", name},
                            {"result", int64_t(i)}};
      } else if (auto saved = function.getResultAttrOfType<IntegerAttr>(
                     i, "ftpipe.saved")) {
        result["kind"] = "saved";
        result["saved"] = saved.getInt();
      } else if (auto carried = function.getResultAttrOfType<IntegerAttr>(
                     i, "ftpipe.weight_saved")) {
        result["kind"] = "weight_saved";
        result["saved"] = carried.getInt();
      } else if (auto grad = function.getResultAttrOfType<StringAttr>(
                     i, "ftpipe.grad")) {
        result["kind"] = "grad";
        result["name"] = grad.str();
      } else {
        result["kind"] = "output";
      }
      results.push_back(std::move(result));
    }

    json::Array transfers;
    function.walk([&](Operation *op) {
      if (auto send = dyn_cast<mlir::ftpipe::SendOp>(op)) {
        json::Object t = describeTensor(send.getValue().getType());
        t["direction"] = "send";
        t["peer"] = int64_t(send.getPeer());
        t["tag"] = int64_t(send.getTag());
        transfers.push_back(json::Object(t));
        if (repeatsSends)
          return;
        json::Object edge = describeTensor(send.getValue().getType());
        edge["from"] = device;
        edge["to"] = int64_t(send.getPeer());
        edge["tag"] = int64_t(send.getTag());
        tensors.push_back(std::move(edge));
      } else if (auto recv = dyn_cast<mlir::ftpipe::RecvOp>(op)) {
        json::Object t = describeTensor(recv.getType());
        t["direction"] = "recv";
        t["peer"] = int64_t(recv.getPeer());
        t["tag"] = int64_t(recv.getTag());
        transfers.push_back(std::move(t));
      }
    });

    entries.push_back(json::Object{{"name", name},
                                   {"symbol", "_mlir_ciface_" + name},
                                   {"device", device},
                                   {"stage", stage},
                                   {"kind", kind},
                                   {"arguments", std::move(arguments)},
                                   {"results", std::move(results)},
                                   {"transfers", std::move(transfers)}});
  }

  json::Array deviceList;
  for (int64_t device = 0; device < devices; ++device) {
    json::Array stages;
    for (int64_t stage : stagesOf[device])
      stages.push_back(stage);
    deviceList.push_back(json::Object{{"id", device},
                                      {"artifact", artifactName(device)},
                                      {"stages", std::move(stages)}});
  }
  json::Array stageList;
  for (auto &[stage, names] : stageEntries) {
    int64_t device = 0;
    for (auto &[d, stages] : stagesOf)
      if (stages.count(stage))
        device = d;
    json::Object entry{{"id", stage}, {"device", device}};
    for (auto &[kind, name] : names)
      entry[kind] = name;
    stageList.push_back(std::move(entry));
  }
  json::Object parameterMap;
  for (auto &[name, description] : parameters) {
    int64_t owner = description.getInteger("owner").value_or(0);
    json::Array copies;
    for (int64_t device : parameterDevices[name])
      if (device != owner)
        copies.push_back(device);
    description["copies"] = std::move(copies);
    parameterMap[name] = std::move(description);
  }
  json::Object inputMap;
  for (auto &[name, description] : inputs) {
    json::Array on;
    for (int64_t device : inputDevices[name])
      on.push_back(device);
    description["devices"] = std::move(on);
    if (auto bound = inputBounds.find(name); bound != inputBounds.end()) {
      description["index_bound"] = bound->second.bound;
      if (bound->second.ignored)
        description["index_ignored"] = *bound->second.ignored;
    }
    inputMap[name] = std::move(description);
  }
  // The stages in an order that respects their dependencies
  // (ftpipe.stage_order of ftpipe-split-devices; a forward-only module has
  // one stage).
  json::Array stageOrder;
  if (auto order =
          module->getAttrOfType<DenseI64ArrayAttr>("ftpipe.stage_order"))
    for (int64_t stage : order.asArrayRef())
      stageOrder.push_back(stage);
  else
    for (auto &entry : stageEntries)
      stageOrder.push_back(entry.first);
  return json::Object{{"format", "ftpipe-manifest"},
                      {"stage_order", std::move(stageOrder)},
                      {"version", 1},
                      {"target", target.str()},
                      {"devices", std::move(deviceList)},
                      {"stages", std::move(stageList)},
                      {"entry_points", std::move(entries)},
                      {"tensors", std::move(tensors)},
                      {"parameters", std::move(parameterMap)},
                      {"inputs", std::move(inputMap)},
                      {"loss", std::move(loss)}};
}
