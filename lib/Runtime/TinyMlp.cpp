//===- TinyMlp.cpp - Forward and backward of the hand-written model -------===//

#include "FTPipe/Runtime/TinyMlp.h"
#include "FTPipe/Runtime/StageABI.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <random>

using namespace ftpipe::runtime;

namespace {

/// A row-major [rows, cols] matrix view for the transfers: MLIR's rank-2
/// memref descriptor.
struct Descriptor2D {
  FTPipeMemRefHead head;
  int64_t sizes[2];
  int64_t strides[2];
  Descriptor2D(float *data, int64_t rows, int64_t cols)
      : head{data, data, 0}, sizes{rows, cols}, strides{cols, 1} {}
};

using Matrix = std::vector<float>;

/// out[r, c] = sum_k a[r, k] * b(k, c), b given by an accessor.
template <typename B>
Matrix multiply(const Matrix &a, int64_t rows, int64_t inner, int64_t cols,
                B b) {
  Matrix out(rows * cols, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (int64_t k = 0; k < inner; ++k)
        sum += double(a[r * inner + k]) * b(k, c);
      out[r * cols + c] = static_cast<float>(sum);
    }
  return out;
}

/// out[r, c] += sum_i a[i, r] * b[i, c] (a: [n, rows], b: [n, cols]): the
/// gradient of a weight from its layer's input and output gradient.
void addTransposedProduct(float *out, const float *a, const float *b, int64_t n,
                          int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t i = 0; i < n; ++i)
        out[r * cols + c] += a[i * rows + r] * b[i * cols + c];
}

std::string weightName(int64_t s) {
  return "layers." + std::to_string(s) + ".weight";
}
std::string biasName(int64_t s) {
  return "layers." + std::to_string(s) + ".bias";
}

class TinyMlpStage : public StageProgram {
public:
  TinyMlpStage(const TinyMlpShape &shape, const std::vector<int64_t> &placement,
               int64_t stage)
      : shape(shape), placement(placement), self(stage), first(stage == 0),
        last(stage == shape.stages - 1) {
    int64_t h = shape.hidden, d = shape.features, b = shape.microBatchSize;
    if (first || last)
      params.push_back({"embed.weight", {h, d}, DType::F32});
    params.push_back({weightName(stage), {h, h}, DType::F32});
    params.push_back({biasName(stage), {h}, DType::F32});
    if (first)
      inputs.push_back({"x", {b, d}, DType::F32});
    if (last)
      inputs.push_back({"y", {b, d}, DType::F32});
  }

  int64_t stage() const override { return self; }
  const std::vector<ParameterInfo> &parameters() const override {
    return params;
  }
  const std::vector<DataInputInfo> &dataInputs() const override {
    return inputs;
  }
  bool computesLoss() const override { return last; }

  ForwardResult forward(int64_t mb, const std::vector<const Tensor *> &p,
                        const std::vector<const Tensor *> &data) override {
    ForwardResult result;
    Matrix input = receiveInput(mb, p, data);
    Matrix h = layer(input, p);
    if (last) {
      result.loss = loss(h, p, data);
    } else {
      Descriptor2D view(h.data(), shape.microBatchSize, shape.hidden);
      ftpipe_rt_send_f32(placement[self + 1], 2 * self, mb, 2, &view);
    }
    // Recomputation: keep what this stage received.
    if (!first)
      result.saved.push_back(
          Tensor::f32({shape.microBatchSize, shape.hidden}, input));
    return result;
  }

  void backward(int64_t mb, const std::vector<const Tensor *> &p,
                const std::vector<const Tensor *> &data,
                std::vector<Tensor> saved,
                const std::vector<Tensor *> &gradSums) override {
    backwardWeight(mb, p, data, backwardInput(mb, p, data, std::move(saved)),
                   gradSums);
  }

  // The backward splits (zero-bubble schedules): the input part computes
  // dz and sends din; the weight part forms the parameter gradients from
  // what it returns: dz and the layer's input, and on the last stage h and
  // dout, on the first din.
  bool splitsBackward() const override { return true; }

