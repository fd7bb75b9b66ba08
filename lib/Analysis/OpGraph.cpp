//===- OpGraph.cpp - From a function to lib/Partition's graph ---*- C++ -*-===//
//
// Extracts the op graph, the gradient flow and the hardware from IR.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/OpGraph.h"

#include "FTPipe/Analysis/Scope.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::ftpipe;

FailureOr<func::FuncOp> mlir::ftpipe::getModelFunction(ModuleOp module,
                                                       StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func || func.isExternal()) {
      emitError(module.getLoc()) << "no function '@" << name << "' with a body";
      return failure();
    }
    return func;
  }
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (found) {
      emitError(module.getLoc())
          << "several functions ('@" << found.getSymName() << "', '@"
          << func.getSymName()
          << "'): name the model with the 'function' option";
      return failure();
    }
    found = func;
  }
  if (!found) {
    emitError(module.getLoc()) << "no function with a body to partition";
    return failure();
  }
  return found;
}

DenseMap<Value, OperandInfo>
mlir::ftpipe::analyzeGradientFlow(func::FuncOp func) {
  DenseMap<Value, OperandInfo> infos;
  for (BlockArgument arg : func.getArguments()) {
    bool param = func.getArgAttr(arg.getArgNumber(),
                                 FTPipeDialect::kParamAttrName) != nullptr;
    bool frozen = func.getArgAttr(arg.getArgNumber(),
                                  FTPipeDialect::kFrozenAttrName) != nullptr;
    infos[arg] = {param, param && !frozen};
  }
  func.getBody().walk([&](Operation *op) {
    // A result is parameter-like when the op reads parameters and no
    // activations (constants aside); it needs a gradient when any operand
    // does and it is a float tensor.
    bool anyParam = false, anyActivation = false, anyGrad = false;
    for (Value operand : op->getOperands()) {
      OperandInfo info = infos.lookup(operand);
      anyGrad |= info.needsGrad;
      if (info.isParam)
        anyParam = true;
      else if (!matchPattern(operand, m_Constant()) &&
               !operand.getDefiningOp<tensor::EmptyOp>())
        anyActivation = true;
    }
    for (Value result : op->getResults()) {
      auto tensor = dyn_cast<RankedTensorType>(result.getType());
      bool isFloat = tensor && isa<FloatType>(tensor.getElementType());
      infos[result] = {anyParam && !anyActivation, anyGrad && isFloat};
    }
  });
  return infos;
}

/// True when a value carries no data worth sending: any stage can make it.
static bool isRematerializable(Operation *producer) {
  return producer->hasTrait<OpTrait::ConstantLike>() ||
         isa<tensor::EmptyOp>(producer);
}

LogicalResult mlir::ftpipe::verifyCostableFunction(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "function '@" << func.getSymName() << "' has "
           << func.getBody().getBlocks().size()
           << " blocks: FTPipe partitions single-block functions (control "
              "flow must be structured, e.g. scf.if)";
  for (BlockArgument arg : func.getArguments())
    if (std::string reason = getUnsizedTypeReason(arg.getType());
        !reason.empty())
      return func.emitError() << "argument " << arg.getArgNumber() << " of '@"
                              << func.getSymName() << "' has type "
                              << arg.getType() << ": " << reason;
  WalkResult walk = func.getBody().walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (std::string reason = getUnsizedTypeReason(result.getType());
          !reason.empty()) {
        op->emitError() << "result type " << result.getType() << ": " << reason;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<OpGraph> mlir::ftpipe::buildOpGraph(func::FuncOp func) {
  if (failed(verifyCostableFunction(func)))
    return failure();
  Block &body = func.getBody().front();
  OpGraph result;
  DenseMap<Operation *, partition::NodeId> nodeOf;
  partition::GraphBuilder builder;

  unsigned index = 0;
  for (Operation &op : body.without_terminator()) {
    auto cost = op.getAttrOfType<CostAttr>(FTPipeDialect::kCostAttrName);
    if (!cost) {
      op.emitError() << "op has no '" << FTPipeDialect::kCostAttrName
                     << "': run --ftpipe-annotate-costs first";
      return failure();
    }
    partition::NodeCost nodeCost;
    nodeCost.fwdMs = cost.getFwdMs();
    nodeCost.bwdMs = cost.getBwdMs();
    nodeCost.bwdWeightMs = cost.getBwdWeightMs();
    nodeCost.actBytes = cost.getActBytes();
    nodeCost.outBytes = cost.getOutBytes();
    nodeOf[&op] = builder.addNode(getOpScope(&op, func.getSymName(), index++),
                                  op.getName().getStringRef(), nodeCost);
    result.ops.push_back(&op);
  }

  // The distinct nodes that use `value`, directly or inside their regions.
  auto consumersOf = [&](Value value) {
    llvm::SetVector<partition::NodeId> consumers;
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && top != body.getTerminator())
        consumers.insert(nodeOf.lookup(top));
    }
    SmallVector<partition::NodeId> sorted(consumers.begin(), consumers.end());
    llvm::sort(sorted);
    return sorted;
  };

  for (BlockArgument arg : func.getArguments()) {
    unsigned argIndex = arg.getArgNumber();
    int64_t bytes = getTypeBytes(arg.getType());
    if (func.getArgAttr(argIndex, FTPipeDialect::kParamAttrName)) {
      auto name = func.getArgAttrOfType<StringAttr>(
          argIndex, FTPipeDialect::kNameAttrName);
      partition::ParamId param = builder.addParam(
          name ? name.getValue().str() : "arg" + std::to_string(argIndex),
          bytes,
          func.getArgAttr(argIndex, FTPipeDialect::kFrozenAttrName) != nullptr);
      for (partition::NodeId node : consumersOf(arg))
        builder.addParamUse(node, param);
      continue;
    }
    SmallVector<partition::NodeId> consumers = consumersOf(arg);
    if (!consumers.empty())
      builder.addValue(partition::kNoNode, bytes, consumers,
                       /*needsGrad=*/false);
  }
  DenseMap<Value, OperandInfo> flow = analyzeGradientFlow(func);
  for (Operation *op : result.ops) {
    for (Value value : op->getResults()) {
      SmallVector<partition::NodeId> consumers = consumersOf(value);
      int64_t bytes =
          isRematerializable(op) ? 0 : getTypeBytes(value.getType());
      builder.addValue(nodeOf.lookup(op), bytes, consumers,
                       flow.lookup(value).needsGrad);
    }
  }

  llvm::Expected<partition::Graph> graph = builder.build();
  if (!graph) {
    emitError(func.getLoc())
        << "cannot build the op graph: " << llvm::toString(graph.takeError());
    return failure();
  }
  result.graph = std::move(*graph);
  return result;
}

