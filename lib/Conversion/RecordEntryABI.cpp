//===- RecordEntryABI.cpp - Each public function's arguments and results --===//
//
// ftpipe-record-entry-abi: describes each public function's signature as
// the C interface passes it (include/FTPipe/Support/EntryABI.h) and records
// the text as a public constant `ftpipe_abi_<function>`, which the runtime
// compares with the manifest before calling the function
// (lib/Runtime/ABICheck.cpp).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"
#include "FTPipe/Support/EntryABI.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_RECORDENTRYABIPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using ::ftpipe::support::ABIValue;
using ::ftpipe::support::EntryABI;

namespace {

struct RecordEntryABIPass
    : mlir::ftpipe::impl::RecordEntryABIPassBase<RecordEntryABIPass> {
  void runOnOperation() override;
};

std::string spelling(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// The value as the C interface passes it; none (after an error at the
/// function) for a type it cannot describe.
std::optional<ABIValue> describe(func::FuncOp function, StringRef role,
                                 unsigned index, Type type) {
  ABIValue value;
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!isa<RankedTensorType, MemRefType>(type) || !shaped.hasStaticShape()) {
      function.emitError() << role << " " << index << " has type " << type
                           << ": the runtime passes only tensors and memrefs "
                              "of static shape";
      return std::nullopt;
    }
    value.element = spelling(shaped.getElementType());
    value.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
    return value;
  }
  if (!isa<IntegerType, IndexType, FloatType>(type)) {
    function.emitError() << role << " " << index << " has type " << type
                         << ", which the runtime cannot pass";
    return std::nullopt;
  }
  value.tensor = false;
  value.element = spelling(type);
  return value;
}

} // namespace

void RecordEntryABIPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::pair<std::string, std::string>> descriptions;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (!function.isPublic() || function.isExternal())
      continue;
    EntryABI abi;
    FunctionType type = function.getFunctionType();
    for (auto [i, argument] : llvm::enumerate(type.getInputs())) {
      std::optional<ABIValue> value =
          describe(function, "argument", i, argument);
      if (!value)
        return signalPassFailure();
      abi.arguments.push_back(std::move(*value));
    }
    for (auto [i, result] : llvm::enumerate(type.getResults())) {
      std::optional<ABIValue> value = describe(function, "result", i, result);
      if (!value)
        return signalPassFailure();
      abi.results.push_back(std::move(*value));
    }
    descriptions.push_back(
        {(::ftpipe::support::kEntryABISymbolPrefix + function.getSymName())
             .str(),
         ::ftpipe::support::printEntryABI(abi)});
  }
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (auto &[name, text] : descriptions) {
    if (SymbolTable::lookupSymbolIn(module, name)) {
      module.emitError("symbol '") << name << "' exists already";
      return signalPassFailure();
    }
    // The bytes and a terminating NUL.
    SmallVector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    auto tensorType = RankedTensorType::get({int64_t(bytes.size())},
                                            builder.getIntegerType(8));
    builder.create<memref::GlobalOp>(
        module.getLoc(), name, builder.getStringAttr("public"),
        MemRefType::get(tensorType.getShape(), tensorType.getElementType()),
        DenseElementsAttr::get(tensorType, ArrayRef<int8_t>(bytes)),
        /*constant=*/true, /*alignment=*/nullptr);
  }
}
