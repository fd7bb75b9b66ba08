// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs -o %t.mlir
// RUN: ftpipe-opt %t.mlir --ftpipe-auto-partition="devices=4 quiet=true" --ftpipe-report="json=%t.async.json" -o /dev/null
// RUN: ftpipe-opt %t.mlir --ftpipe-auto-partition="devices=4 sync-schedule=zb-auto" --ftpipe-report="json=%t.sync.json" -o /dev/null 2>%t.err
// RUN: FileCheck %s --check-prefix=CANDIDATES < %t.err
// RUN: %python %S/Inputs/compare_steps.py %t.async.json %t.sync.json zb-auto | FileCheck %s
// RUN: ftpipe-opt %t.mlir --ftpipe-mixed-pipe="devices=4 sync-schedule=zb-auto verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not ftpipe-opt %t.mlir --ftpipe-auto-partition="sync-schedule=async" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests `sync-schedule`: every candidate plan is also simulated under the
// synchronous schedule the plan will run under (zb-auto within each
// device's memory), the shortest step is chosen, and the plan chosen so
// has a zb-auto step (the report's) no longer than the plan chosen by the
// async time alone; the chosen plan's stage boundaries are then moved for
// that step (mixed-pipe's verbose line). Async is not a synchronous
// schedule.

// CANDIDATES-DAG: seq-dp {{.*}} zb-auto step {{[0-9.]+}} ms/mini-batch
// CANDIDATES-DAG: seq-greedy {{.*}} zb-auto step {{[0-9.]+}} ms/mini-batch
// CANDIDATES-DAG: mixed-pipe {{.*}} zb-auto step {{[0-9.]+}} ms/mini-batch
// CANDIDATES: <- chosen

// CHECK: zb-auto step not above the old plan's

// MIXED: mixed-pipe L=4 {{.*}} simulated {{[0-9.]+}} ms, {{[0-9.]+}} s, step {{[0-9.]+}} ms
// MIXED: mixed-pipe sync refinement: step [[BEFORE:[0-9.]+]] -> {{[0-9.]+}} ms, {{[0-9]+}} boundaries moved, {{[0-9]+}} re-cuts bounded, {{[0-9]+}} simulated

// BAD: for the --sync-schedule option: Cannot find option named 'async'!
