//===- HostAccessesToDevice.cpp - Buffer accesses of host code on the GPU -===//
//
// ftpipe-host-accesses-to-device: for the CUDA target, whose buffers are all
// device memory, the loads and stores that host code still holds after
// convert-parallel-loops-to-gpu (what linalg ops without a parallel
// dimension become: 0-d fills, full reductions) move into one-thread
// launches, and a load whose value the host needs becomes a copy into a host
// scalar. Fails where host code would still touch a buffer.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_HOSTACCESSESTODEVICEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct HostAccessesToDevicePass
    : ftpipe::impl::HostAccessesToDevicePassBase<HostAccessesToDevicePass> {
  void runOnOperation() override;
};

/// What an operation of host code is to this pass.
enum class Role {
  Device,  // runs on the device: a store, or a region of buffer accesses
  Load,    // a load: inside a run of device work if only that run uses
           // its value, else read on the host
  Pure,    // no memory effects: may go along with device work
  Host,    // stays on the host
};

bool isAccess(Operation *op) { return isa<memref::LoadOp, memref::StoreOp>(op); }

/// Whether `op` must run on the host: calls, launches, allocations, copies
/// and constants' globals.
bool isHostOnly(Operation *op) {
  return isa<func::CallOp, gpu::LaunchOp, gpu::LaunchFuncOp, memref::AllocOp,
             memref::AllocaOp, memref::DeallocOp, memref::CopyOp,
             memref::GetGlobalOp>(op);
}

Role roleOf(Operation *op) {
  if (isa<memref::LoadOp>(op))
    return Role::Load;
  if (isAccess(op))
    return Role::Device;
  if (op->getNumRegions() == 0)
    return isMemoryEffectFree(op) ? Role::Pure : Role::Host;
  if (op->getNumResults() != 0)
    return Role::Host;
  bool accesses = false, hostOnly = false;
  op->walk([&](Operation *nested) {
    accesses |= isAccess(nested);
    hostOnly |= isHostOnly(nested);
  });
  return accesses && !hostOnly ? Role::Device : Role::Host;
}

class Mover {
public:
  explicit Mover(ModuleOp module) : module(module) {}

  LogicalResult run() {
    for (auto func : module.getOps<func::FuncOp>())
      for (Block &block : func.getBody())
        visit(block, func);
    return verify();
  }

private:
  void visit(Block &block, func::FuncOp func);
  void moveToDevice(ArrayRef<Operation *> ops);
  void readOnHost(memref::LoadOp load, func::FuncOp func);
  Value hostCopyOf(Value buffer, func::FuncOp func);
  func::FuncOp synchronizeFunction();
  LogicalResult verify();

  ModuleOp module;
  func::FuncOp synchronize;
  /// The host copies of arguments, by argument.
  DenseMap<Value, Value> hostCopies;
};

} // namespace

/// The longest run of `ops[first...]` that can move to the device: it starts
/// at a Device op, holds only Device, Load and Pure ops, ends at a Device op,
/// and no value it defines is used after it.
static size_t runEnd(ArrayRef<Operation *> ops, ArrayRef<Role> roles,
                     size_t first) {
  size_t end = first;
  for (size_t i = first; i < ops.size() && roles[i] != Role::Host; ++i)
    if (roles[i] == Role::Device)
      end = i;
  Block *block = ops[first]->getBlock();
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = first; i <= end && !changed; ++i)
      for (Operation *user : ops[i]->getUsers()) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        if (ancestor &&
            (ancestor == ops[end] || ancestor->isBeforeInBlock(ops[end])))
          continue;
        // ops[i] is used after the run: the run ends at the last Device
        // op before it (ops[first] is a Device op without results).
        size_t last = first;
        for (size_t j = first; j < i; ++j)
          if (roles[j] == Role::Device)
            last = j;
        changed = last != end;
        end = last;
        break;
      }
  }
  return end;
}

void Mover::visit(Block &block, func::FuncOp func) {
  SmallVector<Operation *> ops;
  SmallVector<Role> roles;
  for (Operation &op : block) {
    ops.push_back(&op);
    roles.push_back(roleOf(&op));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    if (roles[i] == Role::Device) {
      size_t end = runEnd(ops, roles, i);
      moveToDevice(ArrayRef<Operation *>(ops).slice(i, end - i + 1));
      i = end;
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      readOnHost(load, func);
      continue;
    }
    if (isa<gpu::LaunchOp>(op))
      continue;
    for (Region &region : op->getRegions())
      for (Block &nested : region)
        visit(nested, func);
  }
}

