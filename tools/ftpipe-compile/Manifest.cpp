//===- Manifest.cpp - The manifest of compiled device artifacts -----------===//
//
// buildManifest (Manifest.h): everything the runtime needs to drive the
// artifacts without reading IR, read off the attributes of
// docs/StagePrograms.md into the schema's structs (ManifestSchema.h).
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "FTPipe/Analysis/IndexBounds.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <set>

using namespace mlir;
using mlir::ftpipe::IndexBound;
namespace rt = ::ftpipe::runtime;

namespace {

/// The runtime's element type of `type` (index is I64).
std::optional<rt::DType> dtypeOf(Type type) {
  if (type.isIndex())
    return rt::DType::I64;
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return rt::parseManifestDType(name);
}

/// `value`'s tensor, or an error at `function` naming `what`.
FailureOr<rt::ManifestTensor> describeTensor(func::FuncOp function, Type type,
                                             const llvm::Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  std::optional<rt::DType> dtype =
      shaped ? dtypeOf(shaped.getElementType()) : std::nullopt;
  if (!dtype)
    return function.emitError()
           << what << " is " << type << ", which the runtime has no tensor of";
  ArrayRef<int64_t> shape = shaped.getShape();
  return rt::ManifestTensor{{shape.begin(), shape.end()}, *dtype, {}, {}};
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

/// What buildManifest collects over the entry points before it writes the
/// per-name tables.
struct Collected {
  rt::ManifestFile file;
  std::map<int64_t, std::set<int64_t>> stagesOf;
  /// Per stage, its entry points' names (id and device filled in last).
  std::map<int64_t, rt::ManifestStage> stageEntries;
  /// Per parameter: its owner and every device that reads it.
  std::map<std::string, std::pair<int64_t, std::set<int64_t>>> parameterDevices;
  std::map<std::string, std::set<int64_t>> inputDevices;
  std::map<std::string, IndexBound> inputBounds;
};

LogicalResult addArguments(func::FuncOp function, int64_t device,
                           rt::EntryPoint &entry, Collected &collected) {
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    Type type = function.getArgument(i).getType();
    rt::EntryValue argument;
    if (function.getArgAttr(i, "ftpipe.microbatch")) {
      argument.kind = rt::EntryValue::Kind::Microbatch;
      argument.tensor = {{}, rt::DType::I64, {}, {}};
      entry.arguments.push_back(std::move(argument));
      continue;
    }
    FailureOr<rt::ManifestTensor> tensor =
        describeTensor(function, type, "argument " + llvm::Twine(i));
    if (failed(tensor))
      return failure();
    argument.tensor = *tensor;
    if (function.getArgAttr(i, "ftpipe.param")) {
      auto hfName = function.getArgAttrOfType<StringAttr>(i, "ftpipe.name");
      argument.kind = rt::EntryValue::Kind::Param;
      argument.name = hfName ? hfName.str() : "arg" + std::to_string(i);
      auto owner = function.getArgAttrOfType<IntegerAttr>(i, "ftpipe.owner");
      auto &[ownerDevice, readers] = collected.parameterDevices[argument.name];
      ownerDevice = owner ? owner.getInt() : device;
      readers.insert(device);
      rt::ManifestParameter &parameter =
          collected.file.parameters[argument.name];
      parameter.tensor = *tensor;
      parameter.frozen = function.getArgAttr(i, "ftpipe.frozen") != nullptr;
    } else if (auto saved =
                   function.getArgAttrOfType<IntegerAttr>(i, "ftpipe.saved")) {
      argument.kind = rt::EntryValue::Kind::Saved;
      argument.saved = saved.getInt();
    } else if (auto carried = function.getArgAttrOfType<IntegerAttr>(
                   i, "ftpipe.weight_saved")) {
      argument.kind = rt::EntryValue::Kind::WeightSaved;
      argument.saved = carried.getInt();
    } else {
      argument.kind = rt::EntryValue::Kind::Input;
      argument.name = inputName(function, i);
      static_cast<rt::ManifestTensor &>(collected.file.inputs[argument.name]) =
          *tensor;
      // Entry points that read the input differently (a backward reads
      // saved values) find different tables or none: the smallest holds.
      if (std::optional<IndexBound> bound =
              mlir::ftpipe::findIndexBound(function.getArgument(i))) {
        IndexBound &known =
            collected.inputBounds.try_emplace(argument.name, *bound)
                .first->second;
        known.bound = std::min(known.bound, bound->bound);
        if (bound->ignored)
          known.ignored = bound->ignored;
      }
      collected.inputDevices[argument.name].insert(device);
    }
    entry.arguments.push_back(std::move(argument));
  }
  return success();
}

LogicalResult addResults(func::FuncOp function, bool isEntry,
                         rt::EntryPoint &entry, Collected &collected) {
  // A model function (--forward-only) returns its loss alone or before its
  // metrics (ftpipe-model-gen --metrics).
  bool lossFirst =
      !isEntry && function.getNumResults() >= 1 &&
      llvm::all_of(llvm::seq<unsigned>(1, function.getNumResults()),
                   [&](unsigned k) {
                     return function.getResultAttr(k, "ftpipe.metric");
                   });
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i) {
    FailureOr<rt::ManifestTensor> tensor = describeTensor(
        function, function.getResultTypes()[i], "result " + llvm::Twine(i));
    if (failed(tensor))
      return failure();
    rt::EntryValue result;
    result.tensor = *tensor;
    if (function.getResultAttr(i, "ftpipe.loss") || (lossFirst && i == 0)) {
      result.kind = rt::EntryValue::Kind::Loss;
      collected.file.loss =
          rt::ManifestLoss{entry.device, entry.stage, int64_t(i), entry.name};
    } else if (auto saved = function.getResultAttrOfType<IntegerAttr>(
                   i, "ftpipe.saved")) {
      result.kind = rt::EntryValue::Kind::Saved;
      result.saved = saved.getInt();
    } else if (auto carried = function.getResultAttrOfType<IntegerAttr>(
                   i, "ftpipe.weight_saved")) {
      result.kind = rt::EntryValue::Kind::WeightSaved;
      result.saved = carried.getInt();
    } else if (auto metric = function.getResultAttrOfType<StringAttr>(
                   i, "ftpipe.metric")) {
      result.kind = rt::EntryValue::Kind::Metric;
      result.name = metric.str();
    } else if (auto grad =
                   function.getResultAttrOfType<StringAttr>(i, "ftpipe.grad")) {
      result.kind = rt::EntryValue::Kind::Grad;
      result.name = grad.str();
    } else {
      result.kind = rt::EntryValue::Kind::Output;
    }
    entry.results.push_back(std::move(result));
  }
  return success();
}

