// RUN: %python -c "import json; c = json.load(open('%ftpipe_src_root/models/bert-tiny.json')); c['num_hidden_layers'] = 1000000; print(json.dumps(c))" > %t.layers.json
// RUN: not ftpipe-model-gen %t.layers.json 2>&1 | FileCheck %s --check-prefix=LAYERS
// RUN: %python -c "print('{\"model_type\": \"bert\", \"x\": ' + '[' * 100000 + ']' * 100000 + '}')" > %t.deep.json
// RUN: not ftpipe-model-gen %t.deep.json 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not ftpipe-model-gen /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ftpipe-model-gen bert-tiny -o /dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: ftpipe-model-gen bert-tiny --quiet | not ftpipe-opt --ftpipe-annotate-costs=hardware=no-such-cluster 2>&1 | FileCheck %s --check-prefix=LOCATED
// RUN: ftpipe-model-gen bert-tiny --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe="devices=2 microbatches=4000000" > %t.planned.mlir
// RUN: not ftpipe-opt %t.planned.mlir --ftpipe-report 2>&1 | FileCheck %s --check-prefix=TASKS
// RUN: ftpipe-devices --allow-none 2>&1 | tail -c 1 | od -An -c | FileCheck %s --check-prefix=NEWLINE

// The tools' limits and messages: a config asking for a million layers or
// nested a hundred thousand deep, or a device as config, ends at once with
// one line; a failed write is an error, not a success line; errors on
// generated IR name the model; the simulator says which option made too
// many tasks; ftpipe-devices ends its message with a newline.

// LAYERS: error: {{.*}}layers.json: field 'num_hidden_layers' is 1000000; at most 1024 layers are supported
// DEEP: error: {{.*}}deep.json: invalid JSON: line 1: JSON nested deeper than 64 levels
// ZERO: error: model config '/dev/zero' is larger than 64 MiB
// FULL: error: cannot write '/dev/full': No space left on device
// FULL-NOT: parameters
// LOCATED: bert-tiny:0:0: error: cannot load hardware 'no-such-cluster'
// TASKS: error: simulator: 2 stages x 4000000 micro-batches make more than 4194304 tasks; use fewer micro-batches (option 'microbatches')
// NEWLINE: \n
