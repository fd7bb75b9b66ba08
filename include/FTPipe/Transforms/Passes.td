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
  let statistics = [
    Statistic<"numParams", "num-params", "Number of arguments marked">,
  ];
}

#endif // FTPIPE_TRANSFORMS_PASSES_TD
