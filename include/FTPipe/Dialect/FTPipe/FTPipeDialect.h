//===- FTPipeDialect.h - The ftpipe dialect ---------------------*- C++ -*-===//
//
// The `ftpipe` dialect class, its attributes and ops. Include this header to
// use anything of the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_H
#define FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_H

#include "FTPipe/Schedule/TrainingSetup.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"

namespace mlir {
namespace ftpipe {
/// A double as an attribute parameter. LLVM has no hash for `double`, which
/// attribute storage needs; this wrapper provides one (by bit pattern) and
/// otherwise converts to and from `double` freely, so accessors and builders
/// read as plain doubles.
struct F64 {
  F64(double value = 0.0) : value(value) {}
  operator double() const { return value; }
  friend llvm::hash_code hash_value(F64 f) {
    // +0.0 and -0.0 compare equal, so they must hash alike.
    double canonical = f.value == 0.0 ? 0.0 : f.value;
    return llvm::hash_value(llvm::bit_cast<uint64_t>(canonical));
  }
  double value;
};

/// The shortest decimal text of `value` that reads back as the same double and
/// lexes as a float in MLIR (it always has a '.'), e.g. "3.0", "0.125".
std::string formatF64(double value);

/// Parses a floating-point attribute field (integers are accepted).
FailureOr<F64> parseF64(AsmParser &parser);
/// Prints a floating-point attribute field in its shortest form that parses
/// back to the same value.
void printF64(AsmPrinter &printer, double value);

/// Parses a comma-separated list of `true` / `false` (the brackets around it
/// belong to the enclosing format).
FailureOr<SmallVector<bool>> parseBoolList(AsmParser &parser);
/// Prints `values` as `true, false, ...`.
void printBoolList(AsmPrinter &printer, ArrayRef<bool> values);

/// Parses a quoted spelling of a training-setup enum
/// (ftpipe::schedule::parseName), reporting its error at the string.
template <typename Enum> FailureOr<Enum> parseSetupEnum(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (parser.parseString(&text))
    return failure();
  llvm::Expected<Enum> value = ::ftpipe::schedule::parseName<Enum>(text);
  if (!value)
    return parser.emitError(loc) << llvm::toString(value.takeError());
  return *value;
}
} // namespace ftpipe
} // namespace mlir

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "FTPipe/Dialect/FTPipe/FTPipeAttrs.h.inc"

#define GET_OP_CLASSES
#include "FTPipe/Dialect/FTPipe/FTPipeOps.h.inc"

namespace mlir {
namespace ftpipe {
/// Adds the ftpipe dialect to `registry`.
void registerFTPipeDialect(DialectRegistry &registry);
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_H
