// Two stages on two devices: a matmul with a parameter on device 0, tanh,
// a second parameter, an integer mask and the loss on device 1. Shared by the
// stage-program tests.
module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [10, 10], seconds = 0.0>} {
  func.func @model(%w: tensor<2x2xf32> {ftpipe.name = "w", ftpipe.param} loc("w"), %v: tensor<1x1x2xf32> {ftpipe.name = "v", ftpipe.param} loc("v"), %x: tensor<1x2x2xf32> loc("x"), %ids: tensor<1x2xi32> loc("ids")) -> tensor<f32> {
    %w3 = tosa.reshape %w {ftpipe.stage = 0 : i64, new_shape = array<i64: 1, 2, 2>} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
    %y = tosa.matmul %x, %w3 {ftpipe.stage = 0 : i64} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
    %m = tosa.cast %ids {ftpipe.stage = 0 : i64} : (tensor<1x2xi32>) -> tensor<1x2xf32>
    %m3 = tosa.reshape %m {ftpipe.stage = 0 : i64, new_shape = array<i64: 1, 2, 1>} : (tensor<1x2xf32>) -> tensor<1x2x1xf32>
    %t = tosa.tanh %y {ftpipe.stage = 1 : i64} : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
    %u = tosa.mul %t, %v {ftpipe.stage = 1 : i64, shift = 0 : i8} : (tensor<1x2x2xf32>, tensor<1x1x2xf32>) -> tensor<1x2x2xf32>
    %um = tosa.mul %u, %m3 {ftpipe.stage = 1 : i64, shift = 0 : i8} : (tensor<1x2x2xf32>, tensor<1x2x1xf32>) -> tensor<1x2x2xf32>
    %s = tosa.reduce_sum %um {axis = 2 : i32, ftpipe.stage = 1 : i64} : (tensor<1x2x2xf32>) -> tensor<1x2x1xf32>
    %s2 = tosa.reduce_sum %s {axis = 1 : i32, ftpipe.stage = 1 : i64} : (tensor<1x2x1xf32>) -> tensor<1x1x1xf32>
    %l = tosa.reshape %s2 {ftpipe.stage = 1 : i64, new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
