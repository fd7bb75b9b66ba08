//===- LowerTransfers.cpp - ftpipe.send/recv to the stage ABI -------------===//
//
// ftpipe-lower-transfers: every ftpipe.send / ftpipe.recv becomes a call of
// ftpipe_rt_send_T / ftpipe_rt_recv_T (include/FTPipe/Runtime/StageABI.h) on
// the tensor's buffer, before bufferization.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_LOWERTRANSFERSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

/// The ABI suffix of an element type (StageABI.h), or empty if it has none.
std::string abiSuffix(Type type) {
  if (type.isF64() || type.isF32() || type.isF16() || type.isBF16())
    return type.isBF16() ? "bf16" : "f" + std::to_string(type.getIntOrFloatBitWidth());
  if (type.isSignlessInteger(64) || type.isSignlessInteger(32) ||
      type.isSignlessInteger(16) || type.isSignlessInteger(8) ||
      type.isSignlessInteger(1))
    return "i" + std::to_string(type.getIntOrFloatBitWidth());
  return "";
}

/// Declares `ftpipe_rt_<kind>_<T>` in `module` if missing; returns its name.
FailureOr<std::string> declare(ModuleOp module, Operation *op,
                               StringRef kind, Type elementType) {
  std::string suffix = abiSuffix(elementType);
  if (suffix.empty())
    return op->emitError("element type ")
           << elementType << " has no transfer function in the stage ABI";
  std::string name = ("ftpipe_rt_" + kind + "_" + suffix).str();
  if (module.lookupSymbol(name))
    return name;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = builder.getI64Type();
  auto type = builder.getFunctionType(
      {i64, i64, i64, UnrankedMemRefType::get(elementType, {})}, {});
  builder.create<func::FuncOp>(module.getLoc(), name, type).setPrivate();
  return name;
}

LogicalResult lowerTransfer(ModuleOp module, Operation *op, StringRef kind,
                            RankedTensorType tensorType, Value tensor,
                            Value microbatch, uint64_t peer, uint64_t tag) {
  FailureOr<std::string> callee =
      declare(module, op, kind, tensorType.getElementType());
  if (failed(callee))
    return failure();
  OpBuilder builder(op);
  Location loc = op->getLoc();
  auto memrefType =
      MemRefType::get(tensorType.getShape(), tensorType.getElementType());
  Value buffer;
  if (tensor)
    buffer = builder.create<bufferization::ToMemrefOp>(loc, memrefType, tensor);
  else
    buffer = builder.create<memref::AllocOp>(loc, memrefType);
  Value unranked = builder.create<memref::CastOp>(
      loc, UnrankedMemRefType::get(tensorType.getElementType(), {}), buffer);
  Value args[] = {
      builder.create<arith::ConstantIntOp>(loc, peer, 64),
      builder.create<arith::ConstantIntOp>(loc, tag, 64),
      builder.create<arith::IndexCastOp>(loc, builder.getI64Type(), microbatch),
      unranked};
  builder.create<func::CallOp>(loc, *callee, TypeRange(), args);
  if (!tensor) {
    Value received = builder.create<bufferization::ToTensorOp>(
        loc, tensorType, buffer, builder.getUnitAttr(), builder.getUnitAttr());
    op->getResult(0).replaceAllUsesWith(received);
  }
  op->erase();
  return success();
}

struct LowerTransfersPass
    : ftpipe::impl::LowerTransfersPassBase<LowerTransfersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> transfers;
    module.walk([&](Operation *op) {
      if (isa<ftpipe::SendOp, ftpipe::RecvOp>(op))
        transfers.push_back(op);
    });
    for (Operation *op : transfers) {
      LogicalResult lowered = success();
      if (auto send = dyn_cast<ftpipe::SendOp>(op))
        lowered = lowerTransfer(
            module, op, "send",
            cast<RankedTensorType>(send.getValue().getType()), send.getValue(),
            send.getMicrobatch(), send.getPeer(), send.getTag());
      else if (auto recv = dyn_cast<ftpipe::RecvOp>(op))
        lowered = lowerTransfer(module, op, "recv",
                                cast<RankedTensorType>(recv.getType()), Value(),
                                recv.getMicrobatch(), recv.getPeer(),
                                recv.getTag());
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};

} // namespace