LogicalResult addTransfers(func::FuncOp function, rt::EntryPoint &entry,
                           Collected &collected) {
  WalkResult walk = function.walk([&](Operation *op) {
    auto send = dyn_cast<mlir::ftpipe::SendOp>(op);
    auto recv = dyn_cast<mlir::ftpipe::RecvOp>(op);
    if (!send && !recv)
      return WalkResult::advance();
    Type type = send ? send.getValue().getType() : recv.getType();
    FailureOr<rt::ManifestTensor> tensor =
        describeTensor(function, type, "a transferred value");
    if (failed(tensor))
      return WalkResult::interrupt();
    int64_t peer = send ? send.getPeer() : recv.getPeer();
    int64_t tag = send ? send.getTag() : recv.getTag();
    entry.transfers.push_back({bool(send), peer, tag, *tensor});
    // A split backward's input part sends what the whole backward sends:
    // each edge is listed once, from the whole one.
    if (send && entry.part != rt::EntryPoint::Part::Input)
      collected.file.tensors.push_back({entry.device, peer, tag, *tensor});
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

int64_t mlir::ftpipe::getEntryDevice(func::FuncOp function) {
  return intAttr(function, "ftpipe.device", 0);
}

FailureOr<rt::ManifestFile> mlir::ftpipe::buildManifest(
    ModuleOp module, StringRef target, int64_t devices,
    llvm::function_ref<std::string(int64_t)> artifactName) {
  Collected collected;
  rt::ManifestFile &file = collected.file;
  file.target = target.str();
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal() || function.isPrivate())
      continue;
    rt::EntryPoint entry;
    entry.device = getEntryDevice(function);
    entry.stage = intAttr(function, "ftpipe.stage", 0);
    auto entryAttr = function->getAttrOfType<StringAttr>("ftpipe.entry");
    if (!rt::setEntryPointKind(entry,
                               entryAttr ? entryAttr.getValue() : "forward"))
      return function.emitError(
                 "ftpipe.entry must be \"forward\", \"backward\", "
                 "\"backward_input\" or \"backward_weight\", not ")
             << entryAttr;
    entry.name = function.getSymName().str();
    entry.symbol = "_mlir_ciface_" + entry.name;
    collected.stagesOf[entry.device].insert(entry.stage);
    collected.stageEntries[entry.stage].entryOf(entry) = entry.name;
    if (failed(addArguments(function, entry.device, entry, collected)) ||
        failed(addResults(function, bool(entryAttr), entry, collected)) ||
        failed(addTransfers(function, entry, collected)))
      return failure();
    file.entryPoints.push_back(std::move(entry));
  }

  for (int64_t device = 0; device < devices; ++device) {
    const std::set<int64_t> &stages = collected.stagesOf[device];
    file.devices.push_back(
        {device, artifactName(device), {stages.begin(), stages.end()}});
  }
  for (auto &[id, stage] : collected.stageEntries) {
    stage.id = id;
    for (auto &[d, stages] : collected.stagesOf)
      if (stages.count(id))
        stage.device = d;
    file.stages.push_back(std::move(stage));
  }
  for (auto &[name, parameter] : file.parameters) {
    auto &[owner, readers] = collected.parameterDevices[name];
    parameter.devices = {owner};
    for (int64_t device : readers)
      if (device != owner)
        parameter.devices.push_back(device);
  }
  for (auto &[name, input] : file.inputs) {
    const std::set<int64_t> &readers = collected.inputDevices[name];
    input.devices.assign(readers.begin(), readers.end());
    if (auto bound = collected.inputBounds.find(name);
        bound != collected.inputBounds.end()) {
      input.indexBound = bound->second.bound;
      input.indexIgnored = bound->second.ignored;
    }
  }
  // The stages in an order that respects their dependencies
  // (ftpipe.stage_order of ftpipe-split-devices; a forward-only module has
  // one stage).
  if (auto order =
          module->getAttrOfType<DenseI64ArrayAttr>("ftpipe.stage_order"))
    llvm::append_range(file.stageOrder, order.asArrayRef());
  else
    for (auto &entry : collected.stageEntries)
      file.stageOrder.push_back(entry.first);
  return std::move(file);
}
