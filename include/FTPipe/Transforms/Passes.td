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
/// the simulator depend on; every pass that scores plans takes them. The
/// defaults are FTPipe's setup (docs/FineTuningSetup.md): asynchronous 1F1B,
/// one weight version (staleness handled by weight prediction, not
/// stashing), recomputation of every stage's forward, Adam. With
/// `recompute=auto` a partitioning pass solves with recomputation everywhere,
/// then chooses per stage under the memory budget
/// (lib/Partition/Recomputation); the plan carries
/// the choice (`#ftpipe.plan<..., recompute = [...]>`), which overrides the
/// option wherever the plan is read.
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
                      "Adam / AdamW: two buffers"),
           clEnumValN(::ftpipe::partition::Optimizer::Adafactor, "adafactor",
                      "Adafactor without momentum: factored, about no state"))}]>,
  Option<"stashing", "stashing", "::ftpipe::partition::WeightVersioning",
         /*default=*/"::ftpipe::partition::WeightVersioning::None",
         "Weight versions kept by the async schedule", [{::llvm::cl::values(
           clEnumValN(::ftpipe::partition::WeightVersioning::Stash, "stash",
                      "one version per micro-batch in flight (PipeDream)"),
           clEnumValN(::ftpipe::partition::WeightVersioning::DoubleBuffered,
                      "2bw", "two versions (PipeDream-2BW)"),
           clEnumValN(::ftpipe::partition::WeightVersioning::None, "none",
                      "a single version"))}]>,
  Option<"recompute", "recompute", "::ftpipe::partition::RecomputeMode",
         /*default=*/"::ftpipe::partition::RecomputeMode::Always",
         "Which stages keep only their inputs and recompute the forward "
         "before the backward", [{::llvm::cl::values(
           clEnumValN(::ftpipe::partition::RecomputeMode::Always, "true",
                      "every stage (FTPipe's setup)"),
           clEnumValN(::ftpipe::partition::RecomputeMode::Never, "false",
                      "no stage: every activation is kept"),
           clEnumValN(::ftpipe::partition::RecomputeMode::Auto, "auto",
                      "the partitioner chooses per stage under the memory "
                      "budget"))}]>,
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

/// Options every partitioning pass takes besides the objective's.
defvar PartitionOptions = [
  Option<"devices", "devices", "unsigned", /*default=*/"0",
         "Plan for the first P devices of the module's hardware (0: all); "
         "the module's hardware becomes those P devices">,
  Option<"function", "function", "std::string", /*default=*/"\"\"",
         "Model function (default: the only function with a body)">,
];

