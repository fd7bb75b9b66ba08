//===- LowerTransfers.cpp - ftpipe.send/recv as calls of the runtime ------===//
//
// Replaces the transfers of the per-device IR with calls of the C ABI in
// include/FTPipe/Runtime/StageABI.h, so that the IR lowers with the ordinary
// bufferization and LLVM passes. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "ftpipe-lower-transfers"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_LOWERTRANSFERSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
class LowerTransfersPass
    : public mlir::ftpipe::impl::LowerTransfersPassBase<LowerTransfersPass> {
public:
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// The suffix of the C ABI function for an element type, or "" if none.
static std::string abiSuffix(Type element) {
  if (element.isF64())
    return "f64";
  if (element.isF32())
    return "f32";
  if (element.isF16())
    return "f16";
  if (element.isBF16())
    return "bf16";
  if (auto integer = dyn_cast<IntegerType>(element)) {
    unsigned width = integer.getWidth();
    if (width == 64 || width == 32 || width == 16 || width == 8 || width == 1)
      return "i" + std::to_string(width);
  }
  return "";
}

/// The declaration of `ftpipe_rt_<kind>_<suffix>`, added once.
static func::FuncOp getOrDeclare(ModuleOp module, StringRef kind,
                                 StringRef suffix, Type unranked) {
  std::string name = ("ftpipe_rt_" + kind + "_" + suffix).str();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type i64 = b.getI64Type();
  auto decl = b.create<func::FuncOp>(
      module.getLoc(), name, b.getFunctionType({i64, i64, i64, unranked}, {}));
  decl.setPrivate();
  return decl;
}

/// Emits the call for one transfer of `buffer`.
static void emitCall(OpBuilder &b, ModuleOp module, Location loc,
                     StringRef kind, int64_t peer, int64_t tag,
                     Value microbatch, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto unrankedType =
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace());
  func::FuncOp callee = getOrDeclare(
      module, kind, abiSuffix(type.getElementType()), unrankedType);
  Value unranked = b.create<memref::CastOp>(loc, unrankedType, buffer);
  Value peerValue = b.create<arith::ConstantIntOp>(loc, peer, 64);
  Value tagValue = b.create<arith::ConstantIntOp>(loc, tag, 64);
  Value mb = b.create<arith::IndexCastOp>(loc, b.getI64Type(), microbatch);
  b.create<func::CallOp>(loc, callee,
                         ValueRange{peerValue, tagValue, mb, unranked});
}

void LowerTransfersPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<Operation *> transfers;
  module.walk([&](Operation *op) {
    if (isa<SendOp, RecvOp>(op))
      transfers.push_back(op);
  });
  for (Operation *op : transfers) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto send = dyn_cast<SendOp>(op)) {
      auto type = cast<RankedTensorType>(send.getValue().getType());
      if (abiSuffix(type.getElementType()).empty()) {
        send.emitError("no runtime transfer for element type ")
            << type.getElementType();
        return signalPassFailure();
      }
      Value buffer = b.create<bufferization::ToMemrefOp>(
          loc, MemRefType::get(type.getShape(), type.getElementType()),
          send.getValue());
      emitCall(b, module, loc, "send", send.getPeer(), send.getTag(),
               send.getMicrobatch(), buffer);
      send.erase();
      continue;
    }
    auto recv = cast<RecvOp>(op);
    auto type = cast<RankedTensorType>(recv.getType());
    if (abiSuffix(type.getElementType()).empty()) {
      recv.emitError("no runtime transfer for element type ")
          << type.getElementType();
      return signalPassFailure();
    }
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = b.create<memref::AllocOp>(loc, memrefType);
    emitCall(b, module, loc, "recv", recv.getPeer(), recv.getTag(),
             recv.getMicrobatch(), buffer);
    Value tensor = b.create<bufferization::ToTensorOp>(
        loc, type, buffer, /*restrict=*/true, /*writable=*/true);
    recv.replaceAllUsesWith(tensor);
    recv.erase();
  }
  // Upstream tools cannot parse the values of ftpipe attributes (hardware,
  // plan, costs); the lowered code does not need them.
  module.walk([](Operation *op) {
    SmallVector<StringAttr> dropped;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isa<FTPipeDialect>(attr.getValue().getDialect()))
        dropped.push_back(attr.getName());
    for (StringAttr name : dropped)
      op->removeAttr(name);
  });
}