FailureOr<HardwareAttr>
mlir::ftpipe::getHardwareAttr(MLIRContext *context,
                              const partition::Hardware &hardware,
                              function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<DeviceSpecAttr> devices;
  for (const partition::Device &device : hardware.devices())
    devices.push_back(DeviceSpecAttr::get(
        context, device.name, device.memoryBytes, device.tflops, device.memGBps,
        device.launchUs, device.node));
  SmallVector<LinkAttr> links;
  unsigned numDevices = hardware.numDevices();
  for (unsigned src = 0; src < numDevices; ++src) {
    for (unsigned dst = src + 1; dst < numDevices; ++dst) {
      const partition::LinkParams &forward = hardware.link(src, dst);
      const partition::LinkParams &backward = hardware.link(dst, src);
      if (forward.GBps != backward.GBps ||
          forward.latencyUs != backward.latencyUs)
        return emitError() << "hardware '" << hardware.name()
                           << "' has different links " << src << " -> " << dst
                           << " and back; #ftpipe.hardware describes "
                           << "symmetric links only";
      links.push_back(
          LinkAttr::get(context, src, dst, forward.GBps, forward.latencyUs));
    }
  }
  SmallVector<int64_t> nodeCores(hardware.spec().nodeCores.begin(),
                                 hardware.spec().nodeCores.end());
  return HardwareAttr::get(context, hardware.name(), devices, links, nodeCores);
}

FailureOr<partition::Hardware>
mlir::ftpipe::getHardware(HardwareAttr attr,
                          function_ref<InFlightDiagnostic()> emitError) {
  partition::HardwareSpec spec;
  spec.name = attr.getName().str();
  for (DeviceSpecAttr device : attr.getDevices()) {
    partition::Device d;
    d.name = device.getName().str();
    d.memoryBytes = device.getMemoryBytes();
    d.tflops = device.getTflops();
    d.memGBps = device.getMemGbps();
    d.launchUs = device.getLaunchUs();
    d.node = device.getNode();
    spec.devices.push_back(d);
  }
  for (int64_t cores : attr.getNodeCores())
    spec.nodeCores.push_back(uint32_t(cores));
  for (LinkAttr link : attr.getLinks()) {
    partition::Link l;
    l.src = link.getSrc();
    l.dst = link.getDst();
    l.GBps = link.getGbps();
    l.latencyUs = link.getLatencyUs();
    spec.links.push_back(l);
  }
  llvm::Expected<partition::Hardware> hardware =
      partition::Hardware::create(std::move(spec));
  if (!hardware)
    return emitError() << "invalid hardware: "
                       << llvm::toString(hardware.takeError());
  return std::move(*hardware);
}

ApartTransposes mlir::ftpipe::findApartTransposes(const OpGraph &opGraph,
                                                  const partition::Plan &plan) {
  DenseMap<Operation *, partition::NodeId> nodeOf;
  for (auto [n, op] : llvm::enumerate(opGraph.ops))
    nodeOf[op] = partition::NodeId(n);
  ApartTransposes apart;
  for (auto [n, op] : llvm::enumerate(opGraph.ops)) {
    if (!isFoldedWeightTranspose(op))
      continue;
    // The transpose, the reshapes between it and its matmuls, the matmuls.
    SmallVector<Operation *> work = {op};
    bool elsewhere = false;
    while (!work.empty() && !elsewhere)
      for (Operation *user : work.pop_back_val()->getUsers()) {
        auto it = nodeOf.find(user);
        elsewhere |= it != nodeOf.end() &&
                     plan.nodeStage[it->second] != plan.nodeStage[n];
        if (user->getName().getStringRef() == "tosa.reshape")
          work.push_back(user);
      }
    if (elsewhere) {
      ++apart.count;
      apart.bytes += getTypeBytes(op->getResult(0).getType());
    }
  }
  return apart;
}
