// RUN: rm -rf %t.seeds %t.crash && mkdir -p %t.seeds %t.crash
// RUN: ftpipe-run --model tiny-mlp --steps 1 --checkpoint-dir %t.seeds/ckpt --checkpoint-every 1 --save %t.seeds/weights.safetensors > /dev/null 2>&1
// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.bert.mlir
// RUN: ftpipe-compile %t.bert.mlir --devices=2 -O0 -o %t.bert 2> /dev/null
// RUN: cp %t.bert/manifest.json %t.seeds/artifact-manifest.json
// RUN: %python %S/../Runtime/Inputs/make-dataset.py %t.bert 4 %t.seeds/data.safetensors
// RUN: %python -c "import struct, sys; open(sys.argv[1], 'wb').write(b''.join(struct.pack('<i', v) for v in [0, 1, 511, -100, 5, 100, 2, 3] * 8))" %t.seeds/tokens.ids
// RUN: ftpipe-fuzz --runs=300 --seed=1 --crash-dir=%t.crash %t.seeds > /dev/null 2> %t.log
// RUN: FileCheck %s < %t.log

// A short run of the fuzz driver over the runtime's readers
// (docs/Robustness.md): safetensors files (weights, a data set, checkpoint
// files), an artifact manifest, a checkpoint manifest and token ids as
// seeds, then 300 mutated inputs. A crash, an abort, a timeout, an accepted
// safetensors file that does not parse back the same, or an id outside its
// table that the data check accepts fails this test and leaves the input
// in the crash directory.

// CHECK: ftpipe-fuzz: 13 seeds and 300 mutated inputs in {{.*}} s, no finding
