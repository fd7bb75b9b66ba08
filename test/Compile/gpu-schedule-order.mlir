// The order in which scripts/gpu/train_cuda_artifacts.py runs a pipeline
// schedule's per-device action lists on one GPU, in turn on one thread
// (scripts/gpu/schedule_order.py): each device's actions in its list's order,
// a forward after the earlier stages' forwards of its micro-batch, a
// backward after the later stages' backwards, the update once every device
// has reached it. The lists are ftpipe-run --print-schedule's for the tiny
// BERT's plan for two devices (stages 0 and 2 on device 0, stage 1 on
// device 1; build-gpu-bundle.sh's bert-tiny-2dev), 1F1B, one step of two
// micro-batches. Then lists that cannot run in turn are refused.

// RUN: printf 'device 0: 0F0 0F1 2F0 2B0 2F1 0B0 2B1 0B1 U0\ndevice 1: 1F0 1F1 1B0 1B1 U0\n' > %t.1f1b
// RUN: %python %ftpipe_src_root/scripts/gpu/schedule_order.py %t.1f1b --stages 0,1,2 | FileCheck %s
// CHECK:      F 0 0
// CHECK-NEXT: F 0 1
// CHECK-NEXT: F 1 0
// CHECK-NEXT: F 1 1
// CHECK-NEXT: F 2 0
// CHECK-NEXT: B 2 0
// CHECK-NEXT: F 2 1
// CHECK-NEXT: B 1 0
// CHECK-NEXT: B 0 0
// CHECK-NEXT: B 2 1
// CHECK-NEXT: B 1 1
// CHECK-NEXT: B 0 1
// CHECK-NEXT: U 0
// CHECK-EMPTY:

// Device 1 waits for stage 2's backward, which device 0 lists after stage
// 0's backward, which waits for stage 1's.
// RUN: printf 'device 0: 0F0 2F0 0B0 2B0 U0\ndevice 1: 1F0 1B0 U0\n' > %t.stuck
// RUN: not %python %ftpipe_src_root/scripts/gpu/schedule_order.py %t.stuck --stages 0,1,2 2>&1 | FileCheck %s --check-prefix=STUCK
// STUCK: error: the schedule cannot run in turn on one thread: the devices wait at 0: ('B', 0, 0), 1: ('B', 1, 0)

// An update that one device does not reach.
// RUN: printf 'device 0: 0F0 0B0 U0\ndevice 1: 1F0 1B0\n' > %t.noupdate
// RUN: not %python %ftpipe_src_root/scripts/gpu/schedule_order.py %t.noupdate --stages 0,1 2>&1 | FileCheck %s --check-prefix=NOUPDATE
// NOUPDATE: error: the schedule cannot run in turn on one thread: the devices wait at 0: ('U', 0, None)
