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

def FreezeParamsPass : Pass<"ftpipe-freeze-params", "func::FuncOp"> {
  let summary = "Marks the parameters that fine-tuning leaves unchanged";
  let description = [{
    Marks `{ftpipe.frozen}` every `ftpipe.param` argument whose `ftpipe.name`
    (its Hugging Face name) matches `regex` (POSIX extended, matching
    anywhere in the name: anchor it with `^` and `$`) or is listed in
    `names`. A frozen parameter gets no gradient: ftpipe-outline-stages and
    ftpipe-differentiate leave it out of the activity analysis, so ops that
    only lead to frozen parameters have no adjoint and the backward stops
    where no active value remains; the cost model gives such ops no backward
    and the memory model no gradient, optimizer state or stashed version for
    the parameter; the manifest lists it as `frozen` and ftpipe-run never
    updates it. A function without parameters is left alone. Fails when
    `regex` matches no parameter or a listed name is none (naming it): a
    typo must not silently train everything.

    Before:
    ```mlir
    func.func @f(%w0: tensor<4x4xf32> {ftpipe.name = "layer.0.w", ftpipe.param},
                 %w1: tensor<4x4xf32> {ftpipe.name = "layer.1.w", ftpipe.param})
    ```
    After `--ftpipe-freeze-params="regex=^layer\.0\."`:
    ```mlir
    func.func @f(%w0: tensor<4x4xf32> {ftpipe.frozen, ftpipe.name = "layer.0.w", ftpipe.param},
                 %w1: tensor<4x4xf32> {ftpipe.name = "layer.1.w", ftpipe.param})
    ```
  }];
  let options = [
    Option<"regex", "regex", "std::string", /*default=*/"\"\"",
           "Freeze the parameters whose name matches this regular expression">,
    ListOption<"names", "names", "std::string",
               "Freeze the parameters of these names">,
  ];
  let dependentDialects = ["ftpipe::FTPipeDialect"];
  let statistics = [
    Statistic<"numFrozen", "num-frozen", "Number of parameters frozen">,
  ];
}

