//===- FTPipeOps.td - ftpipe operations --------------------*- tablegen -*-===//
//
// Operations of the `ftpipe` dialect: pipeline stages as isolated regions and
// point-to-point transfers between devices.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_FTPIPEOPS_TD
#define FTPIPE_DIALECT_FTPIPE_FTPIPEOPS_TD

include "FTPipe/Dialect/FTPipe/FTPipeDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class FTPipe_Op<string mnemonic, list<Trait> traits = []>
    : Op<FTPipe_Dialect, mnemonic, traits>;

def FTPipe_StageOp : FTPipe_Op<"stage", [
    IsolatedFromAbove, SingleBlock]> {
  let summary = "One pipeline stage: an isolated region run on one device";
  let description = [{
    A pipeline stage. Its values come in only through its operands, which
    become the arguments of its single block, and go out only through
    `ftpipe.yield`, whose operands become the stage's results. `id` numbers the
    stage within its function (unique there); `device` is the device it runs on.

    ```mlir
    %r = ftpipe.stage 0 on 1 (%x = %a : tensor<4xf32>) -> (tensor<4xf32>) {
      %y = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
      ftpipe.yield %y : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$id,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$device);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The op that ends the body.
    YieldOp getYield();
  }];
}

def FTPipe_YieldOp : FTPipe_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"StageOp">]> {
  let summary = "Returns the results of a pipeline stage";
  let description = [{
    Ends the body of an `ftpipe.stage`; its operands become the stage's results
    and must match their types.

    ```mlir
    ftpipe.yield %a, %b : tensor<4xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

def FTPipe_Tensor : StaticShapeTensorOf<[AnyType]>;

def FTPipe_SendOp : FTPipe_Op<"send"> {
  let summary = "Sends one tensor to a peer device";
  let description = [{
    Sends `value` to device `peer` as message `tag` of micro-batch
    `microbatch`. A matching `ftpipe.recv` on the peer has the same tag, the
    same micro-batch and the same type. The tensor must have a static shape
    (the runtime sends fixed-size buffers). The peer may be the device the op
    runs on (a hand-off between two stages of one device); when the module
    has a `ftpipe.plan`, it must be one of the plan's devices.

    ```mlir
    ftpipe.send %t to 1 tag 7 microbatch %mb : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins FTPipe_Tensor:$value, Index:$microbatch,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$tag);
  let assemblyFormat = [{
    $value `to` $peer `tag` $tag `microbatch` $microbatch attr-dict
    `:` type($value)
  }];
  let hasVerifier = 1;
}

def FTPipe_RecvOp : FTPipe_Op<"recv"> {
  let summary = "Receives one tensor from a peer device";
  let description = [{
    Receives the tensor that device `peer` sent as message `tag` of micro-batch
    `microbatch`. The result type must have a static shape and equal the type
    of the matching `ftpipe.send`.

    ```mlir
    %t = ftpipe.recv from 0 tag 7 microbatch %mb : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Index:$microbatch,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$tag);
  let results = (outs FTPipe_Tensor:$result);
  let assemblyFormat = [{
    `from` $peer `tag` $tag `microbatch` $microbatch attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif // FTPIPE_DIALECT_FTPIPE_FTPIPEOPS_TD
