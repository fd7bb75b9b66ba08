// Tests ftpipe-compile --freeze: the manifest marks the frozen parameters
// (tiny BERT's embeddings: 5 tensors), no entry point returns their
// gradient, and the plan's memory counts them once (`frozen_param_bytes`:
// the word, position and token type tables, 512x64 + 128x64 + 2x64 floats,
// and the LayerNorm's two 64-vectors: 4 x (32768 + 8192 + 128) + 512 =
// 164864 bytes, on the one device that reads them). A regex
// that matches no parameter and a file line that names none are errors
// naming them.

// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.mlir
// RUN: rm -rf %t.dir && ftpipe-compile %t.mlir --devices=2 -O0 --freeze '^bert\.embeddings\.' -o %t.dir 2>&1 | FileCheck %s --check-prefix=PROGRESS
// PROGRESS: ftpipe-compile: freeze ^bert\.embeddings\.:
// RUN: %python -c "import json, sys; m = json.load(open(sys.argv[1])); p = m['parameters']; g = [r['name'] for e in m['entry_points'] for r in e['results'] if r['kind'] == 'grad']; print(sorted(n for n, v in p.items() if v.get('frozen'))); print('frozen grads', [n for n in g if p[n].get('frozen')]); print('memory', sum(d['inputs'].get('frozen_param_bytes', 0) for d in m['device_memory']))" %t.dir/manifest.json | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: ['bert.embeddings.LayerNorm.bias', 'bert.embeddings.LayerNorm.weight', 'bert.embeddings.position_embeddings.weight', 'bert.embeddings.token_type_embeddings.weight', 'bert.embeddings.word_embeddings.weight']
// MANIFEST-NEXT: frozen grads []
// MANIFEST-NEXT: memory 164864

// RUN: not ftpipe-compile %t.mlir --freeze '^encoder\.' -o %t.none 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: {{.*}}freeze regex '^encoder\.' matches no parameter of '@BertForQuestionAnswering'

// RUN: printf '# frozen\nbert.embeddings.word_embeddings.weight\n\nbert.embeddings.word_embedding.weight\n' > %t.names
// RUN: not ftpipe-compile %t.mlir --freeze=@%t.names -o %t.bad 2>&1 | FileCheck %s --check-prefix=LINE
// LINE: error: {{.*}}--freeze: {{.*}}.names:4: 'bert.embeddings.word_embedding.weight' is not a parameter of the model

// RUN: printf '# nothing\n' > %t.empty
// RUN: not ftpipe-compile %t.mlir --freeze=@%t.empty -o %t.bad 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: {{.*}}--freeze: {{.*}}.empty names no parameter
