//===- DeviceOptimizerKernels.cu - Optimizer updates on the GPU -----------===//
//
// DeviceOptimizerKernels.h: one thread per element for SGD, Adam(W) and the
// sum of gradients; for
// Adafactor, one thread per row (row means, in the host's order), one per
// column, one per matrix (mean row state), one per element (the update),
// then one block that sums the update's squares (a fixed tree: the same
// result every run) and the elementwise application. Scratch memory comes
// from the runtime's pool and goes back to it, stream-ordered.
//
//===----------------------------------------------------------------------===//

#include "DeviceOptimizerKernels.h"

#include "CudaCheck.h"
#include "CudaDeviceMemory.h"
#include "FTPipe/Runtime/OptimizerRules.h"

using namespace ftpipe;
using namespace ftpipe::runtime;
using cuda::UpdateRule;

namespace {

constexpr int blockSize = 256;
constexpr int reduceThreads = 1024;

unsigned blocks(int64_t count) {
  return static_cast<unsigned>((count + blockSize - 1) / blockSize);
}

__device__ int64_t globalIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__global__ void sgdKernel(float *p, const float *g, float *buffer, int64_t n,
                          UpdateRule rule, bool first) {
  int64_t i = globalIndex();
  if (i < n)
    rules::sgd(p[i], g[i], buffer[i], rule.lr, rule.weightDecay, rule.momentum,
               first);
}

__global__ void adamKernel(float *p, const float *g, float *m, float *v,
                           int64_t n, UpdateRule rule) {
  int64_t i = globalIndex();
  if (i < n)
    rules::adam(p[i], g[i], m[i], v[i], rule.lr, rule.beta1, rule.beta2,
                rule.eps, rule.weightDecay, rule.decoupled, rule.correction1,
                rule.correction2);
}

/// Per (matrix, row): the row's mean squared gradient, into the row state.
__global__ void rowStateKernel(const float *g, float *row, int64_t matrices,
                               int64_t rows, int64_t cols, UpdateRule rule) {
  int64_t i = globalIndex();
  if (i >= matrices * rows)
    return;
  const float *line = g + i * cols;
  double mean = 0.0;
  for (int64_t c = 0; c < cols; ++c)
    mean += rules::adafactorSquare(line[c], rule.eps1) / cols;
  row[i] = rules::adafactorAverage(row[i], rule.beta2t, mean);
}

/// Per (matrix, column): the column's mean squared gradient, into the
/// column state.
__global__ void colStateKernel(const float *g, float *col, int64_t matrices,
                               int64_t rows, int64_t cols, UpdateRule rule) {
  int64_t i = globalIndex();
  if (i >= matrices * cols)
    return;
  int64_t b = i / cols, c = i % cols;
  const float *matrix = g + b * rows * cols;
  double mean = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    mean += rules::adafactorSquare(matrix[r * cols + c], rule.eps1) / rows;
  col[i] = rules::adafactorAverage(col[i], rule.beta2t, mean);
}

/// Per matrix: the mean of its (updated) row state.
__global__ void rowAverageKernel(const float *row, double *average,
                                 int64_t matrices, int64_t rows) {
  int64_t b = globalIndex();
  if (b >= matrices)
    return;
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    sum += row[b * rows + r] / double(rows);
  average[b] = sum;
}

__global__ void factoredKernel(const float *g, const float *row,
                               const float *col, const double *average,
                               double *u, int64_t matrices, int64_t rows,
                               int64_t cols) {
  int64_t i = globalIndex();
  if (i >= matrices * rows * cols)
    return;
  int64_t b = i / (rows * cols), r = (i / cols) % rows, c = i % cols;
  u[i] = rules::adafactorFactored(row[b * rows + r], average[b],
                                  col[b * cols + c], g[i]);
}

__global__ void vectorKernel(const float *g, float *v, double *u, int64_t n,
                             UpdateRule rule) {
  int64_t i = globalIndex();
  if (i >= n)
    return;
  v[i] = rules::adafactorAverage(v[i], rule.beta2t,
                                 rules::adafactorSquare(g[i], rule.eps1));
  u[i] = rules::adafactorUnfactored(v[i], g[i]);
}

/// One block: the step size from the sum of u's squares, into *scale.
__global__ void scaleKernel(const double *u, int64_t n, double *scale,
                            UpdateRule rule) {
  __shared__ double partial[reduceThreads];
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += u[i] * u[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    *scale = rules::adafactorScale(rule.lr, partial[0], double(n),
                                   rule.clipThreshold);
}

__global__ void applyKernel(float *p, const double *u, int64_t n,
                            const double *scale, UpdateRule rule) {
  int64_t i = globalIndex();
  if (i < n)
    p[i] = rules::adafactorApply(p[i], u[i], rule.lr, rule.weightDecay, *scale);
}

__global__ void accumulateKernel(float *sum, const float *value, int64_t n,
                                 float scale, bool first) {
  int64_t i = globalIndex();
  if (i < n)
    sum[i] = (first ? 0.0f : sum[i]) + scale * value[i];
}

void checkLaunch() { FTPIPE_CUDA_CHECK(cudaGetLastError()); }

/// The update's scale and its application, then the scratch goes back.
void clipAndApply(float *p, double *u, int64_t n, const UpdateRule &rule) {
  cudaStream_t stream = cuda::runtimeStream();
  auto *scale = static_cast<double *>(cuda::deviceAlloc(sizeof(double)));
  scaleKernel<<<1, reduceThreads, 0, stream>>>(u, n, scale, rule);
  checkLaunch();
  applyKernel<<<blocks(n), blockSize, 0, stream>>>(p, u, n, scale, rule);
  checkLaunch();
  cuda::deviceFree(scale);
  cuda::deviceFree(u);
}

} // namespace

void cuda::sgdUpdate(float *param, const float *grad, float *buffer, int64_t n,
                     const UpdateRule &rule, bool first) {
  if (n == 0)
    return;
  sgdKernel<<<blocks(n), blockSize, 0, runtimeStream()>>>(param, grad, buffer,
                                                          n, rule, first);
  checkLaunch();
}

void cuda::adamUpdate(float *param, const float *grad, float *m, float *v,
                      int64_t n, const UpdateRule &rule) {
  if (n == 0)
    return;
  adamKernel<<<blocks(n), blockSize, 0, runtimeStream()>>>(param, grad, m, v, n,
                                                           rule);
  checkLaunch();
}

void cuda::adafactorFactoredUpdate(float *param, const float *grad, float *row,
                                   float *col, int64_t matrices, int64_t rows,
                                   int64_t cols, const UpdateRule &rule) {
  int64_t n = matrices * rows * cols;
  if (n == 0)
    return;
  cudaStream_t stream = runtimeStream();
  rowStateKernel<<<blocks(matrices * rows), blockSize, 0, stream>>>(
      grad, row, matrices, rows, cols, rule);
  checkLaunch();
  colStateKernel<<<blocks(matrices * cols), blockSize, 0, stream>>>(
      grad, col, matrices, rows, cols, rule);
  checkLaunch();
  auto *average = static_cast<double *>(deviceAlloc(sizeof(double) * matrices));
  rowAverageKernel<<<blocks(matrices), blockSize, 0, stream>>>(row, average,
                                                               matrices, rows);
  checkLaunch();
  auto *u = static_cast<double *>(deviceAlloc(sizeof(double) * n));
  factoredKernel<<<blocks(n), blockSize, 0, stream>>>(grad, row, col, average,
                                                      u, matrices, rows, cols);
  checkLaunch();
  deviceFree(average);
  clipAndApply(param, u, n, rule);
}

void cuda::adafactorVectorUpdate(float *param, const float *grad, float *v,
                                 int64_t n, const UpdateRule &rule) {
  if (n == 0)
    return;
  auto *u = static_cast<double *>(deviceAlloc(sizeof(double) * n));
  vectorKernel<<<blocks(n), blockSize, 0, runtimeStream()>>>(grad, v, u, n,
                                                             rule);
  checkLaunch();
  clipAndApply(param, u, n, rule);
}

void cuda::accumulate(float *sum, const float *value, int64_t n, float scale,
                      bool first) {
  if (n == 0)
    return;
  accumulateKernel<<<blocks(n), blockSize, 0, runtimeStream()>>>(
      sum, value, n, scale, first);
  checkLaunch();
}
