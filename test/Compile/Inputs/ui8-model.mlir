// A model whose input has an element type the runtime has no tensor of.
func.func @forward(%x: tensor<2xui8>) -> tensor<2xui8> {
  return %x : tensor<2xui8>
}
