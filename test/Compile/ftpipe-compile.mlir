// Tests ftpipe-compile --target=cpu end to end on tiny BERT for two devices:
// progress lines, the manifest, and artifacts whose every undefined symbol
// is defined by the libraries they link (the stage ABI, the BLAS entry, MLIR's
// C runner utilities, libm, libc). Execution: test/Reference.

// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.mlir
// RUN: rm -rf %t.dir && ftpipe-compile %t.mlir --devices=2 -O0 --jobs=1 -o %t.dir 2>&1 | FileCheck %s --check-prefix=PROGRESS
// PROGRESS: ftpipe-compile: parse
// PROGRESS: ftpipe-compile: partition (2 devices): {{[0-9.]+}} s
// PROGRESS: ftpipe-compile: stage programs (outline, differentiate, split)
// PROGRESS: ftpipe-compile: manifest
// PROGRESS: ftpipe-compile: device 0: lower to LLVM (cpu)
// PROGRESS: ftpipe-compile: device 0: emit object (-O0, host CPU)
// PROGRESS: ftpipe-compile: device 0: link device0.so
// PROGRESS: ftpipe-compile: device 1: link device1.so

// RUN: FileCheck %s --check-prefix=MANIFEST < %t.dir/manifest.json
// MANIFEST: "devices": [
// MANIFEST: "artifact": "device0.so"
// MANIFEST: "artifact": "device1.so"
// MANIFEST: "entry_points": [
// MANIFEST: "kind": "microbatch"
// MANIFEST: "kind": "param"
// MANIFEST-NEXT: "name": "bert.embeddings.word_embeddings.weight"
// MANIFEST: "symbol": "_mlir_ciface_stage0_backward"
// MANIFEST: "direction": "recv"
// MANIFEST: "kind": "loss"
// MANIFEST: "direction": "send"
// MANIFEST: "inputs": {
// MANIFEST: "input_ids": {
// MANIFEST: "loss": {
// MANIFEST: "memory": "host"
// MANIFEST: "parameters": {
// MANIFEST: "bert.embeddings.word_embeddings.weight": {
// MANIFEST-NEXT: "copies": [],
// MANIFEST-NEXT: "dtype": "f32",
// MANIFEST-NEXT: "owner":
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 512,
// MANIFEST-NEXT: 64
// MANIFEST: "stage_order": [
// MANIFEST: "tensors": [
// MANIFEST: "from":
// MANIFEST: "tag":
// MANIFEST: "to":

// The Python tools read it through tools/ftpipe-compile/ftpipe_manifest.py,
// which refuses another version and a mistyped or missing field by its path.
// RUN: %python %S/Inputs/check-manifest-reader.py %ftpipe_src_root/tools/ftpipe-compile %t.dir | FileCheck %s --check-prefix=PYREADER
// PYREADER: read: 2 devices, {{[0-9]+}} stages, {{[0-9]+}} entry points
// PYREADER-NEXT: version: DIR/manifest.json: not an ftpipe-compile manifest of version 1 (format 'ftpipe-manifest', version 2)
// PYREADER-NEXT: shape: DIR/manifest.json: manifest.entry_points[1].arguments[1].shape: expected a list
// PYREADER-NEXT: index: DIR/manifest.json: manifest.entry_points[0].arguments[0].index: expected 0
// PYREADER-NEXT: owner: DIR/manifest.json: manifest.parameters.{{.*}}.owner: missing
// PYREADER-NEXT: split: DIR/manifest.json: manifest.stages[0].backward_input: expected a string

// Every symbol the artifacts need comes from a library they link.
// RUN: nm -D --undefined-only %t.dir/device0.so %t.dir/device1.so | FileCheck %s --check-prefix=UNDEF
// UNDEF-DAG: U ftpipe_blas_gemm_f32
// UNDEF-DAG: U ftpipe_rt_send_f32
// UNDEF-DAG: U ftpipe_rt_recv_f32
// Buffers come from FTPipeCPUKernels' cache (HostAllocator.h), not malloc.
// UNDEF-DAG: U _mlir_memref_to_llvm_alloc
// UNDEF-DAG: U _mlir_memref_to_llvm_free
// RUN: nm -D --undefined-only %t.dir/device0.so | FileCheck %s --check-prefix=NOMALLOC
// NOMALLOC-NOT: U malloc
// NOMALLOC-NOT: U free
// Strided copies are loops (ftpipe-strided-copies-to-loops), not memrefCopy.
// NOMALLOC-NOT: U memrefCopy
// RUN: ldd %t.dir/device0.so | FileCheck %s --check-prefix=LDD
// LDD-NOT: not found
// LDD-DAG: libFTPipeStageABI.so =>
// LDD-DAG: libFTPipeCPUKernels.so =>
// RUN: %python -c "import ctypes, os, sys; [ctypes.CDLL(p, mode=os.RTLD_NOW) for p in sys.argv[1:]]; print('loaded')" %t.dir/device0.so %t.dir/device1.so | FileCheck %s --check-prefix=LOAD
// LOAD: loaded

// In parallel (two devices at once), every device still gets its lines.
// RUN: rm -rf %t.par && ftpipe-compile %t.mlir --devices=2 -O0 --jobs=2 -o %t.par 2>&1 | FileCheck %s --check-prefix=PARALLEL
// PARALLEL-DAG: ftpipe-compile: device 0: lower to LLVM (cpu)
// PARALLEL-DAG: ftpipe-compile: device 1: lower to LLVM (cpu)
// PARALLEL-DAG: ftpipe-compile: device 0: link device0.so
// PARALLEL-DAG: ftpipe-compile: device 1: link device1.so
// RUN: nm -D --defined-only %t.par/device1.so | FileCheck %s --check-prefix=PARSYM
// PARSYM: T _mlir_ciface_stage1_backward

// A value whose element type the runtime has no tensor of is refused when
// the manifest is written, at the entry point (a module that does not
// mention the ftpipe dialect still gets its #ftpipe.training).
// RUN: not ftpipe-compile %S/Inputs/ui8-model.mlir --forward-only -O0 --jobs=1 -o %t.ui8 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: ui8-model.mlir:2:1: error: argument 0 is 'tensor<2xui8>', which the runtime has no tensor of
// DTYPE: ftpipe-compile: error in step 'manifest'

// Errors name the step. (test/Compile/ftpipe-compile-cuda.mlir: the CUDA
// target.)
// RUN: not ftpipe-compile %t.mlir --forward-only --devices=2 -o %t.fwd 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: ftpipe-compile: error in step 'parse {{.*}}': --forward-only compiles for one device
