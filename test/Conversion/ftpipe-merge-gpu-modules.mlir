// RUN: ftpipe-opt %s --ftpipe-merge-gpu-modules --split-input-file --verify-diagnostics | FileCheck %s

// Two one-kernel modules with the same kernel name become one module; the
// kernels take their modules' names and the launches follow.
// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @f
// CHECK: gpu.launch_func @ftpipe_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @ftpipe_kernels::@f_kernel_0 blocks
// CHECK-NOT: gpu.module @f_kernel
// CHECK: gpu.module @ftpipe_kernels {
// CHECK-NEXT: gpu.func @f_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @f_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @f(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<4xf32>
      memref.store %x, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A module with a target was attached too early.
module attributes {gpu.container_module} {
  // expected-error @below {{run before nvvm-attach-target}}
  gpu.module @a [#nvvm.target] {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @b {
    gpu.func @b(%x: memref<4xf32>) kernel { gpu.return }
  }
}
