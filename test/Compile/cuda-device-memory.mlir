// The CUDA path allocates no managed memory: the runtime library that CUDA
// artifacts link imports none of CUDA's managed-allocation functions and
// does import the stream-ordered pool's; the artifacts of the tiny BERT
// (two devices) call the runtime's device copies, never the host's memcpy,
// malloc or the C runner utilities' memrefCopy, which would touch device
// memory on the host. (ftpipe-compile-cuda.mlir inspects more of these
// artifacts; nothing here runs a kernel.)
// REQUIRES: cuda

// RUN: nm -D --undefined-only %ftpipe_lib_dir/libFTPipeCUDARuntime.so > %t.runtime.txt
// RUN: FileCheck %s --check-prefix=POOL < %t.runtime.txt
// POOL-DAG: U cudaMallocFromPoolAsync
// POOL-DAG: U cudaFreeAsync
// RUN: not grep -i -E "MallocManaged|MemAllocManaged|cudaMallocHost|cudaHostAlloc" %t.runtime.txt

// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.mlir
// RUN: rm -rf %t && ftpipe-compile %t.mlir --target=cuda --devices=2 -O0 -o %t > /dev/null
// RUN: nm -D --undefined-only %t/device0.so %t/device1.so > %t.artifacts.txt
// RUN: FileCheck %s --check-prefix=ARTIFACT < %t.artifacts.txt
// ARTIFACT-DAG: U ftpipe_cuda_copy_f32
// ARTIFACT-DAG: U _mlir_memref_to_llvm_alloc
// RUN: not grep -E " U (memcpy|memmove|malloc|memrefCopy|.*Managed)" %t.artifacts.txt
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// MANIFEST: "memory": "cuda-device"
