// RUN: ftpipe-model-gen t5-tiny --quiet -o %t.model.mlir
// RUN: ftpipe-opt %t.model.mlir --ftpipe-annotate-costs -o %t.costs.mlir
// RUN: FileCheck %s --check-prefix=SCOPES < %t.costs.mlir
// RUN: ftpipe-opt %t.model.mlir --ftpipe-annotate-costs --ftpipe-auto-partition="devices=4 sync-schedule=zb-auto quiet=true" | sed -n 's/.*\(#ftpipe.plan<[^>]*\), seconds = .*/\1/p' > %t.joined
// RUN: ftpipe-opt %t.costs.mlir --ftpipe-auto-partition="devices=4 sync-schedule=zb-auto quiet=true" | sed -n 's/.*\(#ftpipe.plan<[^>]*\), seconds = .*/\1/p' > %t.split
// RUN: FileCheck %s < %t.joined
// RUN: diff %t.joined %t.split
// RUN: ftpipe-opt %t.model.mlir --ftpipe-annotate-costs --ftpipe-auto-partition="devices=4 quiet=true" | sed -n 's/.*\(#ftpipe.plan<[^>]*\), seconds = .*/\1/p' > %t.async.joined
// RUN: ftpipe-opt %t.costs.mlir --ftpipe-auto-partition="devices=4 quiet=true" | sed -n 's/.*\(#ftpipe.plan<[^>]*\), seconds = .*/\1/p' > %t.async.split
// RUN: FileCheck %s < %t.async.joined
// RUN: diff %t.async.joined %t.async.split
// RUN: ftpipe-opt %t.model.mlir --mlir-print-debuginfo=false | FileCheck %s --check-prefix=NOLOC

// Printing and parsing the IR does not change the plan: costs annotated in
// one ftpipe-opt run and the plan made in the next (the costs printed and
// parsed) give the plan of both passes in one run (with and without
// sync-schedule), less its planning time. The ops' scope paths, by which
// Mixed-Pipe coarsens, are their locations, which ftpipe-opt prints as they
// name things; `--mlir-print-debuginfo=false` leaves them out.

// CHECK: #ftpipe.plan<method = "{{[a-z-]+}}", stage_device = [

// SCOPES: loc("T5ForConditionalGeneration/T5Stack[encoder]/

// NOLOC-NOT: loc(
// NOLOC: func.func @
// NOLOC-NOT: loc(
