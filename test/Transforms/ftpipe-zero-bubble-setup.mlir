// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet -o %t.mlir
// RUN: ftpipe-opt %t.mlir --ftpipe-annotate-costs --ftpipe-mixed-pipe="devices=2 schedule=zb-h1 microbatches=4" -o %t.zb.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.zb.mlir
// RUN: ftpipe-opt %t.zb.mlir --ftpipe-report -o /dev/null | FileCheck %s
// RUN: ftpipe-opt %t.mlir --ftpipe-annotate-costs --ftpipe-seq-pipe="devices=2 schedule=zb-auto" --ftpipe-report -o /dev/null | FileCheck %s --check-prefix=AUTO

// Tests that the partitioning passes take the zero-bubble schedules in
// their training setup, record them, and that the report then scores the
// plan under them, with the ops' weight parts priced (`bwd_weight_ms`).
// IR-DAG: bwd_weight_ms =
// IR-DAG: ftpipe.training = #ftpipe.training<schedule = "zb-h1", microbatches = 4
// CHECK: setup: zero-bubble ZB-H1 (split backward) schedule, {{.*}} M = 4
// CHECK: schedule ms_per_minibatch
// CHECK: zb-h1 {{[0-9.]+}}
// AUTO: setup: zero-bubble list schedule from stage costs (split backward) schedule
// AUTO: zb-auto {{[0-9.]+}}
