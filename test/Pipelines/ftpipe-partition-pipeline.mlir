// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=2 method=seq-dp})' | FileCheck %s --check-prefix=SEQDP
// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=3 method=seq-greedy})' | FileCheck %s --check-prefix=GREEDY
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=4 method=mixed-pipe})' | FileCheck %s --check-prefix=MIXED
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=2})' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=2 quiet=false})' 2>&1 >/dev/null | FileCheck %s --check-prefix=VERBOSE
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-partition-pipeline{devices=4 quiet=false sync-schedule=zb-auto})' 2>&1 >/dev/null | FileCheck %s --check-prefix=SYNC
// RUN: ftpipe-model-gen bert-tiny --quiet -o %t.mlir
// RUN: ftpipe-opt %t.mlir --pass-pipeline='builtin.module(ftpipe-partition-pipeline{hardware=v100-nvlink-x8 devices=2 method=seq-dp optimizer=sgd microbatches=4})' | sed -e 's/seconds = [0-9.e+-]*//' > %t.pipeline
// RUN: ftpipe-opt %t.mlir --ftpipe-annotate-costs=hardware=v100-nvlink-x8 --ftpipe-seq-pipe='devices=2 method=dp optimizer=sgd microbatches=4' | sed -e 's/seconds = [0-9.e+-]*//' > %t.passes
// RUN: diff %t.pipeline %t.passes
// RUN: ftpipe-opt %t.mlir --pass-pipeline='builtin.module(ftpipe-partition-pipeline{hardware=v100-nvlink-x8 devices=4 method=seq-greedy replicas=auto optimizer=sgd microbatches=4})' | sed -e 's/seconds = [0-9.e+-]*//' > %t.replicas.pipeline
// RUN: ftpipe-opt %t.mlir --ftpipe-annotate-costs=hardware=v100-nvlink-x8 --ftpipe-seq-pipe='devices=4 method=greedy replicas=auto optimizer=sgd microbatches=4' | sed -e 's/seconds = [0-9.e+-]*//' > %t.replicas.passes
// RUN: diff %t.replicas.pipeline %t.replicas.passes
// RUN: FileCheck %s --check-prefix=REPLICAS < %t.replicas.pipeline
// RUN: ftpipe-opt %t.mlir --pass-pipeline='builtin.module(ftpipe-partition-pipeline{hardware=v100-nvlink-x8 devices=4 method=seq-greedy replicas=2 optimizer=sgd microbatches=4})' | sed -e 's/seconds = [0-9.e+-]*//' > %t.width.pipeline
// RUN: ftpipe-opt %t.mlir --ftpipe-annotate-costs=hardware=v100-nvlink-x8 --ftpipe-seq-pipe='devices=4 method=greedy replicas=2 optimizer=sgd microbatches=4' | sed -e 's/seconds = [0-9.e+-]*//' > %t.width.passes
// RUN: diff %t.width.pipeline %t.width.passes
// RUN: FileCheck %s --check-prefix=WIDTH < %t.width.pipeline
// RUN: not ftpipe-opt %t.mlir --pass-pipeline='builtin.module(ftpipe-partition-pipeline{method=bogus})' 2>&1 | FileCheck %s --check-prefix=INVALID

// Tests the named partitioning pipeline (Pipelines.h): cost annotation for
// the hardware, then the partitioner that `method` names, on the tiny models.
// Each method writes the hardware and its plan on the module and a stage on
// every op; contiguous methods never go back to an earlier stage. The
// pipeline is exactly the passes run by hand (the last RUN lines), and a bad
// option is an error. `sync-schedule` and `replicas` reach the partitioner
// (replicas=auto and replicas=2 with Seq-Pipe greedy: the same plan and
// replicas as ftpipe-seq-pipe's; 2 identical pipelines of 2 devices).

// SEQDP: ftpipe.hardware = #ftpipe.hardware<name = "rtx2080ti-pcie-x8", devices = [<name = "RTX2080Ti:0"
// SEQDP-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = {{[0-9.e+-]+}}, memory_bytes = [{{[0-9]+}}, {{[0-9]+}}]
// SEQDP-LABEL: func.func @BertForQuestionAnswering
// SEQDP-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// SEQDP: ftpipe.stage = 0 : i64
// SEQDP-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// SEQDP: ftpipe.stage = 1 : i64
// SEQDP-NOT: ftpipe.stage = 0 : i64
// SEQDP-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// SEQDP: return

// GREEDY: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [{{[0-2](, [0-2])*}}], objective_ms = {{[0-9.e+-]+}}, memory_bytes = [{{[0-9]+, [0-9]+, [0-9]+}}]
// GREEDY-LABEL: func.func @BertForQuestionAnswering
// GREEDY: ftpipe.stage = 0 : i64
// GREEDY-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// GREEDY: return

// MIXED: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-3](, [0-3])*}}], objective_ms = {{[0-9.e+-]+}}, memory_bytes = [{{[0-9]+, [0-9]+, [0-9]+, [0-9]+}}]
// MIXED-LABEL: func.func @T5ForConditionalGeneration
// MIXED: ftpipe.stage = {{[0-9]+}} : i64
// MIXED-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// MIXED: return

// AUTO-NOT: chosen
// AUTO: ftpipe.plan = #ftpipe.plan<method = "{{seq-dp|seq-greedy|mixed-pipe}}", stage_device = [{{[01](, [01])*}}]
// AUTO-LABEL: func.func @T5ForConditionalGeneration
// AUTO-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// AUTO: return

// VERBOSE: ftpipe-auto-partition: {{[0-9]+}} ops on 2 devices of 'rtx2080ti-pcie-x8'
// VERBOSE: <- chosen

// INVALID: failed to add `ftpipe-partition-pipeline` with options `method=bogus`
// REPLICAS: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [{{[0-9, ]+}}], replicas = [{{[0-9, ]+}}],
// WIDTH: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [{{[0-9, ]+}}], {{.*}}replicas = [2, 2],

// SYNC: mixed-pipe {{.*}} zb-auto step {{[0-9.]+}} ms/mini-batch
