//===- Scope.cpp - Module scope paths of ops --------------------*- C++ -*-===//
//
// Reads scope paths from NameLocs, with a structural fallback for IR that
// carries none.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/Scope.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

/// The first NameLoc name found in `loc`, or an empty string.
static StringRef findName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (StringRef name = findName(inner); !name.empty())
        return name;
    return {};
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return findName(callSite.getCallee());
  return {};
}

std::string mlir::ftpipe::getOpScope(Operation *op, StringRef functionName,
                                     unsigned index) {
  StringRef name = findName(op->getLoc());
  if (!name.empty())
    return name.str();
  return ("func.func[" + functionName + "]/" + op->getName().getStringRef() +
          "[" + Twine(index) + "]")
      .str();
}
