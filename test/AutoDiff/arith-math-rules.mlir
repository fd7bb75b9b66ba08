// RUN: ftpipe-opt %s --split-input-file --ftpipe-differentiate | FileCheck %s

// One case per tangent rule of lib/AutoDiff/ArithMathRules.cpp. These rules
// work inside linalg bodies: each function is a linalg.generic whose body
// uses the op, on arguments marked as parameters, so ftpipe-differentiate
// builds `@<name>_adjoint(args..., dy)` with one linalg.generic per argument
// whose body is a copy of the forward body, the tangent the rule builds
// (seeded with 1 for that argument) and its product with dy.
// Each case's `// Rule:` line names its op. The list is complete:
// unittests/AutoDiff/RuleListTest.cpp reads the `// Rule:` lines of every
// file in this folder and checks that they name each op that has a rule
// registered (found through the op interfaces, not from a written list)
// exactly once; unittests/AutoDiff/RuleGradientTest.cpp checks the same rules
// numerically.

// Tests arith.addf: the tangent of each operand passes through (1).
// Rule: arith.addf

// CHECK-LABEL: func.func @addf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @addf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.subf: tangent 1 for the first operand, -1 for the second.
// Rule: arith.subf

// CHECK-LABEL: func.func @subf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @subf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.mulf: d(a b) = da b + a db.
// Rule: arith.mulf

// CHECK-LABEL: func.func @mulf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @mulf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.divf: d(a / b) = da / b - db (a / b) / b.
// Rule: arith.divf

// CHECK-LABEL: func.func @divf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.divf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.mulf %[[ONE]], %[[R]]
// CHECK-NEXT: %[[TD:.*]] = arith.divf %[[TQ]], %[[Y]]
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[TD]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @divf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.negf: the tangent is negated.
// Rule: arith.negf

// CHECK-LABEL: func.func @negf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.negf %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @negf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.maximumf: the tangent of a where a >= b, else that of b.
// Rule: arith.maximumf

// CHECK-LABEL: func.func @maximumf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @maximumf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.maxnumf: the tangent of a where a >= b, else that of b.
// Rule: arith.maxnumf

// CHECK-LABEL: func.func @maxnumf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maxnumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maxnumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @maxnumf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maxnumf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.minimumf: the tangent of a where a <= b, else that of b.
// Rule: arith.minimumf

// CHECK-LABEL: func.func @minimumf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @minimumf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.minimumf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.minnumf: the tangent of a where a <= b, else that of b.
// Rule: arith.minnumf

// CHECK-LABEL: func.func @minnumf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minnumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minnumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @minnumf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.minnumf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.select: the tangent of the operand chosen (the condition, from
// a comparison, has none).
// Rule: arith.select