def ClampGatherIndicesPass
    : Pass<"ftpipe-clamp-gather-indices", "func::FuncOp"> {
  let summary = "Keeps every tosa.gather, and its adjoint, inside its table";
  let description = [{
    `tosa.gather` reads row `indices[n][w]` of `values[n]`; an index outside
    `[0, K)` (K the rows of the table) reads past the table in the lowered
    code, and the scatter-add of its adjoint (ftpipe-differentiate) writes
    past the gradient buffer. Token ids come from data files, so this pass
    clamps every gather's indices to `[0, K - 1]` with `tosa.clamp` before
    the gather, and differentiation, which runs after it, reuses the clamped
    indices: no input of any origin can address outside a buffer. Values are
    not changed silently in training: ftpipe-run checks every data input
    that indexes a table against the table's size (the manifest's
    `index_bound`) before it trains, so the clamp only guards code paths the
    data check cannot see. Run before ftpipe-outline-stages; the clamp
    carries the gather's attributes (stage, block) except its cost, and
    `ftpipe.index_guard`, by which `ftpipe-trap-computed-indices` finds the
    guards of indices the model computes and stops the run when one is
    outside.

    Before:
    ```mlir
    %rows = tosa.gather %table, %ids
        : (tensor<1x512x64xf32>, tensor<1x32xi32>) -> tensor<1x32x64xf32>
    ```
    After:
    ```mlir
    %safe = tosa.clamp %ids {ftpipe.index_guard, max_fp = 0.0 : f32,
                             max_int = 511 : i64, min_fp = 0.0 : f32,
                             min_int = 0 : i64}
        : (tensor<1x32xi32>) -> tensor<1x32xi32>
    %rows = tosa.gather %table, %safe
        : (tensor<1x512x64xf32>, tensor<1x32xi32>) -> tensor<1x32x64xf32>
    ```
  }];
  let dependentDialects = ["tosa::TosaDialect"];
  let statistics = [
    Statistic<"numClamped", "num-clamped", "Number of gathers clamped">,
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
    A measured profile (`ftpipe-run --profile-out`, ProfileSchema.h; or the
    older JSON from scope to `{"fwd_ms": x, "bwd_ms": y}`) replaces the
    figures of the ops of each measured stage, and then of each listed scope,
    split among them in proportion to the analytical ones; a device the
    profiled run slowed down on purpose is that much slower in the recorded
    hardware. docs/CostModel.md has the rules.

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
/// option wherever the plan is read. The setup is recorded once on the module
/// (`#ftpipe.training`): the first pass that takes these options records
/// them, later ones read the record, and an option given explicitly that
/// contradicts it is an error (docs/Architecture.md). The values' spellings
/// and the defaults come from FTPipe/Schedule/TrainingSetup.h.
defvar ObjectiveOptions = [
  Option<"schedule", "schedule", "::ftpipe::schedule::Kind",
         /*default=*/"::ftpipe::schedule::TrainingSetup().schedule",
         "Pipeline schedule",
         "::mlir::ftpipe::scheduleOptionValues()">,
  Option<"optimizer", "optimizer", "::ftpipe::schedule::Optimizer",
         /*default=*/"::ftpipe::schedule::TrainingSetup().optimizer",
         "Optimizer whose state is kept per parameter",
         "::mlir::ftpipe::optimizerOptionValues()">,
  Option<"stashing", "stashing", "::ftpipe::schedule::WeightVersions",
         /*default=*/"::ftpipe::schedule::TrainingSetup().weightVersions",
         "Weight versions kept by the async schedule",
         "::mlir::ftpipe::weightVersionsOptionValues()">,
  Option<"recompute", "recompute", "::ftpipe::schedule::RecomputeMode",
         /*default=*/"::ftpipe::schedule::TrainingSetup().recompute",
         "Which stages keep only their inputs and recompute the forward "
         "before the backward",
         "::mlir::ftpipe::recomputeModeOptionValues()">,
  Option<"microbatches", "microbatches", "unsigned",
         /*default=*/"::ftpipe::schedule::TrainingSetup().microBatches",
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

    A table compares the schedules side by side (GPipe, 1F1B with flush,
    ZB-H1, zb-auto, async): simulated time per mini-batch, idle share and
    each device's memory under each (zb-auto: its fastest lists within each
    device's memory when some fit). `replicas=auto` adds the planning
    table of data-parallel replicas: the depth x replicas search
    (lib/Partition/ReplicaSearch.h) with each partitioner that
    `ftpipe-auto-partition replicas=auto` runs (Seq-Pipe dp, Seq-Pipe
    greedy, Mixed-Pipe, with that pass's defaults), every option by
    objective and by simulation, a row each with its partitioner, and the
    option chosen over all of them (lib/Partition/ReplicaChoice.h);
    `replicas=W` the table of W identical pipelines alone, `replicas=r0,r1,...`
    that of one factor per plan device.
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
    Option<"replicas", "replicas", "::mlir::ftpipe::ReplicasOption",
           /*default=*/"::mlir::ftpipe::ReplicasOption::none()",
           "none; auto: also plan pipeline depth x data-parallel replicas "
           "on the hardware's devices and print the planning table; W: the "
           "table of W identical pipelines alone; r0,r1,...: of that layout">,
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

/// The option of the passes that solve: also plan with cheap values (made
/// from graph inputs and parameters alone, such as T5's attention position
/// bias) computed in every stage that reads them instead of sent, and keep
/// that plan when it is faster (lib/Partition/Replication.h). Replicated
/// ops carry `ftpipe.replicate`; ftpipe-outline-stages copies them into the
/// stages that read them.
defvar SharedValueOptions = [
  Option<"replicate", "replicate", "bool", /*default=*/"true",
         "Also plan with cheap values recomputed where they are read, "
         "instead of sent, and keep the faster plan">,
  Option<"forward", "forward", "bool", /*default=*/"true",
         "Pass values read by stages that run one after the other from "
         "stage to stage instead of sending them from their producer to "
         "each, where the busiest sender gains and the plan is no slower">,
];

/// The option of the passes that choose among candidate plans: the
/// synchronous schedule the plan will run under when the training setup's
/// `schedule` is FTPipe's async; memory is checked under it instead
/// (partition::memoryScheduleFor). Candidates then compete by
/// their simulated step under it first, as ftpipe-run runs it
/// (partition::simulateSynchronousStep: zb-auto within each device's
/// memory), then by the time under `schedule`. The module's
/// `#ftpipe.training` then records it as the setup's schedule.
defvar SyncScheduleOptions = [
  Option<"syncSchedule", "sync-schedule", "::ftpipe::schedule::Kind",
         /*default=*/"::ftpipe::schedule::Kind::Async",
         "Synchronous schedule the plan will run under: candidate plans "
         "compete by its simulated step first, and #ftpipe.training records "
         "it as the setup's schedule (none: the time under 'schedule' "
         "alone decides)",
         "::mlir::ftpipe::syncScheduleOptionValues()">,
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
    good. Both keep the best plan by the objective, then shift its cuts
    where that lowers the simulated time without raising the objective (plans
    of one objective differ in the simulator), and verify it. Needs
    ftpipe-annotate-costs; writes `ftpipe.stage` on every op and
    `#ftpipe.plan` on the module.

    ```mlir
    // ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe="devices=2 method=dp"
    %0 = tosa.matmul ... {ftpipe.stage = 0 : i64, ...}
    %1 = tosa.matmul ... {ftpipe.stage = 1 : i64, ...}
    module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp",
        stage_device = [0, 1], ...>}
    ```

    With `replicas=auto` the `devices` devices may also run as a shallower
    pipeline whose devices have data-parallel replicas (docs/Replicas.md):
    the depth x replicas search of `ftpipe-mixed-pipe replicas=auto`
    (lib/Partition/ReplicaSearch.h) with this method's plans, the pure
    pipeline kept unless an option with replicas takes at least 5 %
    (`kReplicaMinGain`) less (lib/Partition/ReplicaChoice.h). The module
    then holds the pipeline's plan and hardware and each device's replicas
    in `#ftpipe.plan`. `replicas=W` runs W identical pipelines of depth
    P / W instead (PipeDream-2BW's: the search's options of that layout
    alone, the fastest kept; W must divide P, and their plans must fit),
    `replicas=r0,r1,...` that layout of one factor per plan device (adding
    up to P).
    `verbose` prints the method's fastest pure and replicated options and
    the choice on stderr.
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"method", "method", "::mlir::ftpipe::SeqPipeMethod",
           /*default=*/"::mlir::ftpipe::SeqPipeMethod::DP",
           "How to cut", [{::llvm::cl::values(
             clEnumValN(::mlir::ftpipe::SeqPipeMethod::DP, "dp",
                        "exact dynamic programming"),
             clEnumValN(::mlir::ftpipe::SeqPipeMethod::Greedy, "greedy",
                        "binary search on the stage time, greedy cuts"))}]>,
    Option<"replicas", "replicas", "::mlir::ftpipe::ReplicasOption",
           /*default=*/"::mlir::ftpipe::ReplicasOption::none()",
           "none; auto: also choose pipeline depth x data-parallel "
           "replicas for the devices, with this method's plans; W: W "
           "identical pipelines of depth devices / W; r0,r1,...: that "
           "layout, one factor per plan device, adding up to devices">,
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "With replicas=auto, print the options and the choice on stderr">,
  ], SharedValueOptions, ObjectiveOptions);
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
    choice is made afresh per stage after refinement. A plan that forwards
    values (`ftpipe.forward`) is refined without, and forwarding is decided
    again on the refined plan (moves may break the chains it follows).
    Rewrites `ftpipe.stage` and `#ftpipe.plan` (method gets "+refine").
  }];
  let options = !listconcat([
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Model function (default: the only function with a body)">,
  ], ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

def MixedPipePass : Pass<"ftpipe-mixed-pipe", "ModuleOp"> {
  let summary = "Mixed-Pipe: coarsen, assign and refine, best of L in {P..4P} and paired runs at {5P, 6P, 8P}";
  let description = [{
    Runs coarsening, assignment and refinement for L = P, 2P, 3P and 4P and
    keeps the plan that fits in memory and simulates fastest (the simulated
    async time under the chosen schedule; the objective, a sum of loads per
    device, misses the waits between stage chains that share a device).
    Assignment places blocks both by largest compute first and by balancing
    compute and memory together, keeping the faster fitting placement. The
    blocks of L = 5P, 6P and 8P are also placed as paired runs (every device
    one chunk of each of two parts of the block order), and such a plan is
    kept when it is better (docs/Partition.md). The candidates run in
    parallel; the choice does not depend on the number of threads.
    Writes `ftpipe.stage` and
    `#ftpipe.plan`. Prints one line per candidate L on stderr with
    `verbose`.

    With `replicas=auto` the `devices` devices may also run as w identical
    pipelines of depth P / w (data-parallel replicas; docs/Replicas.md):
    the pipeline of every width w that divides P is planned as above on the
    devices that run replica 0 of each plan device (0, w, 2w, ...), priced
    with its gradient all-reduce over the replicas and simulated, and the
    fastest fitting option is kept (lib/Partition/ReplicaSearch.h, the
    table `ftpipe-report replicas=auto` prints). The module then holds the
    pipeline's plan and hardware and `replicas = w` in `#ftpipe.plan`;
    `ftpipe-compile` writes the replica layout into `manifest.json`. With
    `verbose`, every width tried is printed. With `sync-schedule` the
    options compete by their step under it, as the candidates do (zb-auto:
    its lists within each device's memory).

    `replicas=W` (a number) plans W identical pipelines of depth P / W
    (PipeDream-2BW's) on the `devices` devices: the search's options of that
    layout alone (its plan, cut for overlap, uneven), the fastest kept even
    where another layout or the pure pipeline would be faster. W must
    divide P, and the pipelines must fit in memory as replicas; otherwise
    the pass fails, naming why. `replicas=1` is `replicas=none`.
    `replicas=r0,r1,...` plans that layout the same way (PipeDream's
    per-stage replication: one factor per plan device, adding up to P;
    the pipeline planned on the devices of each plan device's replica 0,
    checked for memory as those replicas), and fails where the factors do
    not add up to P or the layout does not fit.

    `sync-schedule=zb-auto` (or another synchronous kind) also simulates
    every candidate's step under that schedule as ftpipe-run runs it
    (zb-auto: its lists within each device's memory) and keeps the
    candidate with the shortest step, the time under `schedule` breaking
    ties; memory is checked under that schedule, not `schedule`
    (zb-auto: 1F1B's micro-batches in flight, `memoryScheduleFor`), so
    the plan may not fit the async schedule. For a plan made with FTPipe's
    setup (async) that will be trained synchronously. The chosen
    plan's stage boundaries are then moved where that step gets shorter
    (`refineForSyncStep`, lib/Partition/SyncRefinement.cpp; `verbose`
    prints what it did): its async time may rise, its memory still fits
    that schedule.
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "Print every candidate L on stderr">,
    Option<"replicas", "replicas", "::mlir::ftpipe::ReplicasOption",
           /*default=*/"::mlir::ftpipe::ReplicasOption::none()",
           "none; auto: also choose pipeline depth x data-parallel "
           "replicas for the devices; W: W identical pipelines of depth "
           "devices / W; r0,r1,...: that layout, one factor per plan "
           "device, adding up to devices">,
  ], SyncScheduleOptions, SharedValueOptions, ObjectiveOptions);
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

    With `sync-schedule=zb-auto` (or another synchronous kind) each
    candidate is also simulated under that schedule as ftpipe-run runs it
    (zb-auto: its lists within each device's memory; Mixed-Pipe compares
    its own candidates the same way), and the shortest step wins, the time
    under `schedule` breaking ties; memory is checked under that schedule
    (zb-auto: 1F1B's micro-batches in flight), not `schedule`. The chosen plan's stage boundaries are then moved where
    that step gets shorter (`refineForSyncStep`; not with `replicas`).

    With `replicas=auto` each partitioner's plans also go through the
    pipeline depth x data-parallel replicas search (docs/Replicas.md) that
    `ftpipe-mixed-pipe replicas=auto` runs with Mixed-Pipe's: every depth,
    each plan device on one or more processes of the devices; every option
    of every partitioner is simulated under `schedule` and, with
    `sync-schedule`, under that schedule too: the options then compete by
    their step under it (the schedule the plan will run under; memory is
    still planned under `schedule`), and one choice is made over all of them
    (lib/Partition/ReplicaChoice.h): the fastest feasible option, one with
    replicas only where it takes at least 5 % (`kReplicaMinGain`) less than
    the fastest pure pipeline of any partitioner. A line per partitioner
    gives its pure pipeline and its fastest option with replicas; the plan
    records its replicas as `ftpipe-mixed-pipe` does. `replicas=W` makes
    the same choice among every partitioner's W identical pipelines of
    depth P / W alone (`ftpipe-mixed-pipe`'s `replicas=W`), and
    `replicas=r0,r1,...` among their options of that layout. `verbose` also
    prints every option of each partitioner's search and its bounds, as
    `ftpipe-mixed-pipe verbose` prints Mixed-Pipe's ("options of METHOD:",
    then a line per option, the one chosen over all marked): one run gives
    every search's figures (bench/replica_planning.sh).
  }];
  let options = !listconcat(PartitionOptions, [
    Option<"dpMaxOps", "dp-max-ops", "unsigned", /*default=*/"20000",
           "Largest graph on which Seq-Pipe dp is tried">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not print the candidates">,
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "With replicas: also print every option of every partitioner's "
           "search and its bounds on stderr">,
    Option<"replicas", "replicas", "::mlir::ftpipe::ReplicasOption",
           /*default=*/"::mlir::ftpipe::ReplicasOption::none()",
           "none; auto: also choose pipeline depth x data-parallel "
           "replicas for the devices, over every partitioner's plans; W: W "
           "identical pipelines of depth devices / W, with every "
           "partitioner's plans; r0,r1,...: that layout, one factor per "
           "plan device, adding up to devices">,
  ], SyncScheduleOptions, SharedValueOptions, ObjectiveOptions);
  let dependentDialects = ["ftpipe::FTPipeDialect"];
}

//===----------------------------------------------------------------------===//
// Stage programs: outline, differentiate, split per device
// (docs/StagePrograms.md holds the contract these passes produce)
//===----------------------------------------------------------------------===//

def OutlineStagesPass : Pass<"ftpipe-outline-stages", "ModuleOp"> {
  let summary = "Makes every stage of the plan a function of its own";
  let description = [{
    Moves the ops of each stage of the partitioned model function into a
    private function `@stageS` (attributes `ftpipe.stage`, `ftpipe.device`),
    and rewrites the model function as calls of the stage functions in an
    order that respects their dependencies, so it still computes the same
    thing and still runs through the CPU lowering.

    A stage function's arguments are, in this order, the parameters it reads
    (`ftpipe.param`, `ftpipe.name`, and `ftpipe.owner`: the lowest device
    whose stages read the parameter; a parameter read on several devices,
    such as a tied embedding, is a copy on the others), the data inputs it
    reads (`ftpipe.input` = the argument's name in the model) and the values
    it receives from other stages (`ftpipe.from_stage`). Its results are the
    values other stages or the model's return read. Constants read by several
    stages are copied into each instead of being sent, and so are the ops the
    partitioner replicated (`ftpipe.replicate`), with the ops they read in
    turn: a stage that reads their results takes their parameters and data
    inputs as arguments and computes them itself. The results of an op the
    partitioner forwarded (`ftpipe.forward`) go to the first stage that
    reads them; every later reader (in the stages' order) receives them from
    an earlier reader, the latest on its own device if there is one, else
    the one just before it; that reader returns the received argument as an
    extra result. Readers that do not depend on one another are an error.

    Activity is decided here, once for the whole model: a received value or a
    result carries a gradient (`ftpipe.active`) if it is a float that depends
    on a parameter and on which the loss depends; the loss result is marked
    `ftpipe.loss` (the model's result, a float tensor of one element).
    Ops that only compute the evaluation metrics the model returns after its
    loss (results named by `ftpipe.metric`, `ftpipe-model-gen --metrics`)
    move to the loss's stage, wherever the plan put them, so that the stage
    that computes the loss returns them too.

    Functions rather than `ftpipe.stage` regions: a function is the unit that
    reverse mode, bufferization with function boundaries, the C interface
    and the per-device entry points all work on, and the model function stays
    runnable.

    Before (ops carry `ftpipe.stage`, the module carries `ftpipe.plan`):
    ```mlir
    func.func @f(%w: tensor<4xf32> {ftpipe.param, ftpipe.name = "w"}, %x: tensor<4xf32>) -> tensor<f32> {
      %0 = tosa.mul %x, %w {ftpipe.stage = 0 : i64, shift = 0 : i8} : ...
      %1 = tosa.reduce_sum %0 {axis = 0 : i32, ftpipe.stage = 1 : i64} : ...
      ...
    }
    ```
    After:
    ```mlir
    func.func private @stage0(%w: tensor<4xf32> {ftpipe.param, ftpipe.name = "w", ftpipe.owner = 0 : i64},
                              %x: tensor<4xf32> {ftpipe.input = "x"}) -> (tensor<4xf32> {ftpipe.active})
        attributes {ftpipe.stage = 0 : i64, ftpipe.device = 0 : i64}
    func.func @f(...) -> tensor<f32> {
      %0 = call @stage0(%w, %x) : ...
      %1 = call @stage1(%0) : ...
      return %1 : tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The partitioned model function (default: the one whose ops carry "
           "stages)">,
  ];
  let dependentDialects = ["ftpipe::FTPipeDialect", "func::FuncDialect"];
}

def DifferentiatePass : Pass<"ftpipe-differentiate", "ModuleOp"> {
  let summary = "Builds the backward of every stage function (reverse mode)";
  let description = [{
    For every stage function `@stageS` (from `ftpipe-outline-stages`) builds
    `@stageS_adjoint`: given the stage's arguments (and saved values) and the
    gradients of its `ftpipe.active` results, it returns the gradients of its
    `ftpipe.active` arguments and of its parameters that the loss depends
    on, in argument order (result attribute `ftpipe.grad_of` = argument
    number). In a module without stage functions, every public function that
    returns one float scalar (the loss) is differentiated with respect to its
    `ftpipe.param` arguments instead (`@F_adjoint`, taking the loss gradient
    last): the unpartitioned reference.

    Each op's adjoint comes from its `ReverseModeOpInterface` (rules for
    TOSA, structured linalg ops, tensor views; scalar arith/math ops inside
    linalg bodies through `ScalarTangentOpInterface`); another compiler adds
    rules by attaching models to its ops. Integer and mask values carry no
    gradient and need no rule. An active op without a rule is an error at its
    location that names it. Element-wise arith/math ops on whole tensors are
    first rewritten as linalg.generic.

    With `recompute=true` (the default, FTPipe's setting) the adjoint re-runs
    the stage's forward from its arguments. With `recompute=false` the stage
    function also returns the values its adjoint needs (`ftpipe.saved`), and
    the adjoint takes them after the stage's arguments. `recompute=plan`
    takes each stage's choice from the plan (all stages recompute when the
    plan does not say).

    With `split-backward=true` (the default) the adjoint of a stage with
    parameters is also split for zero-bubble schedules (docs/StagePrograms.md,
    contract version 2): `@stageS_adjoint_input` takes the adjoint's
    arguments and returns the gradients of the stage's received values, then
    the values the weight part reads (`ftpipe.weight_saved = K`);
    `@stageS_adjoint_weight` takes the parameters and data inputs, then those
    values, and returns the parameter gradients. Every op of the adjoint goes
    to one of them (constants are rebuilt in both), so they do the adjoint's
    arithmetic and no more. A stage whose weight part would run no op of its
    own (no parameters, or parameter gradients that fall out of the input
    part) keeps only `@stageS_adjoint`. `@stageS_adjoint` stays either way.

    ```mlir
    func.func private @stage1_adjoint(%x: tensor<4xf32>, %dy: tensor<f32>)
        -> (tensor<4xf32> {ftpipe.grad_of = 0 : i64})
    ```
  }];
  let options = [
    Option<"recompute", "recompute", "std::string", /*default=*/"\"true\"",
           "true: the backward recomputes the forward; false: the forward "
           "returns the values the backward needs; plan: per stage, as the "
           "plan says">,
    Option<"splitBackward", "split-backward", "bool", /*default=*/"true",
           "Also split each stage's adjoint with parameters into an input "
           "part and a weight part (zero-bubble schedules)">,
  ];
  let dependentDialects = [
    "ftpipe::FTPipeDialect", "arith::ArithDialect", "linalg::LinalgDialect",
    "scf::SCFDialect", "tensor::TensorDialect", "tosa::TosaDialect"];
}

def SplitDevicesPass : Pass<"ftpipe-split-devices", "ModuleOp"> {
  let summary = "Per-device forward and backward entry points with transfers";
  let description = [{
    For every stage S on device D, builds the entry points of one micro-batch
    (`%mb`), per the contract in docs/StagePrograms.md:
    `@stageS_forward(%mb, parameters, data inputs) -> (loss?, metrics,
    saved values)` and `@stageS_backward(%mb, parameters, data inputs, saved values) ->
    (parameter gradients)`, which receive the values and gradients they need
    with `ftpipe.recv`, call `@stageS` / `@stageS_adjoint`, and send what
    other stages need with `ftpipe.send` (to any device, the own one
    included). Every value read by another stage is an edge `e` (numbered in
    the order of the producing calls in the model function, then result,
    then consumer stage); its forward message has tag `2e`, its gradient
    `2e+1`. A result that passes a received value on (a forwarded value,
    see `ftpipe-outline-stages`) is sent right after it is received, before
    the call, and its gradient is received after the adjoint (given zero
    for it) and added to the argument's gradient. The model function is
    removed: the runtime, not the IR, decides the order in which a device
    runs its entry points.

    A stage whose adjoint `ftpipe-differentiate` split also gets
    `@stageS_backward_input(%mb, parameters, data inputs, saved values) ->
    (values for the weight part)`, which does the backward's receives and
    sends, and `@stageS_backward_weight(%mb, parameters, data inputs, values
    for the weight part) -> (parameter gradients)`, which does no transfer
    (`ftpipe.weight_saved = K` on the K-th value on both sides; contract
    version 2).

    The model function returns its loss, then optionally evaluation metrics
    (`ftpipe-model-gen --metrics`: integer results named by
    `ftpipe.metric`, never differentiated); the forward of the stage that
    computes a metric returns it after the loss, with the same attribute,
    for `ftpipe-run --eval-data`.

    ```mlir
    func.func @stage1_forward(%mb: index {ftpipe.microbatch}, ...) -> (tensor<f32> {ftpipe.loss}, tensor<4xf32> {ftpipe.saved = 0 : i64})
        attributes {ftpipe.device = 1 : i64, ftpipe.entry = "forward", ftpipe.stage = 1 : i64} {
      %0 = ftpipe.recv from 0 tag 0 microbatch %mb : tensor<4xf32>
      %1 = call @stage1(%0) : (tensor<4xf32>) -> tensor<f32>
      return %1, %0 : tensor<f32>, tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["ftpipe::FTPipeDialect", "arith::ArithDialect",
                           "func::FuncDialect", "tosa::TosaDialect"];
}

#endif // FTPIPE_TRANSFORMS_PASSES_TD
