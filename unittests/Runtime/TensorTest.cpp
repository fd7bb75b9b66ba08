//===- TensorTest.cpp - A tensor's bytes, owned or adopted ----------------===//
//
// TensorBytes: a ledger block zeroed when made, or a buffer adopted from
// generated code, given back once with its own release function; copies
// are ledger blocks of their own.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Tensor.h"

#include "gtest/gtest.h"

#include <cstring>
#include <utility>
#include <vector>

using namespace ftpipe::runtime;

namespace {

std::vector<void *> released;
void release(void *handle) { released.push_back(handle); }

int64_t runtimeBytes(int32_t device) {
  FTPipeMemLedger state;
  ftpipe_mem_read(device, &state);
  return state.now[FTPIPE_MEM_RUNTIME];
}

TEST(TensorTest, OwnedBytesAreZeroedLedgerBlocks) {
  constexpr int32_t device = 202;
  ftpipe_mem_set_thread_device(device);
  {
    Tensor tensor(DType::F32, {2, 3});
    EXPECT_EQ(tensor.bytes.size(), 24u);
    EXPECT_FALSE(tensor.bytes.adopted());
    EXPECT_EQ(runtimeBytes(device), 24);
    for (float value : tensor.f32Values())
      EXPECT_EQ(value, 0.0f);
  }
  EXPECT_EQ(runtimeBytes(device), 0);
  ftpipe_mem_set_thread_device(-1);
}

TEST(TensorTest, AdoptedBytesAreReleasedOnceWithTheirFunction) {
  released.clear();
  constexpr int32_t device = 203;
  ftpipe_mem_set_thread_device(device);
  alignas(64) float buffer[6] = {1, 2, 3, 4, 5, 6};
  int handle = 0;
  {
    Tensor tensor(DType::F32, {2, 3},
                  TensorBytes::adopt(reinterpret_cast<char *>(buffer),
                                     sizeof(buffer), release, &handle));
    EXPECT_TRUE(tensor.bytes.adopted());
    EXPECT_EQ(tensor.f32Data(), buffer);
    // Not the ledger's: the allocator that made it charges it.
    EXPECT_EQ(runtimeBytes(device), 0);

    // A copy is a ledger block of its own with the same bytes.
    Tensor copy = tensor;
    EXPECT_FALSE(copy.bytes.adopted());
    EXPECT_NE(copy.f32Data(), buffer);
    EXPECT_EQ(copy.bytes, tensor.bytes);
    EXPECT_EQ(runtimeBytes(device), int64_t(sizeof(buffer)));

    // Moved, the buffer goes with it and is released once, by its holder.
    std::vector<Tensor> saved;
    saved.push_back(std::move(tensor));
    EXPECT_EQ(saved.front().f32Data(), buffer);
    EXPECT_TRUE(released.empty());
    saved.clear();
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released.front(), &handle);

    // Assigned over, an adopted buffer is released too.
    Tensor other(DType::F32, {2, 3},
                 TensorBytes::adopt(reinterpret_cast<char *>(buffer),
                                    sizeof(buffer), release, &handle));
    other.bytes.assign(4, 0);
    EXPECT_EQ(released.size(), 2u);
  }
  EXPECT_EQ(runtimeBytes(device), 0);
  ftpipe_mem_set_thread_device(-1);
}

} // namespace
