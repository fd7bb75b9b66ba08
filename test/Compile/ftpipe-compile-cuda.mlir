// Tests ftpipe-compile --target=cuda on the tiny BERT, GPT-2 and T5 for two
// devices: the artifacts embed a device binary (a fatbin holding an sm_90
// cubin, made by the CUDA toolkit's ptxas), and every symbol they leave
// undefined is defined by the libraries they link: lib/Runtime's
// FTPipeCUDARuntime (mgpu* wrappers, device allocation and copies, the cuBLAS
// gemm entry; over libcudart and libcublas) and FTPipeStageABI, libc (no
// longer MLIR's C runner utilities: host copies are device copies,
// cuda-device-memory.mlir). Loading them with every symbol bound (RTLD_NOW) needs no
// GPU. Nothing here runs a kernel: there is no GPU on these machines.
// REQUIRES: cuda

// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.bert.mlir
// RUN: rm -rf %t.bert && ftpipe-compile %t.bert.mlir --target=cuda --devices=2 -O0 -o %t.bert 2>&1 | FileCheck %s --check-prefix=PROGRESS
// PROGRESS-DAG: ftpipe-compile: device 0: lower to LLVM (cuda): {{[0-9.]+}} s
// PROGRESS-DAG: ftpipe-compile: device 1: lower to LLVM (cuda): {{[0-9.]+}} s
// PROGRESS-DAG: ftpipe-compile: device 0: link device0.so
// PROGRESS-DAG: ftpipe-compile: device 1: link device1.so
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.bert/manifest.json
// MANIFEST: "artifact": "device0.so"
// MANIFEST: "memory": "cuda-device"
// MANIFEST: "target": "cuda"

// RUN: %python %S/Inputs/device_binary.py %t.bert/device0.so %t.bert/device1.so | FileCheck %s --check-prefix=BINARY
// BINARY: device0.so: fatbin with a cubin, EM_CUDA, sm_90
// BINARY: device1.so: fatbin with a cubin, EM_CUDA, sm_90
// RUN: nm %t.bert/device0.so | FileCheck %s --check-prefix=SYMBOL
// SYMBOL: r ftpipe_kernels_bin_cst

// RUN: nm -D --undefined-only %t.bert/device0.so %t.bert/device1.so | FileCheck %s --check-prefix=UNDEF
// UNDEF-DAG: U ftpipe_cublas_gemm_f32
// UNDEF-DAG: U ftpipe_rt_send_f32
// UNDEF-DAG: U ftpipe_rt_recv_f32
// UNDEF-DAG: U mgpuModuleLoad
// UNDEF-DAG: U mgpuModuleGetFunction
// UNDEF-DAG: U mgpuLaunchKernel
// UNDEF-DAG: U _mlir_memref_to_llvm_alloc
// UNDEF-DAG: U _mlir_memref_to_llvm_free
// UNDEF-NOT: U malloc
// UNDEF-NOT: U ftpipe_blas_gemm
// RUN: ldd %t.bert/device0.so | FileCheck %s --check-prefix=LDD
// LDD-NOT: not found
// LDD-DAG: libFTPipeCUDARuntime.so =>
// LDD-DAG: libFTPipeStageABI.so =>
// LDD-DAG: libcudart.so{{.*}} =>
// LDD-DAG: libcublas.so{{.*}} =>

// GPT-2 (tied embedding) and T5 (encoder-decoder), sm_80.
// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet -o %t.gpt2.mlir
// RUN: rm -rf %t.gpt2 && ftpipe-compile %t.gpt2.mlir --target=cuda --cuda-chip=sm_80 --devices=2 -O0 -o %t.gpt2
// RUN: ftpipe-model-gen t5-tiny --loss --quiet -o %t.t5.mlir
// RUN: rm -rf %t.t5 && ftpipe-compile %t.t5.mlir --target=cuda --devices=2 -O0 -o %t.t5
// RUN: %python %S/Inputs/device_binary.py %t.gpt2/device0.so %t.gpt2/device1.so %t.t5/device0.so %t.t5/device1.so | FileCheck %s --check-prefix=OTHERS
// OTHERS: device0.so: fatbin with a cubin, EM_CUDA, sm_80
// OTHERS: device1.so: fatbin with a cubin, EM_CUDA, sm_80
// OTHERS: device0.so: fatbin with a cubin, EM_CUDA, sm_90
// OTHERS: device1.so: fatbin with a cubin, EM_CUDA, sm_90

// Every undefined symbol of every artifact is bound at load time.
// RUN: %python -c "import ctypes, os, sys; [ctypes.CDLL(p, mode=os.RTLD_NOW) for p in sys.argv[1:]]; print('loaded', len(sys.argv) - 1)" %t.bert/device0.so %t.bert/device1.so %t.gpt2/device0.so %t.gpt2/device1.so %t.t5/device0.so %t.t5/device1.so | FileCheck %s --check-prefix=LOAD
// LOAD: loaded 6
