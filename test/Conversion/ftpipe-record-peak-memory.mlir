// RUN: ftpipe-opt %s --ftpipe-record-peak-memory | FileCheck %s

// Tests the peak of each public function: allocations add, deallocs (also
// under a condition, through a view) remove, a call adds its callee's peak
// on top of what is live and leaves its result live. Each allocation counts
// as the host allocator charges it: with the alignment the lowering adds,
// in 64-byte units, whole pages from 1 MiB up. Private functions get no
// record.

// @f: a (16 B: 64) live, then b (32 B: 64): 128; a freed; c (64 B): 128; b
// freed through its view under a condition; the call peaks at 64 more: 128.
// CHECK-DAG: memref.global "public" constant @ftpipe_peak_bytes_f : memref<i64> = dense<128>
// @g: the callee's 8 bytes (64), left live, then 4 more (64): 128.
// CHECK-DAG: memref.global "public" constant @ftpipe_peak_bytes_g : memref<i64> = dense<128>
// @h: 1 MiB with 64 bytes of alignment: 1 MiB and a page.
// CHECK-DAG: memref.global "public" constant @ftpipe_peak_bytes_h : memref<i64> = dense<1052672>
// CHECK-NOT: ftpipe_peak_bytes_helper

func.func private @helper() -> memref<2xf32> {
  %r = memref.alloc() : memref<2xf32>
  return %r : memref<2xf32>
}

func.func @f(%cond: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.dealloc %a : memref<4xf32>
  %c = memref.alloc() : memref<16xf32>
  %base, %offset, %size, %stride = memref.extract_strided_metadata %b : memref<8xf32> -> memref<f32>, index, index, index
  scf.if %cond {
    memref.dealloc %base : memref<f32>
  }
  %r = func.call @helper() : () -> memref<2xf32>
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %r : memref<2xf32>
  return
}

func.func @g() {
  %r = func.call @helper() : () -> memref<2xf32>
  %d = memref.alloc() : memref<1xf32>
  memref.dealloc %d : memref<1xf32>
  memref.dealloc %r : memref<2xf32>
  return
}

func.func @h() {
  %a = memref.alloc() {alignment = 64 : i64} : memref<262144xf32>
  memref.dealloc %a : memref<262144xf32>
  return
}
