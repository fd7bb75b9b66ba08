// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{devices=2})' | FileCheck %s --check-prefix=SEARCH
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{devices=2 stages=6})' | FileCheck %s --check-prefix=FIXED
// RUN: ftpipe-model-gen t5-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{devices=2 stages=6 refine=false})' | FileCheck %s --check-prefix=NOREFINE
// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{hardware=a100-40g-nvlink-x8 devices=3 verbose=true})' 2>&1 | FileCheck %s --check-prefix=VERBOSE

// Tests the named Mixed-Pipe pipeline (Pipelines.h): with no `stages` it
// searches L (ftpipe-mixed-pipe) and leaves no block ids; with a fixed L it
// runs coarsen, assign and refine as separate passes, so every op keeps its
// block id (< L) besides its stage, and the method says which phases ran.

// SEARCH: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[01](, [01])*}}], objective_ms = {{[0-9.e+-]+}}, memory_bytes = [{{[0-9]+, [0-9]+}}]
// SEARCH-LABEL: func.func @T5ForConditionalGeneration
// SEARCH-NOT: ftpipe.block
// SEARCH-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// SEARCH: return

// FIXED: ftpipe.plan = #ftpipe.plan<method = "mixed-assign+refine", stage_device = [{{[01](, [01])*}}]
// FIXED-LABEL: func.func @T5ForConditionalGeneration
// FIXED-NOT: ftpipe.block = {{([6-9]|[1-9][0-9]+)}} : i64
// FIXED: ftpipe.block = {{[0-5]}} : i64, ftpipe.cost = #ftpipe.cost<{{[^>]*}}>, ftpipe.stage = {{[0-9]+}} : i64
// FIXED-NOT: ftpipe.block = {{([6-9]|[1-9][0-9]+)}} : i64
// FIXED-NOT: #ftpipe.cost<{{[^>]*}}>{{(}|, [^f])}}
// FIXED: return

// NOREFINE: ftpipe.plan = #ftpipe.plan<method = "mixed-assign", stage_device = [{{[01](, [01])*}}]
// NOREFINE-LABEL: func.func @T5ForConditionalGeneration
// NOREFINE: ftpipe.block = {{[0-5]}} : i64, ftpipe.cost = #ftpipe.cost<{{[^>]*}}>, ftpipe.stage = {{[0-9]+}} : i64

// VERBOSE: mixed-pipe L={{[0-9]+}} {{.*}} stages, assigned
// VERBOSE: ftpipe.hardware = #ftpipe.hardware<name = "a100-40g-nvlink-x8"
// VERBOSE-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-2](, [0-2])*}}], objective_ms = {{[0-9.e+-]+}}, memory_bytes = [{{[0-9]+, [0-9]+, [0-9]+}}]
// VERBOSE-LABEL: func.func @BertForQuestionAnswering
