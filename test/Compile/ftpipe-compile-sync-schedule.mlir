// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.mlir
// RUN: rm -rf %t.dir && ftpipe-compile %t.mlir --devices=2 -O0 --jobs=1 --sync-schedule=zb-auto -o %t.dir
// RUN: FileCheck %s < %t.dir/manifest.json
// RUN: not ftpipe-compile %t.mlir --devices=2 --sync-schedule=async -o %t.bad 2>&1 | FileCheck %s --check-prefix=BAD

// Tests ftpipe-compile's --sync-schedule: the partitioner takes it (the
// pipeline's option, test/Pipelines/ftpipe-partition-pipeline.mlir), the
// manifest records it with the compile command (a re-compile repeats it),
// and async is not a synchronous schedule.

// CHECK: "--sync-schedule=zb-auto"
// BAD: for the --sync-schedule option: Cannot find option named 'async'!