// CHECK-LABEL: func.func @select_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ogt, %[[X]], %[[Z]]
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ogt, %[[X]], %[[Z]]
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @select(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %a, %c0 : f32
    %r = arith.select %p, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.extf: the tangent is extended too, and the gradient truncated
// back to the input's type (a square computed in f64).
// Rule: arith.extf

// CHECK-LABEL: func.func @extf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[W]], %[[W]] : f64
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TW:.*]] = arith.extf %[[ONE]] : f32 to f64
// CHECK-NEXT: %[[T1:.*]] = arith.mulf %[[W]], %[[TW]] : f64
// CHECK-NEXT: %[[T2:.*]] = arith.mulf %[[TW]], %[[W]] : f64
// CHECK-NEXT: %[[TS:.*]] = arith.addf %[[T2]], %[[T1]] : f64
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[TS]] : f64 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @extf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %w = arith.extf %a : f32 to f64
    %s = arith.mulf %w, %w : f64
    %r = arith.truncf %s : f64 to f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.truncf: the tangent is truncated too (a square computed in
// f16).
// Rule: arith.truncf

// CHECK-LABEL: func.func @truncf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[H]], %[[H]] : f16
// CHECK-NEXT: %[[R:.*]] = arith.extf %[[S]] : f16 to f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TH:.*]] = arith.truncf %[[ONE]] : f32 to f16
// CHECK-NEXT: %[[T1:.*]] = arith.mulf %[[H]], %[[TH]] : f16
// CHECK-NEXT: %[[T2:.*]] = arith.mulf %[[TH]], %[[H]] : f16
// CHECK-NEXT: %[[TS:.*]] = arith.addf %[[T2]], %[[T1]] : f16
// CHECK-NEXT: %[[T:.*]] = arith.extf %[[TS]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @truncf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.truncf %a : f32 to f16
    %s = arith.mulf %h, %h : f16
    %r = arith.extf %s : f16 to f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.cmpf: a comparison has no tangent, so relu(a) * a has the
// tangent select(a < 0, 0, 1) * a + relu(a).
// Rule: arith.cmpf

// CHECK-LABEL: func.func @cmpf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf olt, %[[X]], %[[Z]]
// CHECK-NEXT: %[[M:.*]] = arith.select %[[C]], %[[Z]], %[[X]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[M]], %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TM:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[T1:.*]] = arith.mulf %[[M]], %[[ONE]]
// CHECK-NEXT: %[[T2:.*]] = arith.mulf %[[TM]], %[[X]]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[T2]], %[[T1]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @cmpf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %p = arith.cmpf olt, %a, %c0 : f32
    %m = arith.select %p, %c0, %a : f32
    %r = arith.mulf %m, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.fptosi: a conversion to an integer has no tangent, so
// sitofp(fptosi(a)) * a has the tangent sitofp(fptosi(a)).
// Rule: arith.fptosi

// CHECK-LABEL: func.func @fptosi_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[F]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @fptosi(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = arith.fptosi %a : f32 to i32
    %f = arith.sitofp %i : i32 to f32
    %r = arith.mulf %f, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests arith.fptoui: a conversion to an integer has no tangent, so
// uitofp(fptoui(a)) * a has the tangent uitofp(fptoui(a)).
// Rule: arith.fptoui

// CHECK-LABEL: func.func @fptoui_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = arith.fptoui %[[X]] : f32 to i32
// CHECK-NEXT: %[[F:.*]] = arith.uitofp %[[I]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[F]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @fptoui(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = arith.fptoui %a : f32 to i32
    %f = arith.uitofp %i : i32 to f32
    %r = arith.mulf %f, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.exp: the tangent times exp(a).
// Rule: math.exp

// CHECK-LABEL: func.func @exp_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[R]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @exp(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.log: the tangent divided by a.
// Rule: math.log

// CHECK-LABEL: func.func @log_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.log %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.divf %[[ONE]], %[[X]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @log(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.log %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.tanh: the tangent times 1 - y^2.
// Rule: math.tanh

// CHECK-LABEL: func.func @tanh_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.tanh %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[YY:.*]] = arith.mulf %[[R]], %[[R]]
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[C1]], %[[YY]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @tanh(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.sqrt: the tangent divided by 2 y.
// Rule: math.sqrt

// CHECK-LABEL: func.func @sqrt_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[TWO]], %[[R]]
// CHECK-NEXT: %[[T:.*]] = arith.divf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @sqrt(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.rsqrt: the tangent times -y^3 / 2.
// Rule: math.rsqrt

// CHECK-LABEL: func.func @rsqrt_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.rsqrt %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[Y2:.*]] = arith.mulf %[[R]], %[[R]]
// CHECK-NEXT: %[[Y3:.*]] = arith.mulf %[[R]], %[[Y2]]
// CHECK-NEXT: %[[H:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[H]], %[[Y3]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @rsqrt(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.erf: the tangent times 2 / sqrt(pi) exp(-a^2).
// Rule: math.erf

// CHECK-LABEL: func.func @erf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.erf %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[X2:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X2]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]]
// CHECK-NEXT: %[[S:.*]] = arith.constant 1.12837923 : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[S]], %[[E]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @erf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.fpowi: the tangent times n a^(n-1).
// Rule: math.fpowi

// CHECK-LABEL: func.func @fpowi_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = math.fpowi %[[X]], %[[N]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[NM1:.*]] = arith.subi %[[N]], %[[C1]]
// CHECK-NEXT: %[[PW:.*]] = math.fpowi %[[X]], %[[NM1]]
// CHECK-NEXT: %[[NF:.*]] = arith.sitofp %[[N]] : i32 to f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[NF]], %[[PW]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @fpowi(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.constant 3 : i32
    %r = math.fpowi %a, %n : f32, i32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.powf: d(a^b) = da b a^(b-1) + db y log(a).
// Rule: math.powf

// CHECK-LABEL: func.func @powf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.powf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BM1:.*]] = arith.subf %[[Y]], %[[C1]]
// CHECK-NEXT: %[[PW:.*]] = math.powf %[[X]], %[[BM1]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[Y]], %[[PW]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[D1:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.powf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[X]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[R]], %[[L]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]], %[[D1]]
func.func @powf(%x: tensor<4xf32> {ftpipe.param}, %z: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = math.powf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.absf: the tangent, negated where a < 0.
// Rule: math.absf

// CHECK-LABEL: func.func @absf_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.absf %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf olt, %[[X]], %[[Z]]
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[ONE]]
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[N]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @absf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.absf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.sin: the tangent times cos(a).
// Rule: math.sin

// CHECK-LABEL: func.func @sin_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sin %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = math.cos %[[X]]
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[C]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @sin(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests math.cos: the tangent times -sin(a).
// Rule: math.cos

// CHECK-LABEL: func.func @cos_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.cos %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = math.sin %[[X]]
// CHECK-NEXT: %[[TS:.*]] = arith.mulf %[[ONE]], %[[S]]
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[TS]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[D0]]
func.func @cos(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.cos %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
