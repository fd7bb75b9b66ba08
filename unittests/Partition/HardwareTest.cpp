//===- HardwareTest.cpp - Hardware presets and cluster JSON -----*- C++ -*-===//
//
// Presets must be sane (sizes and speeds in plausible ranges, the default is
// FTPipe's testbed), the JSON format must round-trip and reject bad input
// with the path of the bad field, and transfer times must follow
// bytes / bandwidth + latency.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Hardware.h"

#include "gtest/gtest.h"

using namespace ftpipe::partition;

namespace {

TEST(Hardware, PresetsAreSane) {
  for (llvm::StringRef name : hardwarePresetNames()) {
    llvm::Expected<Hardware> hw = getHardwarePreset(name);
    ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->name(), name);
    EXPECT_EQ(hw->numDevices(), 8u);
    for (const Device &d : hw->devices()) {
      EXPECT_GE(d.memoryBytes, 10ull << 30);
      EXPECT_LE(d.memoryBytes, 80ull << 30);
      EXPECT_GT(d.tflops, 5.0);
      EXPECT_LT(d.tflops, 70.0);
      EXPECT_GT(d.memGBps, 400.0);
    }
    for (DeviceId a = 0; a < 8; ++a)
      for (DeviceId b = 0; b < 8; ++b)
        if (a != b) {
          EXPECT_GT(hw->link(a, b).GBps, 1.0);
          EXPECT_GT(hw->transferMs(1 << 20, a, b), 0.0);
        }
  }
}

TEST(Hardware, DefaultIsFTPipeTestbed) {
  llvm::Expected<Hardware> hw = getHardwarePreset(defaultHardwarePresetName());
  ASSERT_TRUE(bool(hw));
  EXPECT_EQ(hw->name(), "rtx2080ti-pcie-x8");
  EXPECT_EQ(hw->device(0).memoryBytes, 11ull << 30);
  EXPECT_DOUBLE_EQ(hw->link(0, 7).GBps, 12.0);
  // 12 MB at 12 GB/s = 1 ms, plus 20 us latency.
  EXPECT_NEAR(hw->transferMs(12'000'000, 0, 7), 1.02, 1e-9);
  EXPECT_EQ(hw->transferMs(12'000'000, 3, 3), 0.0);
}

TEST(Hardware, V100HasCubeMesh) {
  llvm::Expected<Hardware> hw = getHardwarePreset("v100-nvlink-x8");
  ASSERT_TRUE(bool(hw));
  EXPECT_NEAR(hw->link(0, 3).GBps, 45.0, 1e-9); // two NVLinks
  EXPECT_NEAR(hw->link(3, 0).GBps, 45.0, 1e-9);
  EXPECT_NEAR(hw->link(0, 1).GBps, 22.5, 1e-9); // one NVLink
  EXPECT_NEAR(hw->link(0, 5).GBps, 10.0, 1e-9); // through the CPUs
}

TEST(Hardware, UnknownPresetListsNames) {
  llvm::Expected<Hardware> hw = getHardwarePreset("tpu");
  ASSERT_FALSE(bool(hw));
  std::string err = llvm::toString(hw.takeError());
  EXPECT_NE(err.find("rtx2080ti-pcie-x8"), std::string::npos);
}

TEST(Hardware, JSONRoundTrip) {
  for (llvm::StringRef name : hardwarePresetNames()) {
    llvm::Expected<Hardware> hw = getHardwarePreset(name);
    ASSERT_TRUE(bool(hw));
    llvm::json::Value json = hardwareToJSON(*hw);
    llvm::Expected<Hardware> back = hardwareFromJSON(json);
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(hardwareToJSON(*back), json);
    for (DeviceId a = 0; a < 8; ++a)
      for (DeviceId b = 0; b < 8; ++b)
        EXPECT_EQ(back->transferMs(1000, a, b), hw->transferMs(1000, a, b));
  }
}

