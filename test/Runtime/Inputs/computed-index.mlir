// A model that picks embedding rows by ids it computes (the data's ids plus
// one), for test/Runtime/trap-computed-indices.test: the index guard of its
// gather gets a check (ftpipe-trap-computed-indices), since the ids it reads
// are not the data's own.
module {
  func.func @Shifted(%ids: tensor<2x4xi32> loc("input_ids"), %w: tensor<16x8xf32> {ftpipe.name = "emb.weight", ftpipe.param} loc("Shifted/Embedding[emb]")) -> tensor<f32> {
    %one = "tosa.const"() {value = dense<1> : tensor<2x4xi32>} : () -> tensor<2x4xi32> loc("Shifted/Embedding[emb]")
    %next = tosa.add %ids, %one : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32> loc("Shifted/Embedding[emb]")
    %idx = tosa.reshape %next {new_shape = array<i64: 1, 8>} : (tensor<2x4xi32>) -> tensor<1x8xi32> loc("Shifted/Embedding[emb]")
    %table = tosa.reshape %w {new_shape = array<i64: 1, 16, 8>} : (tensor<16x8xf32>) -> tensor<1x16x8xf32> loc("Shifted/Embedding[emb]")
    %rows = tosa.gather %table, %idx : (tensor<1x16x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32> loc("Shifted/Embedding[emb]")
    %squares = tosa.mul %rows, %rows {shift = 0 : i8} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32> loc("Shifted/Loss")
    %sum1 = tosa.reduce_sum %squares {axis = 1 : i32} : (tensor<1x8x8xf32>) -> tensor<1x1x8xf32> loc("Shifted/Loss")
    %sum2 = tosa.reduce_sum %sum1 {axis = 2 : i32} : (tensor<1x1x8xf32>) -> tensor<1x1x1xf32> loc("Shifted/Loss")
    %loss = tosa.reshape %sum2 {new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32> loc("Shifted/Loss")
    return %loss : tensor<f32> loc("Shifted/Loss")
  } loc("Shifted")
}
