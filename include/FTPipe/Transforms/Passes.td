//===- Passes.td - FTPipe passes ---------------------------*- tablegen -*-===//
//
// Declarations of every FTPipe pass with its options. The docs in
// docs/generated/FTPipePasses.md are generated from this file.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_PASSES_TD
#define FTPIPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MarkParamsPass : Pass<"ftpipe-mark-params", "func::FuncOp"> {
  let summary = "Marks the trainable weights of foreign IR as parameters";
  let description = [{
    IR written by other tools does not say which function arguments are
    trainable weights. This pass marks every argument that is a ranked tensor
    of a floating-point type as `{ftpipe.param}`, except the arguments listed
    in `inputs` (data such as token ids or masks), and gives every parameter
    without a name the name `argN` in `ftpipe.name`. Arguments that already
    carry `ftpipe.param` or `ftpipe.name` keep them, so the pass can run on IR
    that is partly marked.

    Before:
    ```mlir
    func.func @f(%w: tensor<4x4xf32>, %x: tensor<1x4xf32>, %ids: tensor<1xi64>)
    ```
    After `--ftpipe-mark-params="inputs=1"`:
    ```mlir
    func.func @f(%w: tensor<4x4xf32> {ftpipe.name = "arg0", ftpipe.param},
                 %x: tensor<1x4xf32>, %ids: tensor<1xi64>)
    ```
  }];
  let options = [
    ListOption<"inputs", "inputs", "unsigned",
               "Indices of float tensor arguments that are data inputs, not "
               "parameters">,
  ];
  let dependentDialects = ["ftpipe::FTPipeDialect"];
  let statistics = [
    Statistic<"numParams", "num-params", "Number of arguments marked">,
  ];
}

def AnnotateCostsPass : Pass<"ftpipe-annotate-costs", "ModuleOp"> {
  let summary = "Attaches the analytical (or profiled) cost of every op";
  let description = [{
    Sets the module's `ftpipe.hardware` to the chosen cluster and gives every
    op of every function body a `#ftpipe.cost`: forward and backward time for
    one micro-batch on the reference device, bytes of parameters it reads,
    bytes of activations its backward keeps, bytes of its results.

    Times come from a roofline per kernel (the larger of FLOPs at the
    device's sustained rate and bytes at its sustained bandwidth, plus a
    launch overhead); backward rules follow each op's derivative; ops on
    which no gradient flows (masks, position ids) have no backward. An op
    without a rule gets a warning at its location and a byte-based estimate.
    A measured profile (JSON: scope -> `{"fwd_ms": x, "bwd_ms": y}`)
    replaces the figures of the ops in each listed scope, split among them in
    proportion to the analytical ones. docs/CostModel.md has the rules.

    Before:
    ```mlir
    %0 = tosa.matmul %a, %b : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
    ```
    After:
    ```mlir
    %0 = tosa.matmul %a, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 0.005, bwd_ms = 0.01,
        param_bytes = 0, act_bytes = 32768, out_bytes = 16384>} : ...
    ```
  }];
  let options = [
    Option<"hardware", "hardware", "std::string",
           /*default=*/"\"rtx2080ti-pcie-x8\"",
           "Hardware preset name or cluster JSON file">,
    Option<"device", "device", "unsigned", /*default=*/"0",
           "Reference device whose speed times the ops">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "Measured profile (JSON) that overrides analytical times">,
  ];
  let dependentDialects = ["ftpipe::FTPipeDialect"];
  let statistics = [
    Statistic<"numUnknownOps", "num-unknown-ops",
              "Ops costed by the byte-based fallback">,
  ];
}

#endif // FTPIPE_TRANSFORMS_PASSES_TD