TEST(Hardware, HeterogeneousMultiNodeCluster) {
  const char *text = R"({
    "name": "two-boxes",
    "intra_node": {"gbps": 20, "latency_us": 10},
    "network": {"gbps": 5, "latency_us": 50},
    "devices": [
      {"name": "big", "count": 2, "memory_bytes": 1000, "tflops": 10,
       "mem_gbps": 500, "node": 0},
      {"name": "small", "memory_bytes": 500, "tflops": 5, "mem_gbps": 300,
       "launch_us": 3, "node": 1}
    ],
    "links": [{"src": 0, "dst": 1, "gbps": 100, "latency_us": 1}]
  })";
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  ASSERT_TRUE(bool(json));
  llvm::Expected<Hardware> hw = hardwareFromJSON(*json);
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  ASSERT_EQ(hw->numDevices(), 3u);
  EXPECT_EQ(hw->device(1).name, "big:1");
  EXPECT_EQ(hw->device(2).memoryBytes, 500u);
  EXPECT_DOUBLE_EQ(hw->link(0, 1).GBps, 100.0);
  EXPECT_DOUBLE_EQ(hw->link(1, 0).GBps, 100.0); // reverse of explicit
  EXPECT_DOUBLE_EQ(hw->link(0, 2).GBps, 5.0);   // network
  EXPECT_DOUBLE_EQ(hw->link(2, 1).latencyUs, 50.0);
}

TEST(Hardware, PresetBaseWithOverride) {
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(R"({"base": "a100-40g-nvlink-x8", "name": "mine"})");
  ASSERT_TRUE(bool(json));
  llvm::Expected<Hardware> hw = hardwareFromJSON(*json);
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->name(), "mine");
  EXPECT_EQ(hw->numDevices(), 8u);
}

std::string parseError(const char *text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return "bad test json: " + llvm::toString(json.takeError());
  llvm::Expected<Hardware> hw = hardwareFromJSON(*json);
  if (hw)
    return "";
  return llvm::toString(hw.takeError());
}

TEST(Hardware, NodeCoresRoundTripAndRefusals) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(R"({
    "name": "cpu", "intra_node": {"gbps": 1, "latency_us": 20},
    "node_cores": [2],
    "devices": [{"name": "cpu", "count": 4, "memory_bytes": 1000,
                 "tflops": 0.05, "mem_gbps": 10, "node": 0}]})");
  ASSERT_TRUE(bool(json));
  llvm::Expected<Hardware> hw = hardwareFromJSON(*json);
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->nodeCores(0), 2u);
  EXPECT_EQ(hw->nodeCores(1), 0u); // no such node: every device its own
  llvm::Expected<Hardware> back = hardwareFromJSON(hardwareToJSON(*hw));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->spec().nodeCores, std::vector<uint32_t>{2});
  // Selecting devices keeps the nodes' cores.
  llvm::Expected<Hardware> two = hw->selectDevices({1, 3});
  ASSERT_TRUE(bool(two));
  EXPECT_EQ(two->nodeCores(0), 2u);
  // Presets leave it out.
  EXPECT_EQ(hardwareToJSON(*getHardwarePreset("v100-nvlink-x8"))
                .getAsObject()
                ->get("node_cores"),
            nullptr);
  EXPECT_NE(parseError(R"({"devices": [{"memory_bytes": 1, "tflops": 1,
                          "mem_gbps": 1}], "node_cores": [-1]})")
                .find("node_cores[0]"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"devices": [{"memory_bytes": 1, "tflops": 1,
                          "mem_gbps": 1}], "node_cores": 2})")
                .find("node_cores"),
            std::string::npos);
}