def SeqPipePass : Pass<"ftpipe-seq-pipe", "ModuleOp"> {
  let summary = "Contiguous pipeline stages, one per device (Seq-Pipe)";
  let description = [{
    Cuts the ops, in program order (a topological order), into at most P
    contiguous stages and puts stage i on device i. `method=dp` is exact for
    the objective: the busiest stage's compute plus its exposed
    communication, where every value crossing a cut is priced once per
    destination stage, under every device's memory limit. `method=greedy`
    binary-searches a target stage time and cuts left to right: fast and
    good. Both keep the best plan by the objective and verify it. Needs
    ftpipe-annotate-costs; writes `ftpipe.stage` on every op and
    `#ftpipe.plan` on the module.

    ```mlir
    // ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe="devices=2 method=dp"
    %0 = tosa.matmul ... {ftpipe.stage = 0 : i64, ...}
    %1 = tosa.matmul ... {ftpipe.stage = 1 : i64, ...}
    module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp",
        stage_device = [0, 1], ...>}
    ```
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"method", "method", "::mlir::ftpipe::SeqPipeMethod",
           /*default=*/"::mlir::ftpipe::SeqPipeMethod::DP",
           "How to cut", [{::llvm::cl::values(
             clEnumValN(::mlir::ftpipe::SeqPipeMethod::DP, "dp",
                        "exact dynamic programming"),
             clEnumValN(::mlir::ftpipe::SeqPipeMethod::Greedy, "greedy",
                        "binary search on the stage time, greedy cuts"))}]>,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def CoarsenPass : Pass<"ftpipe-coarsen", "ModuleOp"> {
  let summary = "Coarsens the op graph into L blocks (Mixed-Pipe, phase 1)";
  let description = [{
    Contracts the op graph into `stages` blocks, keeping the block graph
    acyclic after every contraction (checked with an incremental topological
    order): by scope prefix (each instance of a block type such as `T5Block`
    becomes one node, deeper common prefixes first), by op type, absorbing
    zero-weight ops, CCO merging (a block grows until its compute covers its
    forward and backward communication), growth around L centres, then
    smallest-first down to L. Writes the block id of every op as
    `ftpipe.block`. Needs ftpipe-annotate-costs (the hardware prices
    communication).

    ```mlir
    %0 = tosa.matmul ... {ftpipe.block = 3 : i64, ...}
    ```
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"stages", "stages", "unsigned", /*default=*/"0",
           "Number of blocks L (0: 2P)">,
    ListOption<"blockTypes", "block-types", "std::string",
               "Module types whose instances become one block each "
               "(default: T5Block, BertLayer, GPT2Block, Block, "
               "LlamaDecoderLayer)">,
  ]);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def AssignDevicesPass : Pass<"ftpipe-assign-devices", "ModuleOp"> {
  let summary = "Places the blocks on devices (Mixed-Pipe, phase 2)";
  let description = [{
    Places the blocks that ftpipe-coarsen wrote (`ftpipe.block`) onto P
    devices: largest first, onto the least loaded device that has memory for
    it, ties broken by communication. Several non-adjacent blocks may share a
    device; each device's blocks then become as few stages as keep the stage
    graph acyclic. Writes `ftpipe.stage` on every op and `#ftpipe.plan`.
  }];
  let options = !listconcat(PartitionOptions, ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def RefinePass : Pass<"ftpipe-refine", "ModuleOp"> {
  let summary = "Improves the plan by moving boundary ops (Mixed-Pipe, phase 3)";
  let description = [{
    Uncoarsens level by level (whole blocks from `ftpipe.block`, when
    present, then single ops) and moves units between the existing stages
    while the objective (the largest device load) improves, never breaking a
    memory limit or the stage graph's acyclicity, never emptying a stage.
    Each stage keeps the recomputation choice the plan gives it (without a
    per-stage list: the `recompute` option); with `recompute=auto` the
    choice is made afresh per stage after refinement.
    Rewrites `ftpipe.stage` and `#ftpipe.plan` (method gets "+refine").
  }];
  let options = !listconcat([
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Model function (default: the only function with a body)">,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def MixedPipePass : Pass<"ftpipe-mixed-pipe", "ModuleOp"> {
  let summary = "Mixed-Pipe: coarsen, assign and refine, best of L in {P..4P}";
  let description = [{
    Runs coarsening, assignment and refinement for L = P, 2P, 3P and 4P and
    keeps the plan that fits in memory and simulates fastest (the simulated
    async time under the chosen schedule; the objective, a sum of loads per
    device, misses the waits between stage chains that share a device).
    Assignment places blocks both by largest compute first and by balancing
    compute and memory together, keeping the faster fitting placement.
    Writes `ftpipe.stage` and
    `#ftpipe.plan`. Prints one line per candidate L on stderr with
    `verbose`.
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "Print every candidate L on stderr">,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def AutoPartitionPass : Pass<"ftpipe-auto-partition", "ModuleOp"> {
  let summary = "Runs every partitioner and keeps the best feasible plan";
  let description = [{
    "Run what is feasible, take the best": Seq-Pipe `dp` (when the graph is
    small enough for it, `dp-max-ops`), Seq-Pipe `greedy` and Mixed-Pipe;
    each feasible plan is scored by the objective and simulated; the plan with
    the lowest time per micro-batch under the chosen schedule wins. Prints a
    line per candidate on stderr. IR without scopes partitions too (coarsening
    falls back to structure). When no plan fits, fails with the memory needed
    and available and what would help (more devices, recomputation, a
    smaller micro-batch, another optimizer).
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"dpMaxOps", "dp-max-ops", "unsigned", /*default=*/"20000",
           "Largest graph on which Seq-Pipe dp is tried">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not print the candidates">,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

#endif // FTPIPE_TRANSFORMS_PASSES_TD
