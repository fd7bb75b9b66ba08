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

/// Options of the fine-tuning setup that the objective, the memory model and
/// the simulator depend on; every pass that scores plans takes them.
defvar ObjectiveOptions = [
  Option<"schedule", "schedule", "::ftpipe::partition::Schedule",
         /*default=*/"::ftpipe::partition::Schedule::Async",
         "Pipeline schedule", [{::llvm::cl::values(
           clEnumValN(::ftpipe::partition::Schedule::Async, "async",
                      "PipeDream-style asynchronous 1F1B (FTPipe's default)"),
           clEnumValN(::ftpipe::partition::Schedule::GPipe, "gpipe",
                      "GPipe: fill, drain, flush"),
           clEnumValN(::ftpipe::partition::Schedule::OneFOneB, "1f1b",
                      "1F1B with a flush per mini-batch"))}]>,
  Option<"optimizer", "optimizer", "::ftpipe::partition::Optimizer",
         /*default=*/"::ftpipe::partition::Optimizer::Adam",
         "Optimizer whose state is kept per parameter", [{::llvm::cl::values(
           clEnumValN(::ftpipe::partition::Optimizer::SGD, "sgd",
                      "plain SGD: no state"),
           clEnumValN(::ftpipe::partition::Optimizer::Momentum, "momentum",
                      "SGD with momentum: one buffer"),
           clEnumValN(::ftpipe::partition::Optimizer::Adam, "adam",
                      "Adam / AdamW: two buffers"))}]>,
  Option<"stashing", "stashing", "::ftpipe::partition::WeightVersioning",
         /*default=*/"::ftpipe::partition::WeightVersioning::Stash",
         "Weight versions kept by the async schedule", [{::llvm::cl::values(
           clEnumValN(::ftpipe::partition::WeightVersioning::Stash, "stash",
                      "one version per micro-batch in flight (PipeDream)"),
           clEnumValN(::ftpipe::partition::WeightVersioning::DoubleBuffered,
                      "2bw", "two versions (PipeDream-2BW)"),
           clEnumValN(::ftpipe::partition::WeightVersioning::None, "none",
                      "a single version"))}]>,
  Option<"recompute", "recompute", "bool", /*default=*/"false",
         "Keep only stage inputs and recompute the forward before backward">,
  Option<"microbatches", "microbatches", "unsigned", /*default=*/"8",
         "Micro-batches per mini-batch (GPipe and 1F1B)">,
];

def ExportGraphPass : Pass<"ftpipe-export-graph", "ModuleOp"> {
  let summary = "Writes the op graph, costs and plan as JSON";
  let description = [{
    Writes the model function's op graph to `file` in the JSON schema of
    docs/Partition.md: `nodes` (`id`, `op`, `scope`, `fwd_ms`, `bwd_ms`,
    `param_bytes`, `act_bytes`, `out_bytes`, `stage`, `device`), `edges`
    (`src`, `dst`, `bytes`), plus `values` and `params`, which make the file
    a lossless copy that lib/Partition and other tools can load, check or
    re-partition. Needs `ftpipe.cost` on every op (ftpipe-annotate-costs);
    `stage`/`device` come from the plan in the IR (-1 when there is none).
    The IR is left unchanged.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "Output JSON file ('-' for stdout)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Model function (default: the only function with a body)">,
  ];
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def ReportPass : Pass<"ftpipe-report", "ModuleOp"> {
  let summary = "Scores the plan in the IR and prints the partition report";
  let description = [{
    Evaluates the plan recorded in the IR (every op's `ftpipe.stage`, the
    module's `#ftpipe.plan`; before partitioning, one stage on device 0) on
    the module's hardware and prints a table on stdout: per stage and per
    device compute, exposed communication (CCO: communication costs only
    what compute cannot hide), load, parameters, memory against the budget,
    bytes sent and received; the async steady-state time per micro-batch,
    the simulated time per mini-batch under GPipe and 1F1B with M
    micro-batches, the lower bound max(total compute / P, largest op) and
    the imbalance (busiest device / mean).

    `json=FILE` writes the same figures as JSON (schema in
    docs/Report.md), `trace=FILE` the simulated timeline of the chosen
    schedule as a Chrome/Perfetto trace (one track per device and per link),
    `dot=FILE` the stage graph for Graphviz, coloured by device, with edges
    labelled by bytes. The IR is left unchanged.
  }];
  let options = !listconcat([
    Option<"json", "json", "std::string", /*default=*/"\"\"",
           "Write the report as JSON to this file">,
    Option<"trace", "trace", "std::string", /*default=*/"\"\"",
           "Write the simulated timeline as a Chrome trace to this file">,
    Option<"dot", "dot", "std::string", /*default=*/"\"\"",
           "Write the stage graph in Graphviz format to this file">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Model function (default: the only function with a body)">,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

#endif // FTPIPE_TRANSFORMS_PASSES_TD
