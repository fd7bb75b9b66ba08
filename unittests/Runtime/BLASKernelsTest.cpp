//===- BLASKernelsTest.cpp - The gemm entry against a naive loop ----------===//
//
// Property test of ftpipe_blas_gemm_f32/_f64 (BLASKernels.h): on random
// shapes, random layouts (each operand's dimensions in a random order, with
// padding, so that rows, columns or neither are contiguous), random batch
// counts (including operands broadcast over a batch) and both accumulate
// modes, the result equals a naive triple loop over the same strided views.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/BLASKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace {

/// A strided tensor of rank <= 5 with a ranked-memref descriptor.
template <typename T> struct Strided {
  std::vector<T> storage;
  std::vector<int64_t> sizes, strides;
  std::vector<int64_t> descriptor; // allocated, aligned, offset, sizes, strides

  /// `logical` sizes per role (rows, cols, batch...); `present[r]` false drops
  /// role r (broadcast). The dimensions are laid out densely in the order
  /// `order` (a permutation of the roles, outermost first); `padMode` 1 pads
  /// the innermost dimension (a leading dimension larger than the row), 2
  /// doubles every stride (no dimension contiguous).
  Strided(const std::vector<int64_t> &logical, const std::vector<bool> &present,
          const std::vector<int> &order, int padMode, std::mt19937 &rng,
          int64_t &code) {
    std::vector<int> roles;
    for (int r : order)
      if (present[r])
        roles.push_back(r);
    sizes.resize(roles.size());
    strides.resize(roles.size());
    int64_t stride = 1;
    for (int d = int(roles.size()) - 1; d >= 0; --d) {
      sizes[d] = logical[roles[d]];
      strides[d] = stride;
      stride *= sizes[d] + (d == int(roles.size()) - 1 && padMode == 1 ? 3 : 0);
    }
    if (padMode == 2) {
      for (int64_t &s : strides)
        s *= 2;
      stride *= 2;
    }
    storage.resize(stride);
    std::uniform_real_distribution<double> value(-1, 1);
    for (T &x : storage)
      x = T(value(rng));
    code = 0;
    for (size_t d = 0; d < roles.size(); ++d)
      code |= int64_t(d + 1) << (FTPIPE_BLAS_ROLE_BITS * roles[d]);
    int64_t base = reinterpret_cast<int64_t>(storage.data());
    descriptor = {base, base, 0};
    descriptor.insert(descriptor.end(), sizes.begin(), sizes.end());
    descriptor.insert(descriptor.end(), strides.begin(), strides.end());
  }

  T &at(const std::vector<int> &roleOf, const std::vector<int64_t> &index) {
    int64_t offset = 0;
    for (size_t d = 0; d < sizes.size(); ++d)
      offset += index[roleOf[d]] * strides[d];
    return storage[offset];
  }
};

template <typename T>
void runRandomCase(std::mt19937 &rng,
                   void (*gemm)(int64_t, void *, int64_t, void *, int64_t,
                                void *, int64_t, int64_t, int64_t, int64_t,
                                int64_t)) {
  std::uniform_int_distribution<int64_t> size(1, 9);
  std::uniform_int_distribution<int> pad(0, 2);
  std::uniform_int_distribution<int> batches(0, FTPIPE_BLAS_MAX_BATCH), coin(0, 1);
  int64_t m = size(rng), n = size(rng), k = size(rng);
  int nb = batches(rng);
  std::vector<int64_t> batchSizes(nb);
  for (int64_t &b : batchSizes)
    b = std::uniform_int_distribution<int64_t>(1, 3)(rng);
  // Roles: 0 rows, 1 cols, 2.. batches.
  auto make = [&](int64_t rows, int64_t cols, bool mayBroadcast,
                  std::vector<int> &roleOf, int64_t &code) {
    std::vector<int64_t> logical = {rows, cols};
    std::vector<bool> present = {true, true};
    for (int b = 0; b < nb; ++b) {
      logical.push_back(batchSizes[b]);
      present.push_back(!(mayBroadcast && coin(rng)));
    }
    std::vector<int> order(logical.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    roleOf.clear();
    for (int r : order)
      if (present[r])
        roleOf.push_back(r);
    return Strided<T>(logical, present, order, pad(rng), rng, code);
  };
  std::vector<int> roleA, roleB, roleC;
  int64_t codeA, codeB, codeC;
  Strided<T> a = make(m, k, true, roleA, codeA);
  Strided<T> b = make(k, n, true, roleB, codeB);
  Strided<T> c = make(m, n, false, roleC, codeC);
  bool accumulate = coin(rng);

  // The expected result, on a copy of C, with a naive loop over all indices.
  Strided<T> expected = c;
  std::vector<int64_t> total(batchSizes.begin(), batchSizes.end());
  int64_t count = 1;
  for (int64_t s : total)
    count *= s;
  for (int64_t flat = 0; flat < count; ++flat) {
    std::vector<int64_t> batch(nb);
    for (int64_t rest = flat, d = nb - 1; d >= 0; --d) {
      batch[d] = rest % total[d];
      rest /= total[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          std::vector<int64_t> ia = {i, l}, ib = {l, j};
          ia.insert(ia.end(), batch.begin(), batch.end());
          ib.insert(ib.end(), batch.begin(), batch.end());
          sum += double(a.at(roleA, ia)) * double(b.at(roleB, ib));
        }
        std::vector<int64_t> ic = {i, j};
        ic.insert(ic.end(), batch.begin(), batch.end());
        T &out = expected.at(roleC, ic);
        out = T(sum + (accumulate ? double(out) : 0.0));
      }
  }
  gemm(int64_t(a.sizes.size()), a.descriptor.data(), int64_t(b.sizes.size()),
       b.descriptor.data(), int64_t(c.sizes.size()), c.descriptor.data(), codeA,
       codeB, codeC, nb, accumulate);
  double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < c.storage.size(); ++i)
    ASSERT_NEAR(c.storage[i], expected.storage[i], tolerance)
        << "m=" << m << " n=" << n << " k=" << k << " batches=" << nb
        << " element " << i;
}

TEST(BLASKernels, RandomLayoutsF32) {
  std::mt19937 rng(11);
  for (int i = 0; i < 400; ++i)
    runRandomCase<float>(rng, ftpipe_blas_gemm_f32);
}

TEST(BLASKernels, RandomLayoutsF64) {
  std::mt19937 rng(12);
  for (int i = 0; i < 400; ++i)
    runRandomCase<double>(rng, ftpipe_blas_gemm_f64);
}

} // namespace
