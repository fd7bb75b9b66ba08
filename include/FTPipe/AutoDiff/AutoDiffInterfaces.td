//===- AutoDiffInterfaces.td - reverse-mode rules as interfaces -*- tablegen -*-===//
//
// The two interfaces through which ops take part in FTPipe's differentiation.
// Rules for upstream ops are attached as external models (lib/AutoDiff/*Rules.cpp);
// another compiler attaches models to its own ops the same way, without
// editing FTPipe.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_AUTODIFF_AUTODIFFINTERFACES_TD
#define FTPIPE_AUTODIFF_AUTODIFFINTERFACES_TD

include "mlir/IR/OpBase.td"

def ReverseModeOpInterface : OpInterface<"ReverseModeOpInterface"> {
  let description = [{
    A tensor-level op that knows its adjoint: given the gradients of its
    results, it builds the gradients of its operands. The builder's insertion
    point is after the op (in the backward function, which also holds the
    op's forward values), so a rule may use the op's operands and results.
  }];
  let cppNamespace = "::mlir::ftpipe::autodiff";
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands. `resultGradients[i]` is the
        gradient of result i, or null where it is zero (at least one is not
        null). `operandGradients` gets one entry per operand: a value of the
        operand's type, or null for a zero gradient. Only the operands with
        `needsGradient[i]` set need one. Fails (with an error at the op) when
        the op's form is outside what the rule handles.
      }],
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGradients,
           "::llvm::ArrayRef<bool>":$needsGradient,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

def ScalarTangentOpInterface : OpInterface<"ScalarTangentOpInterface"> {
  let description = [{
    A scalar op (inside the body of a `linalg` op) that knows its derivative
    in forward mode: given the tangents of its operands, it builds the
    tangent of its result. The generic `linalg` rule uses these to
    differentiate any body, whatever its ops.
  }];
  let cppNamespace = "::mlir::ftpipe::autodiff";
  let methods = [
    InterfaceMethod<[{
        Builds the tangent of the (single) result from `operandTangents`
        (one per operand; null means zero). Returns null when the tangent is
        zero, and fails for forms the rule does not handle.
      }],
      "::mlir::FailureOr<::mlir::Value>", "buildTangent",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$operandTangents)>,
  ];
}

#endif // FTPIPE_AUTODIFF_AUTODIFFINTERFACES_TD