/// No host code reads or writes a buffer other than its own scalars.
LogicalResult Mover::verify() {
  bool clean = true;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      Value buffer;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        buffer = load.getMemRef();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        buffer = store.getMemRef();
      else if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(op))
        buffer = op->getOperand(0);
      if (buffer && !buffer.getDefiningOp<memref::AllocaOp>()) {
        op->emitError("host code would access a device buffer here");
        clean = false;
      }
      return WalkResult::advance();
    });
  return success(clean);
}

void Mover::moveToDevice(ArrayRef<Operation *> ops) {
  OpBuilder builder(ops.front());
  Location loc = ops.front()->getLoc();
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  auto launch =
      builder.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
  Block &body = launch.getBody().front();
  builder.setInsertionPointToEnd(&body);
  auto terminator = builder.create<gpu::TerminatorOp>(loc);
  for (Operation *op : ops)
    op->moveBefore(terminator);
}

func::FuncOp Mover::synchronizeFunction() {
  if (synchronize)
    return synchronize;
  StringRef name = "ftpipe_cuda_synchronize";
  synchronize = module.lookupSymbol<func::FuncOp>(name);
  if (!synchronize) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    synchronize = builder.create<func::FuncOp>(
        module.getLoc(), name, builder.getFunctionType({}, {}));
    synchronize.setPrivate();
  }
  return synchronize;
}

/// Whether nothing writes `buffer`: every use, through views, is a load or
/// the source of a copy (kernels' bodies are still inline in their
/// launches, so their accesses count too).
static bool onlyRead(Value buffer) {
  SmallVector<Value> views{buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::SubViewOp, memref::CastOp, memref::CollapseShapeOp,
              memref::ExpandShapeOp, memref::ReinterpretCastOp>(user)) {
        views.push_back(user->getResult(0));
        continue;
      }
      if (isa<memref::LoadOp>(user))
        continue;
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && use.getOperandNumber() == 0)
        continue;
      return false;
    }
  }
  return true;
}

/// A small dense argument of `func` that nothing in it writes, copied to the
/// host once, at entry: the index reads of a gather adjoint's loop then cost
/// one synchronisation, not one per iteration. Null for other buffers.
Value Mover::hostCopyOf(Value buffer, func::FuncOp func) {
  constexpr int64_t kMaxBytes = 64 * 1024;
  auto argument = dyn_cast<BlockArgument>(buffer);
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!argument || argument.getOwner() != &func.getBody().front() || !type ||
      !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8) >
          kMaxBytes ||
      !onlyRead(buffer))
    return {};
  Value &copy = hostCopies[buffer];
  if (!copy) {
    Location loc = func.getLoc();
    OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
    copy = builder.create<memref::AllocaOp>(loc, type);
    builder.create<memref::CopyOp>(loc, buffer, copy);
    builder.create<func::CallOp>(loc, synchronizeFunction(), ValueRange{});
  }
  return copy;
}

void Mover::readOnHost(memref::LoadOp load, func::FuncOp func) {
  MemRefType type = load.getMemRefType();
  Location loc = load.getLoc();
  if (Value copy = hostCopyOf(load.getMemRef(), func)) {
    OpBuilder builder(load);
    Value value = builder.create<memref::LoadOp>(loc, copy, load.getIndices());
    load.getResult().replaceAllUsesWith(value);
    load.erase();
    return;
  }
  OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
  Value scalar = builder.create<memref::AllocaOp>(
      loc, MemRefType::get({}, type.getElementType()));
  builder.setInsertionPoint(load);
  Value element = load.getMemRef();
  if (type.getRank() != 0) {
    SmallVector<OpFoldResult> offsets(load.getIndices().begin(),
                                      load.getIndices().end());
    SmallVector<OpFoldResult> ones(type.getRank(), builder.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        {}, type, offsets, ones, ones);
    element = builder.create<memref::SubViewOp>(
        loc, cast<MemRefType>(viewType), element, offsets, ones, ones);
  }
  builder.create<memref::CopyOp>(loc, element, scalar);
  builder.create<func::CallOp>(loc, synchronizeFunction(), ValueRange{});
  Value value = builder.create<memref::LoadOp>(loc, scalar);
  load.getResult().replaceAllUsesWith(value);
  load.erase();
}

void HostAccessesToDevicePass::runOnOperation() {
  if (failed(Mover(getOperation()).run()))
    signalPassFailure();
}
