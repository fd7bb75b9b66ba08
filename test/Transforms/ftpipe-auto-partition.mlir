// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-auto-partition=devices=4 --ftpipe-report 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=CANDIDATES < %t.err
// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-auto-partition="devices=2 quiet=true" | FileCheck %s --check-prefix=BERT
// RUN: ftpipe-model-gen gpt2-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-auto-partition="devices=3 dp-max-ops=10" 2>&1 >/dev/null | FileCheck %s --check-prefix=NODP

// Tests the automatic choice on the tiny models: every candidate is listed
// with its figures, one is chosen, its plan is written and verified, and the
// report reads it back.

// CANDIDATES: ftpipe-auto-partition: {{[0-9]+}} ops on 4 devices of 'rtx2080ti-pcie-x8'
// CANDIDATES-DAG: seq-dp {{.*}} stages async {{.*}} ms simulated {{.*}} ms/micro-batch
// CANDIDATES-DAG: seq-greedy {{.*}} stages async
// CANDIDATES-DAG: mixed-pipe {{.*}} stages async
// CANDIDATES: <- chosen

// CHECK: FTPipe partition report: '{{(seq-dp|seq-greedy|mixed-pipe)}}' plan of @T5ForConditionalGeneration on rtx2080ti-pcie-x8 (4 devices)
// CHECK: memory : fits on every device
// CHECK: module attributes {ftpipe.hardware = #ftpipe.hardware<name = "rtx2080ti-pcie-x8", devices = [<name = "RTX2080Ti:0"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method =
// CHECK-NOT: tosa.{{[a-z_]+}} {{.*}}ftpipe.cost{{[^}]*}}}
// CHECK-LABEL: func.func @T5ForConditionalGeneration

// BERT: ftpipe.plan = #ftpipe.plan<method = "{{[a-z-]+}}", stage_device = [{{[01, ]+}}]
// BERT-LABEL: func.func @BertForQuestionAnswering

// NODP: seq-dp no plan: skipped: {{[0-9]+}} ops > dp-max-ops=10
// NODP: <- chosen
