//===- ParseGuard.h - End a tool at its first parse error -------*- C++ -*-===//
//
// A workaround for a bug of MLIR 19's parser that FTPipe's tools would
// otherwise crash on (docs/Robustness.md, "MLIR 19's linalg parsers"): the
// custom parsers of linalg.transpose, linalg.broadcast and linalg.reduce
// emit an error for a bad element of `permutation = [...]` or
// `dimensions = [...]` (`[inf, 0]`, `[x]`, `[99999999999999999999]`), then
// store the null attribute that the failed parse returned and dereference it
// (SIGSEGV). The only code of the tool that runs between the two is its
// diagnostic handler, so the tools parse their input under a ParseGuard:
// the first error of the parse is printed, located, and ends the process.
// A parse that has emitted an error fails anyway (MLIR's parsers report
// an error and then return failure), so the guard only makes a failing
// parse end at its first error instead of returning; valid input is not
// affected.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARSEGUARD_H
#define FTPIPE_PARSEGUARD_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace mlir::ftpipe {

/// While alive, prints the diagnostics of `context` as its base class does
/// (located, through `sourceMgr`, to `os`), and ends the process with
/// `exitCode` right after printing the first error, through std::_Exit: no
/// destructor and no atexit handler runs, so nothing half parsed is
/// touched. Meant for a parse without verification (ParserConfig's
/// `verifyAfterParse` false, then mlir::verify once the guard is gone): the
/// verifier may report several errors, and from several threads.
class ParseGuard : public SourceMgrDiagnosticHandler {
public:
  ParseGuard(llvm::SourceMgr &sourceMgr, MLIRContext *context, int exitCode = 1,
             llvm::raw_ostream &os = llvm::errs())
      : SourceMgrDiagnosticHandler(sourceMgr, context, os),
        guard(context, [this, exitCode, &os](Diagnostic &diag) {
          emitDiagnostic(diag);
          if (diag.getSeverity() == DiagnosticSeverity::Error) {
            os.flush();
            llvm::outs().flush();
            std::_Exit(exitCode);
          }
          return success();
        }) {}

private:
  /// Registered after the base class's handler, so it runs first.
  ScopedDiagnosticHandler guard;
};

} // namespace mlir::ftpipe

#endif // FTPIPE_PARSEGUARD_H