TEST(Hardware, JSONErrorsNameTheField) {
  EXPECT_NE(parseError(R"({"devices": [{"memory_bytes": 1, "tflops": "x",
                          "mem_gbps": 1}]})")
                .find("tflops"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"devices": [{"tflops": 1, "mem_gbps": 1}]})")
                .find("memory_bytes"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"devices": []})").find("no devices"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"devices": [{"memory_bytes": 1, "tflops": 1,
                    "mem_gbps": 1, "count": 2}],
                    "links": [{"src": 0, "dst": 5, "gbps": 1,
                    "latency_us": 0}]})")
                .find("only 2 devices"),
            std::string::npos);
  // Two devices, no link, no default: the missing default is named.
  EXPECT_NE(parseError(R"({"devices": [{"memory_bytes": 1, "tflops": 1,
                          "mem_gbps": 1, "count": 2}]})")
                .find("intra-node"),
            std::string::npos);
  EXPECT_NE(parseError("[1]").find("expected an object"), std::string::npos);
}

TEST(Hardware, RejectsBadLinks) {
  HardwareSpec spec;
  spec.devices.assign(2, Device{"d", 1, 1.0, 1.0, 0.0, 0});
  spec.intraNode = {1.0, 0.0};
  spec.links = {{0, 0, 1.0, 0.0}};
  llvm::Expected<Hardware> self = Hardware::create(spec);
  ASSERT_FALSE(bool(self));
  EXPECT_NE(llvm::toString(self.takeError()).find("to itself"),
            std::string::npos);
  spec.links = {{0, 1, 1.0, 0.0}, {0, 1, 2.0, 0.0}};
  llvm::Expected<Hardware> twice = Hardware::create(spec);
  ASSERT_FALSE(bool(twice));
  EXPECT_NE(llvm::toString(twice.takeError()).find("listed twice"),
            std::string::npos);
  spec.links = {{0, 1, 0.0, 0.0}};
  llvm::Expected<Hardware> zero = Hardware::create(spec);
  ASSERT_FALSE(bool(zero));
  EXPECT_NE(llvm::toString(zero.takeError()).find("bandwidth must be"),
            std::string::npos);
  // Both directions listed: each keeps its own figures.
  spec.links = {{0, 1, 1.0, 0.0}, {1, 0, 4.0, 0.0}};
  llvm::Expected<Hardware> both = Hardware::create(spec);
  ASSERT_TRUE(bool(both));
  EXPECT_EQ(both->link(0, 1).GBps, 1.0);
  EXPECT_EQ(both->link(1, 0).GBps, 4.0);
}

TEST(Hardware, LoadByPresetNameOrFile) {
  llvm::Expected<Hardware> preset = loadHardware("h100-80g-nvlink-x8");
  ASSERT_TRUE(bool(preset)) << llvm::toString(preset.takeError());
  EXPECT_EQ(preset->name(), "h100-80g-nvlink-x8");
  llvm::Expected<Hardware> missing = loadHardware("/nonexistent/hw.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("not a preset name"),
            std::string::npos);
}

TEST(Hardware, FirstDevices) {
  llvm::Expected<Hardware> hw = getHardwarePreset("v100-nvlink-x8");
  ASSERT_TRUE(bool(hw));
  llvm::Expected<Hardware> four = hw->firstDevices(4);
  ASSERT_TRUE(bool(four));
  EXPECT_EQ(four->numDevices(), 4u);
  EXPECT_EQ(four->link(0, 3).GBps, hw->link(0, 3).GBps);
  llvm::Expected<Hardware> none = hw->firstDevices(9);
  EXPECT_FALSE(bool(none));
  llvm::consumeError(none.takeError());
}

TEST(Device, Roofline) {
  Device d;
  d.tflops = 10;   // 1e10 flop/ms
  d.memGBps = 100; // 1e8 B/ms
  d.launchUs = 5;
  EXPECT_NEAR(d.rooflineMs(1e10, 1e6), 1.005, 1e-12);
  EXPECT_NEAR(d.rooflineMs(1e6, 1e8), 1.005, 1e-12);
}

} // namespace
