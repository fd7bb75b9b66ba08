// RUN: rm -rf %t.crash && mkdir -p %t.crash
// RUN: ftpipe-fuzz --runs=300 --seed=1 --crash-dir=%t.crash %S/Inputs/fuzz-corpus > /dev/null 2> %t.log
// RUN: FileCheck %s < %t.log

// A short run of the fuzz driver over two more of ftpipe-run's readers
// (docs/Robustness.md), from the corpus in Inputs/fuzz-corpus: schedule
// files in torch.distributed.pipelining's CSV (--schedule-file; seeds: the
// tiny MLP's 1F1B and ZB-H1 lists on devices 0,1,0,1, as ftpipe-run
// --print-schedule --format csv writes them), parsed, printed and parsed
// back, then dry-run under 1F1B and ZB-H1; and a checkpoint's
// model.safetensors.index.json beside three shards, whose accepted weights
// must be exactly the tensors it names. A crash, an abort, a timeout, a
// schedule that does not parse back the same, or weights other than the
// index names fail this test and leave the input in the crash directory.

// CHECK: ftpipe-fuzz: 3 seeds and 300 mutated inputs in {{.*}} s, no finding
