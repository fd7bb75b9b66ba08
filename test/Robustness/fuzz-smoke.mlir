// RUN: rm -rf %t.seeds %t.crash && mkdir -p %t.seeds %t.crash
// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe=devices=2 -o %t.seeds/bert-tiny-planned.mlir
// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe=devices=2 -o %t.seeds/gpt2-tiny-loss-planned.mlir
// RUN: ftpipe-fuzz --runs=200 --seed=1 --crash-dir=%t.crash %t.seeds %ftpipe_src_root/test %ftpipe_src_root/models > /dev/null 2> %t.log
// RUN: FileCheck %s < %t.log

// A short run of the project's fuzz driver (docs/Robustness.md): every
// test input, model config and two planned tiny models as seeds (the
// unplanned BERT found the refinement crash of refine-after-mixed-pipe.mlir;
// the GPT-2 with a loss takes the stage-program passes and the CPU lowering
// all the way), then 200 mutated inputs through the IR parser, every pass,
// and the cluster, profile, graph and model-config readers. Any crash, abort, timeout, IR that does not
// parse back or graph that does not load back fails this test and leaves
// the input in the crash directory.

// CHECK: ftpipe-fuzz: {{[0-9]+}} seeds and 200 mutated inputs in {{.*}} s, no finding
