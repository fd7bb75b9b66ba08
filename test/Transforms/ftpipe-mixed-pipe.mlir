// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe="devices=4 verbose=true" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=VERBOSE < %t.err
// RUN: ftpipe-model-gen gpt2-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe=devices=2 --ftpipe-export-graph=file=- -o /dev/null | FileCheck %s --check-prefix=EXPORT

// Tests the whole Mixed-Pipe on tiny models: one candidate per L in
// {P, 2P, 3P, 4P}, the best written as the plan, and every op in a stage.

// VERBOSE: mixed-pipe L=4
// VERBOSE: mixed-pipe L=8
// VERBOSE: mixed-pipe L=12
// VERBOSE: mixed-pipe L=16
// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "rtx2080ti-pcie-x8", devices = [<name = "RTX2080Ti:0"
// CHECK-SAME: <name = "RTX2080Ti:3"
// CHECK-NOT: RTX2080Ti:4
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-3](, [0-3])*}}]
// CHECK-LABEL: func.func @T5ForConditionalGeneration
// CHECK-NOT: ftpipe.cost = #ftpipe.cost<{{[^>]*}}>}
// CHECK: return

// Every exported node has a stage and a device of the two.
// EXPORT: "nodes": [
// EXPORT-NOT: "device": -1
// EXPORT-NOT: "stage": -1
// EXPORT: "params": [
