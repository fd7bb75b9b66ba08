// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=/dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=profile=/dev/zero 2>&1 | FileCheck %s --check-prefix=PROFILEZERO
// RUN: %python -c "print('{\"devices\": ' + '[' * 100000 + ']' * 100000 + '}')" > %t.deep.json
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%t.deep.json 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: %python -c "import json; print(json.dumps({'name': 'many', 'intra_node': {'gbps': 10, 'latency_us': 1}, 'devices': [{'memory_bytes': 10**9, 'tflops': 10, 'mem_gbps': 500}] * 10000}))" > %t.many.json
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%t.many.json 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%S/Inputs/max-count.json 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%S/Inputs/huge-memory.json 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%S/Inputs/tiny-tflops.json 2>&1 | FileCheck %s --check-prefix=TFLOPS
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=hardware=%S/Inputs/huge-launch.json 2>&1 | FileCheck %s --check-prefix=LAUNCH
// RUN: not ftpipe-opt %s --ftpipe-annotate-costs=profile=%S/Inputs/huge-profile.json 2>&1 | FileCheck %s --check-prefix=PROFILE

// Every input file is read up to 64 MiB and nested up to 64 levels, a
// cluster has at most 256 devices however it lists them, and every device
// figure must be in the range where the partitioner's arithmetic stays
// finite. Each case ends at once with one message that names the input;
// each used to run out of memory or stack, run for minutes, or pass with a
// wrong answer.

// ZERO: error: cannot load hardware '/dev/zero': hardware file '/dev/zero' is larger than 64 MiB (and it is not a preset name)
// PROFILEZERO: error: profile '/dev/zero' is larger than 64 MiB
// DEEP: error: cannot load hardware '{{.*}}deep.json': {{.*}}deep.json: line 1: JSON nested deeper than 64 levels
// MANY: error: cannot load hardware '{{.*}}many.json': {{.*}}: more than 256 devices at hardware.devices
// COUNT: error: {{.*}}max-count.json: expected at least 1, and at most 256 devices in all at hardware.devices[0].count
// MEMORY: error: {{.*}}huge-memory.json: hardware: device 0 ('gpu:0'): memory_bytes must be in [1, 1125899906842624], got 18446744073709551615
// TFLOPS: error: {{.*}}tiny-tflops.json: hardware: device 0 ('gpu:0'): tflops must be in [0.001, 1e+15], got 4.94066e-324
// LAUNCH: error: {{.*}}huge-launch.json: hardware: device 0 ('gpu:0'): launch_us must be in [0, 1e+06], got 1.7e+308
// PROFILE: error: profile '{{.*}}huge-profile.json': expected a time in [0, 1e9] ms at profile.Model/x.fwd_ms
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
