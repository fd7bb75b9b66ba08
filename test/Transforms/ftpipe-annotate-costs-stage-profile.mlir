// RUN: ftpipe-opt %s --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json profile=%S/Inputs/stage-profile.json" | FileCheck %s
// RUN: %python -c "import json, sys; p = json.load(open(sys.argv[1])); del p['ops']; json.dump(p, open(sys.argv[2], 'w'))" %S/Inputs/stage-profile.json %t.stages-only.json
// RUN: ftpipe-opt %s --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json profile=%t.stages-only.json" | FileCheck %s --check-prefix=STAGES
// RUN: %python -c "import json, sys; p = json.load(open(sys.argv[1])); del p['ops']; p['source']['target'] = sys.argv[3]; s = p['stages']; s[0].update(fwd_cpu_ms=2.0, bwd_cpu_ms=4.0); s[1].update(fwd_cpu_ms=0.5, bwd_cpu_ms=2.0); json.dump(p, open(sys.argv[2], 'w'))" %S/Inputs/stage-profile.json %t.cpu.json cpu
// RUN: ftpipe-opt %s --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json profile=%t.cpu.json" | FileCheck %s --check-prefix=CPU
// RUN: %python -c "import json, sys; p = json.load(open(sys.argv[1])); p['source']['target'] = 'cuda'; json.dump(p, open(sys.argv[2], 'w'))" %t.cpu.json %t.cuda.json
// RUN: ftpipe-opt %s --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json profile=%t.cuda.json" | FileCheck %s --check-prefix=STAGES

// Tests that a measured profile's stages (Inputs/stage-profile.json, the
// format ftpipe-run --profile-out writes) price their ops: stage 0's 3 ms
// forward and 6 ms backward are shared by its two ops in proportion to their
// analytical times (equal here); stage 1 recomputes, so its backward proper
// is 3 - 1 = 2 ms; and an op scope of the profile (`Model/Head`) replaces
// the stage's share of its ops. A profile of the CPU target prices with its
// stages' CPU times (`fwd_cpu_ms`, `bwd_cpu_ms`; stage 1's backward proper
// 2 - 0.5 = 1.5 ms), one of another target with the wall times.

module {
// CHECK-LABEL: func.func @profiled
// STAGES-LABEL: func.func @profiled
// CPU-LABEL: func.func @profiled
func.func @profiled(%w: tensor<64x64xf32> {ftpipe.param}, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // CHECK: tosa.tanh {{.*}}fwd_ms = 1.5, bwd_ms = 3.0,
  // STAGES: tosa.tanh {{.*}}fwd_ms = 1.5, bwd_ms = 3.0,
  // CPU: tosa.tanh {{.*}}fwd_ms = 1.0, bwd_ms = 2.0,
  %a = tosa.tanh %w : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Block[0]")
  // CHECK: tosa.tanh {{.*}}fwd_ms = 1.5, bwd_ms = 3.0,
  // STAGES: tosa.tanh {{.*}}fwd_ms = 1.5, bwd_ms = 3.0,
  %b = tosa.tanh %a : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Block[0]")
  // CHECK: tosa.add {{.*}}fwd_ms = 0.25, bwd_ms = 0.5,
  // STAGES: tosa.add {{.*}}fwd_ms = 1.0, bwd_ms = 2.0,
  // CPU: tosa.add {{.*}}fwd_ms = 0.5, bwd_ms = 1.5,
  %c = tosa.add %b, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Head")
  return %c : tensor<64x64xf32>
}
}
