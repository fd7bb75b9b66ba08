// RUN: rm -rf %t.crash && mkdir -p %t.crash
// RUN: ftpipe-fuzz --runs=300 --seed=1 --crash-dir=%t.crash %S/Inputs/fuzz-corpus > /dev/null 2> %t.log
// RUN: FileCheck %s < %t.log

// A short run of the fuzz driver over more of the readers of ftpipe-run and
// ftpipe-compile (docs/Robustness.md), from the corpus in Inputs/fuzz-corpus:
// schedule files in torch.distributed.pipelining's CSV (--schedule-file;
// seeds: the tiny MLP's 1F1B and ZB-H1 lists on devices 0,1,0,1, as
// ftpipe-run --print-schedule --format csv writes them), parsed, printed and
// parsed back, then dry-run under 1F1B and ZB-H1; a checkpoint's
// model.safetensors.index.json beside three shards, whose accepted weights
// must be exactly the tensors it names; a names file of ftpipe-compile
// --freeze=@FILE, whose accepted lines must be exactly the parameters
// frozen; a freeze schedule of ftpipe-run --freeze schedule=FILE, which
// must freeze a growing prefix of the tiny MLP's layers; and ftpipe-run's
// settings (--steps, --micro-batches, --lr, --weight-decay, --warmup,
// --timeout, --failure-timeout), which must be within their limits when
// accepted. A crash, an abort, a timeout or one of those findings fails
// this test and leaves the input in the crash directory.

// CHECK: ftpipe-fuzz: inputs by kind (seeds included): F {{[1-9][0-9]*}} O {{[1-9][0-9]*}} T {{[1-9][0-9]*}} X {{[1-9][0-9]*}} Z {{[1-9][0-9]*}}{{$}}
// CHECK: ftpipe-fuzz: 6 seeds and 300 mutated inputs in {{.*}} s, no finding

// With a limit on memory, an input that allocates past it is a finding.
// RUN: printf 'Z0 0\n2 1\n' > %t.schedule
// RUN: not --crash ftpipe-fuzz --replay %t.schedule --memory-limit-mb=1 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: ftpipe-fuzz --replay %t.schedule --memory-limit-mb=4096 2>&1 | FileCheck %s --check-prefix=ENOUGH
// ENOUGH: ftpipe-fuzz: the input ran without a finding
// MEMORY: ftpipe-fuzz: out of memory: one input needed more than 1 MiB

// A names file goes where ftpipe-compile reads it: a name that is not a
// parameter is the compiler's error.
// RUN: printf 'Fbert.embeddings.word_embeddings.weight\nnot.a.parameter\n' > %t.names
// RUN: ftpipe-fuzz --replay %t.names -v 2>&1 | FileCheck %s --check-prefix=NAMES
// NAMES: --freeze: {{.*}}:2: 'not.a.parameter' is not a parameter of the model
// NAMES: ftpipe-fuzz: the input ran without a finding
