//===- StageBufferAccessTest.cpp - Transfers through buffer access hooks --===//
//
// ftpipe_rt_set_buffer_access (StageABI.h): with access functions registered
// (what FTPipeCUDARuntime does for device memory) a send hands the transport
// exactly the bytes the `out` function produced and a receive writes the
// buffer only through `in`; unregistered, transfers read and write host
// buffers themselves, strided ones included. Host functions stand in for the
// device's here: they record their calls and copy row-major.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/StageABI.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

namespace {

/// A rank-2 f32 memref descriptor.
struct MemRef2 {
  FTPipeMemRefHead head;
  int64_t sizes[2];
  int64_t strides[2];
};

MemRef2 view(float *data, int64_t rows, int64_t cols, int64_t rowStride,
             int64_t colStride) {
  return {{data, data, 0}, {rows, cols}, {rowStride, colStride}};
}

int outCalls = 0, inCalls = 0;

/// Row-major gather, each element plus 100: the mark of having gone through
/// this function.
void markedOut(int64_t rank, void *descriptor, int64_t elementBytes,
               void *host) {
  ++outCalls;
  ASSERT_EQ(rank, 2);
  ASSERT_EQ(elementBytes, 4);
  auto *m = static_cast<MemRef2 *>(descriptor);
  auto *out = static_cast<float *>(host);
  auto *base = static_cast<float *>(m->head.aligned);
  for (int64_t i = 0; i < m->sizes[0]; ++i)
    for (int64_t j = 0; j < m->sizes[1]; ++j)
      *out++ = base[i * m->strides[0] + j * m->strides[1]] + 100.0f;
}

void markedIn(int64_t rank, void *descriptor, int64_t elementBytes,
              const void *host) {
  ++inCalls;
  ASSERT_EQ(rank, 2);
  ASSERT_EQ(elementBytes, 4);
  auto *m = static_cast<MemRef2 *>(descriptor);
  auto *in = static_cast<const float *>(host);
  auto *base = static_cast<float *>(m->head.aligned);
  for (int64_t i = 0; i < m->sizes[0]; ++i)
    for (int64_t j = 0; j < m->sizes[1]; ++j)
      base[i * m->strides[0] + j * m->strides[1]] = *in++ + 1000.0f;
}

/// Sends the transposed view of a 2 x 3 matrix from device 0 to a dense
/// 3 x 2 buffer of device 1 over the in-process mailbox.
std::vector<float> transfer() {
  std::vector<float> source = {0, 1, 2, 3, 4, 5}, target(6, -1.0f);
  MemRef2 transposed = view(source.data(), 3, 2, 1, 3);
  MemRef2 dense = view(target.data(), 3, 2, 2, 1);
  ftpipe_rt_local_begin(2);
  ftpipe_rt_local_select(0);
  ftpipe_rt_send_f32(1, 7, 0, 2, &transposed);
  ftpipe_rt_local_select(1);
  ftpipe_rt_recv_f32(0, 7, 0, 2, &dense);
  EXPECT_EQ(ftpipe_rt_local_end(), 0);
  return target;
}

TEST(StageBufferAccess, RegisteredFunctionsCarryEveryTransfer) {
  outCalls = inCalls = 0;
  ftpipe_rt_set_buffer_access(markedOut, markedIn);
  std::vector<float> received = transfer();
  ftpipe_rt_set_buffer_access(nullptr, nullptr);
  EXPECT_EQ(outCalls, 1);
  EXPECT_EQ(inCalls, 1);
  EXPECT_EQ(received, (std::vector<float>{1100, 1103, 1101, 1104, 1102, 1105}));
}

TEST(StageBufferAccess, HostMemoryWithoutThem) {
  outCalls = inCalls = 0;
  std::vector<float> received = transfer();
  EXPECT_EQ(outCalls, 0);
  EXPECT_EQ(inCalls, 0);
  EXPECT_EQ(received, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

} // namespace
