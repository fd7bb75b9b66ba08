//===- DevicesTest.cpp - GPU peaks and hardware from properties -*- C++ -*-===//
//
// The peaks derived from CUDA properties must reproduce the datasheets, so
// that a detected machine and the presets describe the same board alike.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Devices.h"
#include "FTPipe/Partition/Hardware.h"

#include "gtest/gtest.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

/// What cudaDeviceGetAttribute reports for a reference RTX 2080 Ti.
GpuProperties rtx2080ti() {
  GpuProperties gpu;
  gpu.name = "NVIDIA GeForce RTX 2080 Ti";
  gpu.memoryBytes = 11811160064;
  gpu.multiProcessors = 68;
  gpu.clockKHz = 1545000;
  gpu.memoryClockKHz = 7000000;
  gpu.memoryBusWidthBits = 352;
  gpu.computeMajor = 7;
  gpu.computeMinor = 5;
  return gpu;
}

/// An H100 SXM5 80GB.
GpuProperties h100() {
  GpuProperties gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.memoryBytes = 85045231616;
  gpu.multiProcessors = 132;
  gpu.clockKHz = 1980000;
  gpu.memoryClockKHz = 2619000;
  gpu.memoryBusWidthBits = 5120;
  gpu.computeMajor = 9;
  gpu.computeMinor = 0;
  return gpu;
}

TEST(DevicesTest, PeaksMatchTheDatasheets) {
  // Turing whitepaper: 13.45 TFLOP/s FP32, 616 GB/s.
  EXPECT_NEAR(peakFp32Tflops(rtx2080ti()), 13.45, 0.01);
  EXPECT_NEAR(peakMemoryGBps(rtx2080ti()), 616.0, 0.5);
  // H100 SXM5 datasheet: 67 TFLOP/s FP32, 3.35 TB/s.
  EXPECT_NEAR(peakFp32Tflops(h100()), 66.9, 0.1);
  EXPECT_NEAR(peakMemoryGBps(h100()), 3352.3, 0.5);
}

TEST(DevicesTest, LanesFollowComputeCapability) {
  EXPECT_EQ(fp32LanesPerMultiprocessor(7, 0), 64u);  // V100
  EXPECT_EQ(fp32LanesPerMultiprocessor(8, 0), 64u);  // A100
  EXPECT_EQ(fp32LanesPerMultiprocessor(8, 6), 128u); // RTX 30
  EXPECT_EQ(fp32LanesPerMultiprocessor(9, 0), 128u); // H100
}

TEST(DevicesTest, DetectedBoardEqualsThePreset) {
  // A detected 2080 Ti, as ftpipe-devices describes it (its datasheet peaks
  // through partition::sustainedDevice), is the default preset's device.
  GpuProperties gpu = rtx2080ti();
  partition::Device detected = partition::sustainedDevice(
      gpu.name, gpu.memoryBytes, peakFp32Tflops(gpu), peakMemoryGBps(gpu));
  llvm::Expected<partition::Hardware> preset =
      partition::getHardwarePreset("rtx2080ti-pcie-x8");
  ASSERT_TRUE(bool(preset)) << llvm::toString(preset.takeError());
  EXPECT_NEAR(detected.tflops, preset->device(0).tflops, 0.01);
  EXPECT_NEAR(detected.memGBps, preset->device(0).memGBps, 0.5);
  EXPECT_EQ(detected.memoryBytes, preset->device(0).memoryBytes);
  EXPECT_EQ(detected.launchUs, preset->device(0).launchUs);
}

TEST(DevicesTest, QueryNeverCrashes) {
  // On a machine without a GPU (or a build without CUDA) the query fails
  // with a reason; with GPUs it lists at least one.
  llvm::Expected<std::vector<GpuProperties>> gpus = queryGpus();
  if (!gpus) {
    std::string message = llvm::toString(gpus.takeError());
    EXPECT_EQ(message.rfind("no CUDA device", 0), 0u) << message;
  } else {
    EXPECT_FALSE(gpus->empty());
    EXPECT_GT((*gpus)[0].memoryBytes, 0u);
  }
}

} // namespace