  std::vector<Tensor> backwardInput(int64_t mb,
                                    const std::vector<const Tensor *> &p,
                                    const std::vector<const Tensor *> &data,
                                    std::vector<Tensor> saved) override {
    int64_t b = shape.microBatchSize, hd = shape.hidden, d = shape.features;
    Matrix input = first ? embed(p, data)
                         : Matrix(saved[0].f32Values().begin(),
                                  saved[0].f32Values().end());
    Matrix h = layer(input, p);
    const float *e = first || last ? p[0]->f32Data() : nullptr;
    Matrix dh(b * hd), dout;
    if (last) {
      // out = h E; dout = (out - y) / B; dh = dout E^T.
      const float *y = data.back()->f32Data();
      Matrix out = multiply(h, b, hd, d,
                            [&](int64_t k, int64_t c) { return e[k * d + c]; });
      dout.resize(b * d);
      for (int64_t i = 0; i < b * d; ++i)
        dout[i] = (out[i] - y[i]) / b;
      dh = multiply(dout, b, d, hd,
                    [&](int64_t k, int64_t c) { return e[c * d + k]; });
    } else {
      Descriptor2D view(dh.data(), b, hd);
      ftpipe_rt_recv_f32(placement[self + 1], 2 * self + 1, mb, 2, &view);
    }
    // z = in W^T + b; dz = dh (1 - h^2); din = dz W.
    const float *w = p[first || last ? 1 : 0]->f32Data();
    Matrix dz(b * hd);
    for (int64_t i = 0; i < b * hd; ++i)
      dz[i] = dh[i] * (1 - h[i] * h[i]);
    Matrix din = multiply(dz, b, hd, hd,
                          [&](int64_t k, int64_t c) { return w[k * hd + c]; });
    if (!first) {
      Descriptor2D view(din.data(), b, hd);
      ftpipe_rt_send_f32(placement[self - 1], 2 * (self - 1) + 1, mb, 2, &view);
    }
    std::vector<Tensor> weightSaved;
    weightSaved.push_back(Tensor::f32({b, hd}, dz));
    weightSaved.push_back(Tensor::f32({b, hd}, input));
    if (last) {
      weightSaved.push_back(Tensor::f32({b, hd}, h));
      weightSaved.push_back(Tensor::f32({b, d}, dout));
    }
    if (first)
      weightSaved.push_back(Tensor::f32({b, hd}, din));
    return weightSaved;
  }

  void backwardWeight(int64_t mb, const std::vector<const Tensor *> &p,
                      const std::vector<const Tensor *> &data,
                      std::vector<Tensor> weightSaved,
                      const std::vector<Tensor *> &gradSums) override {
    int64_t b = shape.microBatchSize, hd = shape.hidden, d = shape.features;
    const float *dz = weightSaved[0].f32Data(),
                *input = weightSaved[1].f32Data();
    // dW = dz^T in; db = sum dz; last: dE += h^T dout; first: dE += din^T x.
    Matrix dEmbed(hd * d, 0.0f);
    if (last)
      addTransposedProduct(dEmbed.data(), weightSaved[2].f32Data(),
                           weightSaved[3].f32Data(), b, hd, d);
    Tensor dW(DType::F32, {hd, hd}), db(DType::F32, {hd});
    addTransposedProduct(dW.f32Data(), dz, input, b, hd, hd);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t r = 0; r < hd; ++r)
        db.f32Data()[r] += dz[i * hd + r];
    if (first)
      addTransposedProduct(dEmbed.data(), weightSaved.back().f32Data(),
                           data.front()->f32Data(), b, hd, d);
    std::vector<llvm::ArrayRef<float>> grads;
    if (first || last)
      grads.push_back(dEmbed);
    grads.push_back(dW.f32Values());
    grads.push_back(db.f32Values());
    for (auto [sum, grad] : llvm::zip(gradSums, grads))
      for (auto [s, g] : llvm::zip(
               sum ? sum->f32Values() : llvm::MutableArrayRef<float>(), grad))
        s += g;
  }

private:
  Matrix embed(const std::vector<const Tensor *> &p,
               const std::vector<const Tensor *> &data) const {
    const float *e = p[0]->f32Data();
    int64_t d = shape.features;
    return multiply(Matrix(data.front()->f32Values().begin(),
                           data.front()->f32Values().end()),
                    shape.microBatchSize, d, shape.hidden,
                    [&](int64_t k, int64_t c) { return e[c * d + k]; });
  }

  Matrix receiveInput(int64_t mb, const std::vector<const Tensor *> &p,
                      const std::vector<const Tensor *> &data) const {
    if (first)
      return embed(p, data);
    Matrix input(shape.microBatchSize * shape.hidden);
    Descriptor2D view(input.data(), shape.microBatchSize, shape.hidden);
    ftpipe_rt_recv_f32(placement[self - 1], 2 * (self - 1), mb, 2, &view);
    return input;
  }

  Matrix layer(const Matrix &input,
               const std::vector<const Tensor *> &p) const {
    size_t at = first || last ? 1 : 0;
    const float *w = p[at]->f32Data(), *bias = p[at + 1]->f32Data();
    int64_t hd = shape.hidden;
    Matrix h = multiply(input, shape.microBatchSize, hd, hd,
                        [&](int64_t k, int64_t c) { return w[c * hd + k]; });
    for (int64_t i = 0; i < shape.microBatchSize; ++i)
      for (int64_t c = 0; c < hd; ++c)
        h[i * hd + c] = std::tanh(h[i * hd + c] + bias[c]);
    return h;
  }

  float loss(const Matrix &h, const std::vector<const Tensor *> &p,
             const std::vector<const Tensor *> &data) const {
    const float *e = p[0]->f32Data(), *y = data.back()->f32Data();
    int64_t d = shape.features;
    Matrix out = multiply(h, shape.microBatchSize, shape.hidden, d,
                          [&](int64_t k, int64_t c) { return e[k * d + c]; });
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i)
      sum += 0.5 * double(out[i] - y[i]) * (out[i] - y[i]);
    return static_cast<float>(sum / shape.microBatchSize);
  }

  TinyMlpShape shape;
  std::vector<int64_t> placement;
  int64_t self;
  bool first, last;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;
};

} // namespace

