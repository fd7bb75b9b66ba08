//===- FTPipeAttrs.td - ftpipe attributes ------------------*- tablegen -*-===//
//
// Attributes for op costs, hardware descriptions and partition plans. All of
// them print as keyword structs (`#ftpipe.cost<fwd_ms = ..., ...>`) so that a
// reader can see every figure the partitioner used.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_FTPIPEATTRS_TD
#define FTPIPE_DIALECT_FTPIPE_FTPIPEATTRS_TD

include "FTPipe/Dialect/FTPipe/FTPipeDialect.td"
include "mlir/IR/AttrTypeBase.td"

/// A `double` printed in its shortest round-tripping decimal form.
class FTPipe_F64Parameter<string desc> : AttrOrTypeParameter<"::mlir::ftpipe::F64", desc> {
  let parser = "::mlir::ftpipe::parseF64($_parser)";
  let printer = "::mlir::ftpipe::printF64($_printer, $_self)";
}

/// A `double` that may be left out, standing for `value`.
class FTPipe_DefaultF64Parameter<string desc, string value>
    : FTPipe_F64Parameter<desc> {
  let defaultValue = value;
}

/// A list of booleans printed as `true, false, ...`, empty when left out.
class FTPipe_BoolArrayParameter<string desc>
    : OptionalArrayRefParameter<"bool", desc> {
  let parser = "::mlir::ftpipe::parseBoolList($_parser)";
  let printer = "::mlir::ftpipe::printBoolList($_printer, $_self)";
}

/// One of the training setup's enums (FTPipe/Schedule/TrainingSetup.h),
/// printed as its quoted option spelling (`"async"`, `"1f1b"`, `"2bw"`).
class FTPipe_SetupEnumParameter<string cppType, string desc>
    : AttrOrTypeParameter<cppType, desc> {
  let parser = "::mlir::ftpipe::parseSetupEnum<" # cppType # ">($_parser)";
  let printer = "$_printer << '\"' << ::ftpipe::schedule::nameOf($_self) << '\"'";
}

/// A non-negative byte count.
class FTPipe_BytesParameter<string desc> : AttrOrTypeParameter<"int64_t", desc>;

class FTPipe_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FTPipe_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let genVerifyDecl = 1;
  let assemblyFormat = "`<` struct(params) `>`";
}

