// One 256 x 256 x 256 matrix product (2^25 FLOPs, 3 x 256 KiB), compute-bound
// on any CPU: its forward time is the roofline's launch plus FLOPs / rate.
func.func @product(%a: tensor<1x256x256xf32>, %b: tensor<1x256x256xf32>) -> tensor<1x256x256xf32> {
  %c = tosa.matmul %a, %b : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
  return %c : tensor<1x256x256xf32>
}