std::vector<std::unique_ptr<StageProgram>>
ftpipe::runtime::tinyMlpStages(const TinyMlpShape &shape,
                               const std::vector<int64_t> &placement,
                               int64_t device) {
  std::vector<std::unique_ptr<StageProgram>> stages;
  for (int64_t s = 0; s < shape.stages; ++s)
    if (placement[s] == device)
      stages.push_back(std::make_unique<TinyMlpStage>(shape, placement, s));
  return stages;
}

ParameterPlacement
ftpipe::runtime::tinyMlpPlacement(const TinyMlpShape &shape,
                                  const std::vector<int64_t> &placement) {
  ParameterPlacement result;
  for (int64_t s = 0; s < shape.stages; ++s) {
    result[weightName(s)] = {placement[s]};
    result[biasName(s)] = {placement[s]};
  }
  std::vector<int64_t> embed = {placement.front(), placement.back()};
  std::sort(embed.begin(), embed.end());
  embed.erase(std::unique(embed.begin(), embed.end()), embed.end());
  result["embed.weight"] = embed;
  return result;
}

TensorMap ftpipe::runtime::tinyMlpWeights(const TinyMlpShape &shape,
                                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::vector<int64_t> dims, int64_t fanIn) {
    Tensor tensor(DType::F32, dims);
    float bound = 1.0f / std::sqrt(static_cast<float>(fanIn));
    std::uniform_real_distribution<float> draw(-bound, bound);
    for (float &x : tensor.f32Values())
      x = draw(rng);
    return tensor;
  };
  TensorMap weights;
  weights["embed.weight"] =
      uniform({shape.hidden, shape.features}, shape.features);
  for (int64_t s = 0; s < shape.stages; ++s) {
    weights[weightName(s)] =
        uniform({shape.hidden, shape.hidden}, shape.hidden);
    weights[biasName(s)] = uniform({shape.hidden}, shape.hidden);
  }
  return weights;
}

TensorMap ftpipe::runtime::tinyMlpData(const TinyMlpShape &shape,
                                       int64_t samples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int64_t d = shape.features;
  Matrix a(d * d);
  for (float &x : a)
    x = normal(rng) / std::sqrt(static_cast<float>(d));
  Tensor x(DType::F32, {samples, d}), y(DType::F32, {samples, d});
  for (float &v : x.f32Values())
    v = normal(rng);
  for (int64_t i = 0; i < samples; ++i)
    for (int64_t c = 0; c < d; ++c) {
      double sum = 0;
      for (int64_t k = 0; k < d; ++k)
        sum += x.f32Data()[i * d + k] * a[k * d + c];
      y.f32Data()[i * d + c] = static_cast<float>(std::sin(sum));
    }
  return {{"x", std::move(x)}, {"y", std::move(y)}};
}

namespace {
class TinyMlpModel : public PipelineModel {
public:
  TinyMlpModel(const TinyMlpShape &shape, std::vector<int64_t> stagePlacement)
      : shape(shape), stagePlacement(std::move(stagePlacement)),
        graph(ftpipe::schedule::StageGraph::chain(this->stagePlacement)),
        holders(tinyMlpPlacement(shape, this->stagePlacement)) {
    for (const auto &[name, devices] : holders)
      if (devices.size() > 1)
        graph.tiedDevices.push_back(devices);
    for (int64_t d = 0; d < graph.devices; ++d)
      for (auto &stage : tinyMlpStages(shape, this->stagePlacement, d)) {
        for (const ParameterInfo &param : stage->parameters())
          if (llvm::none_of(params, [&](const ParameterInfo &p) {
                return p.name == param.name;
              }))
            params.push_back(param);
        for (const DataInputInfo &input : stage->dataInputs())
          if (llvm::none_of(inputs, [&](const DataInputInfo &i) {
                return i.name == input.name;
              }))
            inputs.push_back(input);
      }
  }
  const ftpipe::schedule::StageGraph &stageGraph() const override {
    return graph;
  }
  const ParameterPlacement &placement() const override { return holders; }
  const std::vector<ParameterInfo> &parameters() const override {
    return params;
  }
  const std::vector<DataInputInfo> &dataInputs() const override {
    return inputs;
  }
  int64_t microBatchSize() const override { return shape.microBatchSize; }
  TensorMap randomWeights(uint64_t seed) const override {
    return tinyMlpWeights(shape, seed);
  }
  llvm::Expected<std::vector<std::unique_ptr<StageProgram>>>
  loadStages(int64_t device) override {
    return tinyMlpStages(shape, stagePlacement, device);
  }

private:
  TinyMlpShape shape;
  std::vector<int64_t> stagePlacement;
  ftpipe::schedule::StageGraph graph;
  ParameterPlacement holders;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;
};
} // namespace

std::unique_ptr<PipelineModel>
ftpipe::runtime::createTinyMlpModel(const TinyMlpShape &shape,
                                    std::vector<int64_t> placement) {
  return std::make_unique<TinyMlpModel>(shape, std::move(placement));
}
