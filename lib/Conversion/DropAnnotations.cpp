//===- DropAnnotations.cpp - Removes FTPipe's attributes ------------------===//
//
// ftpipe-drop-annotations: the ftpipe dialect's attributes describe tensors
// (parameters, costs, stages); code generation starts by removing them.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_DROPANNOTATIONSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

bool isFTPipeAttr(NamedAttribute attr) {
  return attr.getName().strref().starts_with("ftpipe.");
}

DictionaryAttr withoutFTPipeAttrs(DictionaryAttr dict) {
  if (!dict)
    return dict;
  SmallVector<NamedAttribute> kept;
  llvm::copy_if(dict.getValue(), std::back_inserter(kept),
                [](NamedAttribute attr) { return !isFTPipeAttr(attr); });
  return DictionaryAttr::get(dict.getContext(), kept);
}

struct DropAnnotationsPass
    : ftpipe::impl::DropAnnotationsPassBase<DropAnnotationsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      SmallVector<StringAttr> names;
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (isFTPipeAttr(attr))
          names.push_back(attr.getName());
      for (StringAttr name : names)
        op->removeDiscardableAttr(name);
      auto function = dyn_cast<FunctionOpInterface>(op);
      if (!function)
        return;
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
        function.setArgAttrs(i, withoutFTPipeAttrs(function.getArgAttrDict(i)));
      for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
        function.setResultAttrs(
            i, withoutFTPipeAttrs(function.getResultAttrDict(i)));
    });
  }
};

} // namespace
