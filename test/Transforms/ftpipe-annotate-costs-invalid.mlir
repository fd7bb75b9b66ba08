// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=no-such-cluster 2>&1 | FileCheck %s --check-prefix=HARDWARE
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json device=2" 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs="profile=%S/Inputs/no-such-profile.json" 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs="profile=%S/Inputs/bad-profile.json" 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs="profile=%S/Inputs/slow-pair.json" 2>&1 | FileCheck %s --check-prefix=ENTRY2

// Tests the user errors of ftpipe-annotate-costs: each names what is wrong
// at the module's location.

// HARDWARE: ftpipe-annotate-costs-invalid.mlir:[[@LINE+5]]:1: error: cannot load hardware 'no-such-cluster': {{.*}}no-such-cluster
// DEVICE: error: reference device 2 is not one of the 2 devices of 'slow-pair'
// NOFILE: error: cannot read profile '{{.*}}no-such-profile.json': No such file or directory
// ENTRY: error: profile '{{.*}}bad-profile.json': expected a time in [0, 1e9] ms at profile.Model/Block[0].fwd_ms
// ENTRY2: error: profile '{{.*}}slow-pair.json': expected object at profile.name
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
