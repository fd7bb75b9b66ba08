//===- StridedViewTest.cpp - The device copy's indexing, on the host ------===//
//
// StridedView.h's elementOffsets is the indexing of the device copy kernel
// (CudaCopyKernels.cu), compiled here for the host: on random shapes and
// layouts (dense, transposed, padded, broadcast) it must visit the elements
// in the row-major order of a multi-index walk, in both views; isDense must
// accept exactly the row-major dense layouts (any stride on size-1
// dimensions).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/StridedView.h"

#include "gtest/gtest.h"

#include <random>
#include <vector>

using ftpipe::cuda::StridedView;

namespace {

StridedView rowMajor(const std::vector<int64_t> &sizes, int64_t pad = 0) {
  StridedView v;
  v.rank = static_cast<int>(sizes.size());
  int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = stride;
    stride = stride * sizes[d] + (d == v.rank - 1 ? pad : 0);
  }
  return v;
}

StridedView columnMajor(const std::vector<int64_t> &sizes) {
  StridedView v;
  v.rank = static_cast<int>(sizes.size());
  int64_t stride = 1;
  for (int d = 0; d < v.rank; ++d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = stride;
    stride *= sizes[d];
  }
  return v;
}

TEST(StridedView, OffsetsFollowTheRowMajorWalk) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> rankOf(1, 5), sizeOf(1, 4), kindOf(0, 3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> sizes(rankOf(rng));
    for (int64_t &size : sizes)
      size = sizeOf(rng);
    auto make = [&](int kind) {
      StridedView v = kind == 0   ? rowMajor(sizes)
                      : kind == 1 ? columnMajor(sizes)
                      : kind == 2 ? rowMajor(sizes, 3)
                                  : rowMajor(sizes);
      if (kind == 3)
        v.strides[0] = 0; // broadcast along the first dimension
      return v;
    };
    StridedView src = make(kindOf(rng)), dst = make(kindOf(rng));
    std::vector<int64_t> index(sizes.size(), 0);
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    for (int64_t i = 0; i < count; ++i) {
      int64_t expectedSrc = 0, expectedDst = 0;
      for (size_t d = 0; d < sizes.size(); ++d) {
        expectedSrc += index[d] * src.strides[d];
        expectedDst += index[d] * dst.strides[d];
      }
      int64_t from = -1, to = -1;
      ftpipe::cuda::elementOffsets(src, dst, i, from, to);
      ASSERT_EQ(from, expectedSrc) << "trial " << trial << " element " << i;
      ASSERT_EQ(to, expectedDst) << "trial " << trial << " element " << i;
      for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
  }
}

TEST(StridedView, DenseMeansRowMajorWithoutGaps) {
  EXPECT_TRUE(isDense(rowMajor({2, 3, 4})));
  EXPECT_FALSE(isDense(columnMajor({2, 3, 4})));
  EXPECT_FALSE(isDense(rowMajor({2, 3, 4}, /*pad=*/1)));
  // A dimension of size 1 may have any stride; a rank-0 view is dense.
  StridedView unit = rowMajor({3, 1, 2});
  unit.strides[1] = 77;
  EXPECT_TRUE(isDense(unit));
  EXPECT_TRUE(isDense(columnMajor({1, 5})));
  EXPECT_TRUE(isDense(StridedView()));
  StridedView broadcast = rowMajor({2, 3});
  broadcast.strides[0] = 0;
  EXPECT_FALSE(isDense(broadcast));
}

} // namespace
