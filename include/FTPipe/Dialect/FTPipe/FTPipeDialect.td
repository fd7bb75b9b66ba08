//===- FTPipeDialect.td - The ftpipe dialect ---------------*- tablegen -*-===//
//
// Declares the `ftpipe` dialect: the IR vocabulary that FTPipe's passes use to
// record costs, hardware, partition plans, pipeline stages and point-to-point
// transfers between devices.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_TD
#define FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_TD

include "mlir/IR/OpBase.td"

def FTPipe_Dialect : Dialect {
  let name = "ftpipe";
  let cppNamespace = "::mlir::ftpipe";
  let summary = "Pipeline partitioning of tensor programs for fine-tuning";
  let description = [{
    The `ftpipe` dialect carries what FTPipe learns and decides about a tensor
    program on its way from one `func.func` to one executable per GPU:

    * cost attributes on ops (`#ftpipe.cost`), the hardware description
      (`#ftpipe.hardware`) and the partition plan (`#ftpipe.plan`) on the module;
    * `ftpipe.stage`, an isolated region that is one pipeline stage;
    * `ftpipe.send` / `ftpipe.recv`, point-to-point transfers between devices.

    Discardable attributes the dialect knows and verifies:

    | attribute | where | value |
    |-----------|-------|-------|
    | `ftpipe.param` | function argument | unit: a trainable weight |
    | `ftpipe.name` | function argument | string: checkpoint name of the weight |
    | `ftpipe.frozen` | function argument | unit, on a parameter: it is not trained |
    | `ftpipe.cost` | op | `#ftpipe.cost` |
    | `ftpipe.block` | op | non-negative integer: coarse block id |
    | `ftpipe.stage` | op | non-negative integer: pipeline stage id |
    | `ftpipe.device` | op or function | non-negative integer: device id |
    | `ftpipe.hardware` | module | `#ftpipe.hardware` |
    | `ftpipe.plan` | module | `#ftpipe.plan` |
    | `ftpipe.padding_row` | `tosa.gather` | integer row of the values: no gradient flows into it |
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Names of the discardable attributes this dialect defines.
    static constexpr ::llvm::StringLiteral kParamAttrName = "ftpipe.param";
    static constexpr ::llvm::StringLiteral kNameAttrName = "ftpipe.name";
    /// Unit attribute on a `ftpipe.param` argument: the weight is frozen
    /// (no gradient, no optimizer state; ftpipe-freeze-params).
    static constexpr ::llvm::StringLiteral kFrozenAttrName = "ftpipe.frozen";
    static constexpr ::llvm::StringLiteral kCostAttrName = "ftpipe.cost";
    static constexpr ::llvm::StringLiteral kBlockAttrName = "ftpipe.block";
    static constexpr ::llvm::StringLiteral kStageAttrName = "ftpipe.stage";
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "ftpipe.device";
    static constexpr ::llvm::StringLiteral kHardwareAttrName =
        "ftpipe.hardware";
    static constexpr ::llvm::StringLiteral kPlanAttrName = "ftpipe.plan";
    /// Unit attribute on an op of a partitioned function: the op is computed
    /// in every stage that reads its results, not sent (its `ftpipe.stage`
    /// is nominal).
    static constexpr ::llvm::StringLiteral kReplicateAttrName =
        "ftpipe.replicate";
    /// Unit attribute on an op of a partitioned function: its results go
    /// from its stage to the first other stage that reads them, and from each
    /// stage that reads them to the next, instead of to every reader.
    static constexpr ::llvm::StringLiteral kForwardAttrName = "ftpipe.forward";
    /// Unit attribute on the tosa.clamp that ftpipe-clamp-gather-indices puts
    /// before a gather: ftpipe-trap-computed-indices finds its guards so.
    static constexpr ::llvm::StringLiteral kIndexGuardAttrName =
        "ftpipe.index_guard";
    /// Integer attribute on a tosa.gather of rows (an embedding): that row
    /// gets no gradient (nn.Embedding's `padding_idx`); read by the gather's
    /// differentiation rule (autodiff::kPaddingRowAttrName).
    static constexpr ::llvm::StringLiteral kPaddingRowAttrName =
        "ftpipe.padding_row";

  private:
    void registerAttributes();
  }];
}

#endif // FTPIPE_DIALECT_FTPIPE_FTPIPEDIALECT_TD
