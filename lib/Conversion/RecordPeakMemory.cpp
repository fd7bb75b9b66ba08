//===- RecordPeakMemory.cpp - Peak heap bytes of each public function -----===//
//
// ftpipe-record-peak-memory: walks each public function's ops in order,
// adding the bytes of every allocation (as the host allocator charges them:
// with the alignment the lowering adds, rounded as HostAllocator.cpp does)
// and removing those of every dealloc
// (callees included), and records the largest total as a public constant
// `ftpipe_peak_bytes_<function>` that the runtime reads from the artifact to
// predict a device's memory (docs/Runtime.md, "Memory").
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_RECORDPEAKMEMORYPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct RecordPeakMemoryPass
    : ftpipe::impl::RecordPeakMemoryPassBase<RecordPeakMemoryPass> {
  void runOnOperation() override;
};

/// What running a block or a function does to the heap: its largest
/// growth over the bytes live when it starts, and its net growth.
struct HeapUse {
  int64_t peak = 0, net = 0;
};

/// Walks blocks in order, following calls into the module's functions.
class HeapWalker {
public:
  explicit HeapWalker(ModuleOp module) : symbols(module) {}

  HeapUse function(func::FuncOp function) {
    auto [it, fresh] = functions.try_emplace(function, HeapUse{});
    if (!fresh)
      return it->second; // Done, or recursive (counted as nothing).
    HeapUse use = block(function.getBody().front());
    functions[function] = use;
    return use;
  }

private:
  static int64_t bytesOf(Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.hasStaticShape())
      return 0;
    int64_t bits = memref.getElementTypeBitWidth();
    return memref.getNumElements() * ((bits + 7) / 8);
  }

  /// What the host allocator charges for `bytes` allocated with
  /// `alignment` (none: the lowering calls malloc with the size alone):
  /// finalize-memref-to-llvm asks for the alignment more to align by hand,
  /// and HostAllocator.cpp gives blocks from 1 MiB up whole pages, smaller
  /// ones 64-byte units. A run's buffers exceeded the exact sizes' peak by
  /// 0.13 MiB on GPT-2 124M.
  static int64_t charged(int64_t bytes, int64_t alignment) {
    constexpr int64_t kUnit = 64, kPage = 4096, kPagedFrom = 1 << 20;
    if (bytes == 0)
      return 0;
    bytes += alignment;
    int64_t unit = bytes >= kPagedFrom ? kPage : kUnit;
    return (bytes + unit - 1) / unit * unit;
  }

  HeapUse block(Block &body) {
    int64_t live = 0, peak = 0;
    for (Operation &op : body) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        int64_t bytes = charged(bytesOf(alloc.getType()),
                                int64_t(alloc.getAlignment().value_or(0)));
        roots[alloc.getResult()] = alloc.getResult();
        allocated[alloc.getResult()] = bytes;
        live += bytes;
        peak = std::max(peak, live);
        continue;
      }
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        auto root = roots.find(dealloc.getMemref());
        if (root != roots.end()) {
          auto bytes = allocated.find(root->second);
          if (bytes != allocated.end()) {
            live -= bytes->second;
            allocated.erase(bytes);
          }
        }
        continue;
      }
      HeapUse inner;
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal()) {
          inner.peak = function(callee).peak;
          // Its results are buffers it allocated; they stay live here.
          // (Rounded without the alignment, which the callee's allocation
          // knows: a call left by ftpipe-inline-single-calls is rare.)
          for (Value result : call.getResults()) {
            int64_t bytes = charged(bytesOf(result.getType()), 0);
            roots[result] = result;
            allocated[result] = bytes;
            inner.net += bytes;
          }
        }
      }
      for (Region &region : op.getRegions())
        for (Block &nested : region) {
          HeapUse use = block(nested);
          inner.peak = std::max(inner.peak, use.peak);
          inner.net += use.net;
        }
      peak = std::max(peak, live + inner.peak);
      live += inner.net;
      // A view or a pointer of a buffer frees that buffer.
      for (Value result : op.getResults()) {
        if (roots.count(result) || !isa<MemRefType>(result.getType()))
          continue;
        for (Value operand : op.getOperands()) {
          auto root = roots.find(operand);
          if (root != roots.end()) {
            roots[result] = root->second;
            break;
          }
        }
      }
    }
    return {peak, live};
  }

  SymbolTable symbols;
  DenseMap<Operation *, HeapUse> functions;
  /// Every buffer value and view of one to the allocation it belongs to.
  DenseMap<Value, Value> roots;
  /// Allocations not yet freed, with their bytes.
  DenseMap<Value, int64_t> allocated;
};

} // namespace

void RecordPeakMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  HeapWalker walker(module);
  SmallVector<std::pair<std::string, int64_t>> peaks;
  for (auto function : module.getOps<func::FuncOp>())
    if (function.isPublic() && !function.isExternal())
      peaks.push_back({("ftpipe_peak_bytes_" + function.getSymName()).str(),
                       walker.function(function).peak});
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto type = MemRefType::get({}, builder.getI64Type());
  for (auto &[name, peak] : peaks) {
    if (SymbolTable::lookupSymbolIn(module, name)) {
      module.emitError("symbol '") << name << "' exists already";
      return signalPassFailure();
    }
    builder.create<memref::GlobalOp>(
        module.getLoc(), name, builder.getStringAttr("public"), type,
        DenseElementsAttr::get(RankedTensorType::get({}, builder.getI64Type()),
                               builder.getI64IntegerAttr(peak).getValue()),
        /*constant=*/true, /*alignment=*/nullptr);
  }
}
