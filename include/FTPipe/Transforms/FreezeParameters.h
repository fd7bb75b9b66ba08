//===- FreezeParameters.h - ftpipe-compile's --freeze -----------*- C++ -*-===//
//
// `--freeze REGEX` or `--freeze @FILE` (one Hugging Face name a line): marks
// those parameters of the model function frozen with ftpipe-freeze-params
// before anything is planned or differentiated (docs/Freezing.md).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_FREEZEPARAMETERS_H
#define FTPIPE_TRANSFORMS_FREEZEPARAMETERS_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace ftpipe {

/// Freezes the parameters of `module`'s model function that `spec` names:
/// a regular expression, or `@FILE` with one name a line (blank lines and
/// lines starting with `#` skipped). Fails, with an error that names the
/// regex, or the file and line, when the regex matches no parameter or a
/// line names none.
LogicalResult freezeParameters(ModuleOp module, llvm::StringRef spec);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TRANSFORMS_FREEZEPARAMETERS_H
