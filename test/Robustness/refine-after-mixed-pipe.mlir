// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-coarsen --ftpipe-mixed-pipe --ftpipe-refine | FileCheck %s

// A finding of ftpipe-fuzz (docs/Robustness.md), fixed: Mixed-Pipe refines
// down to single ops, so the `ftpipe.block`s that --ftpipe-coarsen wrote
// straddle its stages, and --ftpipe-refine used to move such a block as one
// unit and, when the move was refused, move it back into a single stage. That
// made stage cycles and ended in an out-of-bounds read (SIGSEGV) in
// refineLevel (lib/Partition/Refinement.cpp). Units are now a block's ops
// within one stage, and the refined plan is valid (commitPlan verifies it).

// CHECK: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe+refine", stage_device = [{{[0-9, ]+}}], objective_ms =
// CHECK: func.func
// CHECK: ftpipe.stage =