def FTPipe_CostAttr : FTPipe_Attr<"Cost", "cost"> {
  let summary = "Per-op cost: time and memory of one micro-batch";
  let description = [{
    What one execution of an op costs for one micro-batch: forward and backward
    time in milliseconds, bytes of trainable parameters it reads, bytes of
    activations its backward needs saved, and bytes of its results; and, of
    the backward time, the part that makes parameter gradients (what a split
    backward's weight part runs; left out when 0).

    ```mlir
    #ftpipe.cost<fwd_ms = 0.25, bwd_ms = 0.5, param_bytes = 4194304,
                 act_bytes = 65536, out_bytes = 65536, bwd_weight_ms = 0.25>
    ```
  }];
  let parameters = (ins
    FTPipe_F64Parameter<"forward time in ms">:$fwd_ms,
    FTPipe_F64Parameter<"backward time in ms">:$bwd_ms,
    FTPipe_BytesParameter<"bytes of parameters read">:$param_bytes,
    FTPipe_BytesParameter<"bytes of activations saved for backward">:$act_bytes,
    FTPipe_BytesParameter<"bytes of all results">:$out_bytes,
    FTPipe_DefaultF64Parameter<"of bwd_ms, the parameter gradients' part",
                               "0.0">:$bwd_weight_ms);
}

def FTPipe_DeviceSpecAttr : FTPipe_Attr<"DeviceSpec", "device"> {
  let summary = "One accelerator: memory and sustained speed";
  let description = [{
    One device of a cluster: its name, memory budget in bytes, sustained
    compute rate in TFLOP/s, memory bandwidth in GB/s, the per-kernel launch
    overhead in microseconds and the node it sits in.

    ```mlir
    #ftpipe.device<name = "rtx2080ti", memory_bytes = 11811160064,
                   tflops = 13.4, mem_gbps = 616.0, launch_us = 5.0, node = 0>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"device model name">:$name,
    FTPipe_BytesParameter<"memory budget in bytes">:$memory_bytes,
    FTPipe_F64Parameter<"sustained TFLOP/s">:$tflops,
    FTPipe_F64Parameter<"memory bandwidth in GB/s">:$mem_gbps,
    FTPipe_F64Parameter<"per-kernel launch overhead in us">:$launch_us,
    AttrOrTypeParameter<"int64_t", "node index">:$node);
}

def FTPipe_LinkAttr : FTPipe_Attr<"Link", "link"> {
  let summary = "A link between two devices";
  let description = [{
    A point-to-point link between devices `src` and `dst` (both directions),
    with its bandwidth in GB/s and latency in microseconds.

    ```mlir
    #ftpipe.link<src = 0, dst = 1, gbps = 12.0, latency_us = 10.0>
    ```
  }];
  let parameters = (ins
    AttrOrTypeParameter<"int64_t", "first device">:$src,
    AttrOrTypeParameter<"int64_t", "second device">:$dst,
    FTPipe_F64Parameter<"bandwidth in GB/s">:$gbps,
    FTPipe_F64Parameter<"latency in us">:$latency_us);
}

def FTPipe_HardwareAttr : FTPipe_Attr<"Hardware", "hardware"> {
  let summary = "A cluster: devices and the links between them";
  let description = [{
    The hardware a plan is made for. Devices are numbered by their position in
    `devices`; `links` name devices by that number. `node_cores[n]`, when
    given, says how many devices of node `n` can compute at once (processes
    sharing a CPU's cores; 0 or left out: all of them, as GPUs).

    ```mlir
    #ftpipe.hardware<name = "two-gpus",
      devices = [#ftpipe.device<name = "gpu", memory_bytes = 1000, tflops = 1.0,
                                mem_gbps = 100.0, launch_us = 5.0, node = 0>,
                 #ftpipe.device<name = "gpu", memory_bytes = 1000, tflops = 1.0,
                                mem_gbps = 100.0, launch_us = 5.0, node = 0>],
      links = [#ftpipe.link<src = 0, dst = 1, gbps = 12.0, latency_us = 10.0>]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"cluster name">:$name,
    ArrayRefParameter<"::mlir::ftpipe::DeviceSpecAttr", "devices">:$devices,
    OptionalArrayRefParameter<"::mlir::ftpipe::LinkAttr", "links">:$links,
    OptionalArrayRefParameter<"int64_t",
        "per node: devices that compute at once (empty: all)">:$node_cores);
  let assemblyFormat = [{
    `<` `name` `=` $name `,` `devices` `=` `[` $devices `]`
    (`,` `links` `=` `[` $links^ `]`)?
    (`,` `node_cores` `=` `[` $node_cores^ `]`)? `>`
  }];
}

def FTPipe_PlanAttr : FTPipe_Attr<"Plan", "plan"> {
  let summary = "A partition plan: stage placement, objective and memory";
  let description = [{
    The outcome of partitioning: which method produced it, the device of each
    stage (`stage_device[s]` is the device of stage `s`), the objective (the
    async steady-state time per micro-batch in ms), the memory each device
    needs in bytes (`memory_bytes[d]` for device `d`) and, when the plan was
    computed, how long that took in seconds (`seconds`, printed only when
    non-zero).

    `recompute[s]` says whether stage `s` keeps only its inputs in the
    forward and recomputes its forward just before its backward (`true`) or
    keeps every activation for its backward (`false`). Left out (or empty),
    every stage recomputes, FTPipe's setup; otherwise it has one entry per
    stage. `PlanAttr::recomputes(stage)` reads it either way.

    `replicas` gives each device of the plan its number of data-parallel
    replicas (processes running it, chosen by `replicas=auto`;
    docs/Replicas.md): `[2, 2]` is two identical pipelines (2BW), `[1, 2, 1]`
    replicates the middle device alone (PipeDream). Left out, every device
    runs once; otherwise it has one entry per device (as `memory_bytes`).
    The plan's figures are those of one replica of each device.

    ```mlir
    #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1, 1, 0],
                 recompute = [true, true, false, false],
                 objective_ms = 12.5, memory_bytes = [100, 200], seconds = 0.02>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"method that produced the plan">:$method,
    ArrayRefParameter<"int64_t", "device of each stage">:$stage_device,
    FTPipe_F64Parameter<"async time per micro-batch in ms">:$objective_ms,
    ArrayRefParameter<"int64_t", "bytes needed on each device">:$memory_bytes,
    FTPipe_DefaultF64Parameter<"seconds spent partitioning", "0.0">:$seconds,
    FTPipe_BoolArrayParameter<"per stage: recompute the forward (empty: all)">:$recompute,
    OptionalArrayRefParameter<"int64_t", "per device: its replicas (empty: one each)">:$replicas);
  let assemblyFormat = [{
    `<` `method` `=` $method `,` `stage_device` `=` `[` $stage_device `]` `,`
    (`recompute` `=` `[` $recompute^ `]` `,`)?
    (`replicas` `=` `[` $replicas^ `]` `,`)?
    `objective_ms` `=` $objective_ms `,`
    `memory_bytes` `=` `[` $memory_bytes `]`
    (`,` `seconds` `=` $seconds^)? `>`
  }];
  let extraClassDeclaration = [{
    /// Whether stage `stage` recomputes its forward before its backward:
    /// `recompute[stage]`, or true when the plan has no recompute list.
    bool recomputes(int64_t stage) const {
      return getRecompute().empty() || getRecompute()[stage];
    }
  }];
}

def FTPipe_TrainingAttr : FTPipe_Attr<"Training", "training"> {
  let summary = "The training setup a plan is made for and a run uses";
  let description = [{
    Recorded once on the module (`ftpipe.training`), by the user or by the
    first pass that plans or reports; every later pass that plans or reports
    reads it, and an option of such a pass that contradicts it is an error
    naming both values. `ftpipe-compile` writes it into `manifest.json`,
    where `ftpipe-run` takes its defaults from. The values are spelled as the
    passes' options spell them (FTPipe/Schedule/TrainingSetup.h).

    ```mlir
    module attributes {ftpipe.training = #ftpipe.training<schedule = "async",
        microbatches = 8, optimizer = "adam", weight_versions = "none",
        recompute = "true">} { ... }
    ```
  }];
  let parameters = (ins
    FTPipe_SetupEnumParameter<"::ftpipe::schedule::Kind",
      "pipeline schedule">:$schedule,
    "unsigned":$microbatches,
    FTPipe_SetupEnumParameter<"::ftpipe::schedule::Optimizer",
      "optimizer">:$optimizer,
    FTPipe_SetupEnumParameter<"::ftpipe::schedule::WeightVersions",
      "weight versions of the async schedule">:$weight_versions,
    FTPipe_SetupEnumParameter<"::ftpipe::schedule::RecomputeMode",
      "stages that recompute the forward">:$recompute);
  let builders = [
    AttrBuilder<(ins "const ::ftpipe::schedule::TrainingSetup &":$setup), [{
      return $_get($_ctxt, setup.schedule, setup.microBatches, setup.optimizer,
                   setup.weightVersions, setup.recompute);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The name of the module attribute that holds it.
    static constexpr ::llvm::StringLiteral kName = "ftpipe.training";
    /// The setup as the MLIR-free libraries take it.
    ::ftpipe::schedule::TrainingSetup getSetup() const {
      return {getSchedule(), getMicrobatches(), getOptimizer(),
              getWeightVersions(), getRecompute()};
    }
  }];
}

#endif // FTPIPE_DIALECT_FTPIPE_FTPIPEATTRS_TD
