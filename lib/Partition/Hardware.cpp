//===- Hardware.cpp - Cluster descriptions and presets ------------------===//
//
// Validation of hardware descriptions, the embedded presets with the sources
// of every number, and the cluster JSON format.
//
// How the sustained figures are chosen (the same rule for every preset, so
// presets compare fairly and nothing is tuned to a model):
//  - kComputeEfficiency = 0.70 of the datasheet FP32 peak. cuBLAS SGEMM
//    reaches roughly 80-90% of peak on large square matrices; the GEMMs of a
//    fine-tuning micro-batch are smaller and boards throttle below their
//    boost clock under sustained load, so we take 70% for whole layers.
//    This is an engineering estimate, not a measurement on these boards.
//  - kMemoryEfficiency = 0.80 of the datasheet memory bandwidth: device-to-
//    device copy and STREAM-style kernels typically reach 80-90% of peak.
//  - kLaunchUs = 5 us per kernel: the usual order of CUDA launch overhead
//    seen by frameworks (3-10 us); again an estimate.
//  - kLinkEfficiency = 0.90 of the theoretical NVLink per-direction rate
//    (NVIDIA's p2pBandwidthLatencyTest typically reports about 90%).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Hardware.h"

#include "FTPipe/Support/BoundedInput.h"
#include "JSONFields.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ftpipe::partition;
namespace support = ftpipe::support;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

double Device::rooflineMs(double flops, double bytes) const {
  double computeMs = flops / (tflops * 1e9);
  double memoryMs = bytes / (memGBps * 1e6);
  return launchUs * 1e-3 + std::max(computeMs, memoryMs);
}

/// `x` in the shortest form (`%g`): limits such as 1e-3 and values such as
/// 5e-324 read as written.
static std::string num(double x) {
  return llvm::formatv("{0}", llvm::format("%g", x)).str();
}

static bool inRange(double x, double lo, double hi) {
  return x >= lo && x <= hi; // false for NaN
}
static bool validGBps(double x) { return inRange(x, kMinGBps, kMaxGBps); }
static bool validLatency(double x) { return inRange(x, 0.0, kMaxLatencyUs); }

Expected<Hardware> Hardware::create(HardwareSpec spec) {
  size_t p = spec.devices.size();
  if (p == 0)
    return makeError(llvm::formatv("hardware '{0}' has no devices", spec.name));
  if (p > kMaxDevices)
    return makeError(llvm::formatv("hardware '{0}' has {1} devices; at most "
                                   "{2} are supported",
                                   spec.name, p, kMaxDevices));
  for (size_t d = 0; d < p; ++d) {
    const Device &dev = spec.devices[d];
    if (dev.memoryBytes == 0 || dev.memoryBytes > kMaxDeviceMemoryBytes)
      return makeError(llvm::formatv("device {0} ('{1}'): memory_bytes must "
                                     "be in [1, {2}], got {3}",
                                     d, dev.name, kMaxDeviceMemoryBytes,
                                     dev.memoryBytes));
    if (!inRange(dev.tflops, kMinTflops, kMaxTflops))
      return makeError(llvm::formatv(
          "device {0} ('{1}'): tflops must be in [{2}, {3}], got {4}", d,
          dev.name, num(kMinTflops), num(kMaxTflops), num(dev.tflops)));
    if (!validGBps(dev.memGBps))
      return makeError(llvm::formatv(
          "device {0} ('{1}'): mem_gbps must be in [{2}, {3}], got {4}", d,
          dev.name, num(kMinGBps), num(kMaxGBps), num(dev.memGBps)));
    if (!validLatency(dev.launchUs))
      return makeError(llvm::formatv(
          "device {0} ('{1}'): launch_us must be in [0, {2}], got {3}", d,
          dev.name, num(kMaxLatencyUs), num(dev.launchUs)));
  }
  Hardware hw;
  hw.table.assign(p * p, LinkParams{});
  std::vector<char> explicitLink(p * p, 0);
  for (size_t i = 0; i < spec.links.size(); ++i) {
    const Link &l = spec.links[i];
    if (l.src >= p || l.dst >= p)
      return makeError(llvm::formatv(
          "link {0} connects devices {1} -> {2}, but only {3} devices exist", i,
          l.src, l.dst, p));
    if (l.src == l.dst)
      return makeError(
          llvm::formatv("link {0} connects device {1} to itself", i, l.src));
    if (!validGBps(l.GBps) || !validLatency(l.latencyUs))
      return makeError(llvm::formatv(
          "link {0} ({1} -> {2}): bandwidth must be in [{5}, {6}] GB/s and "
          "latency in [0, {7}] us, got {3} GB/s and {4} us",
          i, l.src, l.dst, num(l.GBps), num(l.latencyUs), num(kMinGBps),
          num(kMaxGBps), num(kMaxLatencyUs)));
    size_t idx = size_t(l.src) * p + l.dst;
    if (explicitLink[idx] == 2)
      return makeError(llvm::formatv("link {0} ({1} -> {2}) is listed twice", i,
                                     l.src, l.dst));
    explicitLink[idx] = 2;
    hw.table[idx] = {l.GBps, l.latencyUs};
  }
  // A link also serves the reverse direction unless that one is explicit.
  for (const Link &l : spec.links) {
    size_t rev = size_t(l.dst) * p + l.src;
    if (explicitLink[rev] == 0) {
      explicitLink[rev] = 1;
      hw.table[rev] = {l.GBps, l.latencyUs};
    }
  }
  for (size_t a = 0; a < p; ++a) {
    for (size_t b = 0; b < p; ++b) {
      if (a == b || explicitLink[a * p + b])
        continue;
      bool same = spec.devices[a].node == spec.devices[b].node;
      const LinkParams &def = same ? spec.intraNode : spec.network;
      if (!validGBps(def.GBps) || !validLatency(def.latencyUs))
        return makeError(llvm::formatv(
            "devices {0} and {1} have no explicit link and the default {2} "
            "link is unset or out of range (bandwidth {3} GB/s, latency {4} "
            "us)",
            a, b, same ? "intra-node" : "network", num(def.GBps),
            num(def.latencyUs)));
      hw.table[a * p + b] = def;
    }
  }
  hw.hwSpec = std::move(spec);
  return std::move(hw);
}

Expected<Hardware> Hardware::firstDevices(size_t count) const {
  if (count == 0 || count > numDevices())
    return makeError(llvm::formatv(
        "cannot take {0} devices of hardware '{1}', which has {2}", count,
        name(), numDevices()));
  std::vector<DeviceId> first(count);
  std::iota(first.begin(), first.end(), DeviceId(0));
  return selectDevices(first);
}

Expected<Hardware>
Hardware::selectDevices(llvm::ArrayRef<DeviceId> devices) const {
  std::vector<int64_t> index(numDevices(), -1);
  for (auto [i, d] : llvm::enumerate(devices)) {
    if (d >= numDevices())
      return makeError(llvm::formatv(
          "cannot take device {0} of hardware '{1}', which has {2}", d, name(),
          numDevices()));
    if (index[d] >= 0)
      return makeError(llvm::formatv(
          "cannot take device {0} of hardware '{1}' twice", d, name()));
    index[d] = int64_t(i);
  }
  if (devices.empty())
    return makeError(
        llvm::formatv("cannot take no devices of hardware '{0}'", name()));
  HardwareSpec spec = hwSpec;
  spec.devices.clear();
  for (DeviceId d : devices)
    spec.devices.push_back(hwSpec.devices[d]);
  std::vector<Link> links;
  for (Link link : hwSpec.links)
    if (index[link.src] >= 0 && index[link.dst] >= 0) {
      link.src = DeviceId(index[link.src]);
      link.dst = DeviceId(index[link.dst]);
      links.push_back(link);
    }
  spec.links = std::move(links);
  return create(std::move(spec));
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

static constexpr double kComputeEfficiency = 0.70;
static constexpr double kMemoryEfficiency = 0.80;
static constexpr double kLaunchUs = 5.0;
static constexpr double kLinkEfficiency = 0.90;
static constexpr uint64_t kGiB = 1ull << 30;

Device ftpipe::partition::sustainedDevice(llvm::StringRef name,
                                          uint64_t memoryBytes,
                                          double peakTflops, double peakGBps,
                                          uint32_t node) {
  Device d;
  d.name = name.str();
  d.memoryBytes = memoryBytes;
  d.tflops = peakTflops * kComputeEfficiency;
  d.memGBps = peakGBps * kMemoryEfficiency;
  d.launchUs = kLaunchUs;
  d.node = node;
  return d;
}

static HardwareSpec uniformNode(llvm::StringRef name, llvm::StringRef devName,
                                unsigned count, uint64_t memoryBytes,
                                double peakTflops, double peakGBps) {
  HardwareSpec spec;
  spec.name = name.str();
  spec.dtype = "fp32";
  for (unsigned i = 0; i < count; ++i) {
    spec.devices.push_back(
        sustainedDevice((devName + ":" + llvm::Twine(i)).str(), memoryBytes,
                        peakTflops, peakGBps));
  }
  return spec;
}

/// FTPipe's testbed (Eliad et al., ATC'21, Sec. 6): 8x GeForce RTX 2080 Ti in
/// one server, PCIe 3.0, no peer-to-peer, measured about 12 GB/s between
/// GPUs through the host.
///  - Memory 11 GB GDDR6 (NVIDIA product page: 11 GB; 11264 MiB as reported
///    by nvidia-smi), used whole; the caller may lower it for a reserve.
///  - FP32 peak 13.45 TFLOP/s = 4352 CUDA cores x 2 x 1545 MHz boost
///    (NVIDIA Turing architecture whitepaper, reference boost clock).
///  - Memory bandwidth 616 GB/s (352-bit GDDR6 at 14 Gbps; whitepaper).
///  - GPU to GPU: 12 GB/s as FTPipe reports for its testbed (PCIe 3.0 x16
///    is 15.75 GB/s raw; staging through host memory costs the rest), and
///    latency 20 us: two copies through host memory plus synchronisation.
///    An estimate of the order of magnitude, not a measurement.
///  - Network (only used by JSON clusters that extend this preset): 10 GbE,
///    1.25 GB/s, 50 us.
static HardwareSpec rtx2080tiPcie() {
  HardwareSpec spec =
      uniformNode("rtx2080ti-pcie-x8", "RTX2080Ti", 8, 11 * kGiB, 13.45, 616.0);
  spec.intraNode = {12.0, 20.0};
  spec.network = {1.25, 50.0};
  return spec;
}

/// DGX-1 with V100 (NVIDIA DGX-1 System Architecture whitepaper, 2017):
/// 8x Tesla V100 SXM2 16 GB in a hybrid cube-mesh of NVLink 2.0.
///  - FP32 peak 15.7 TFLOP/s, HBM2 900 GB/s, 16 GB (V100 datasheet).
///  - Each NVLink 2.0 link carries 25 GB/s per direction; each GPU has six,
///    to four peers with one or two links each (the `nvidia-smi topo -m`
///    matrix of a DGX-1V, encoded below). We take 90% of that.
///  - Pairs without NVLink go through PCIe and the CPUs' QPI: 10 GB/s,
///    25 us (estimate; PCIe 3.0 x16 is 15.75 GB/s raw, lower across QPI).
///  - Latency over NVLink: 10 us for a NCCL point-to-point (estimate).
///  - Network: 4x 100 Gb/s InfiniBand EDR per DGX-1, i.e. 12.5 GB/s per
///    port; 5 us (estimate).
static HardwareSpec v100Nvlink() {
  HardwareSpec spec = uniformNode("v100-nvlink-x8", "V100-SXM2-16GB", 8,
                                  16 * kGiB, 15.7, 900.0);
  spec.intraNode = {10.0, 25.0};
  spec.network = {12.5, 5.0};
  // Number of NVLinks between GPU pairs (upper triangle), DGX-1V.
  static const int kLinks[8][8] = {
      {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
      {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
      {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
      {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
  for (DeviceId a = 0; a < 8; ++a)
    for (DeviceId b = a + 1; b < 8; ++b)
      if (kLinks[a][b] > 0)
        spec.links.push_back(
            {a, b, 25.0 * kLinks[a][b] * kLinkEfficiency, 10.0});
  return spec;
}

/// DGX A100 (NVIDIA DGX A100 System Architecture whitepaper, 2020): 8x A100
/// SXM4 40 GB, every pair through NVSwitch.
///  - FP32 peak 19.5 TFLOP/s (without TF32 tensor cores, so the preset
///    stays fp32 like the others), HBM2 1555 GB/s, 40 GB (A100 datasheet).
///  - NVLink 3: 600 GB/s bidirectional per GPU = 300 GB/s per direction;
///    we take 90%. Latency 10 us (estimate for NCCL point-to-point).
///  - Network: one 200 Gb/s HDR InfiniBand port per GPU = 25 GB/s; 5 us.
static HardwareSpec a100Nvlink() {
  HardwareSpec spec = uniformNode("a100-40g-nvlink-x8", "A100-SXM4-40GB", 8,
                                  40 * kGiB, 19.5, 1555.0);
  spec.intraNode = {300.0 * kLinkEfficiency, 10.0};
  spec.network = {25.0, 5.0};
  return spec;
}

/// DGX H100 (NVIDIA H100 Tensor Core GPU datasheet and DGX H100 user
/// guide): 8x H100 SXM5 80 GB, every pair through NVSwitch.
///  - FP32 peak 67 TFLOP/s (non-tensor), HBM3 3.35 TB/s, 80 GB.
///  - NVLink 4: 900 GB/s bidirectional per GPU = 450 GB/s per direction;
///    we take 90%. Latency 10 us (estimate).
///  - Network: one 400 Gb/s NDR InfiniBand port per GPU = 50 GB/s; 5 us.
static HardwareSpec h100Nvlink() {
  HardwareSpec spec = uniformNode("h100-80g-nvlink-x8", "H100-SXM5-80GB", 8,
                                  80 * kGiB, 67.0, 3350.0);
  spec.intraNode = {450.0 * kLinkEfficiency, 10.0};
  spec.network = {50.0, 5.0};
  return spec;
}

static const llvm::StringRef kPresetNames[] = {
    "rtx2080ti-pcie-x8", "v100-nvlink-x8", "a100-40g-nvlink-x8",
    "h100-80g-nvlink-x8"};

llvm::StringRef ftpipe::partition::defaultHardwarePresetName() {
  return kPresetNames[0];
}

llvm::ArrayRef<llvm::StringRef> ftpipe::partition::hardwarePresetNames() {
  return kPresetNames;
}

Expected<Hardware> ftpipe::partition::getHardwarePreset(llvm::StringRef name) {
  if (name == "rtx2080ti-pcie-x8")
    return Hardware::create(rtx2080tiPcie());
  if (name == "v100-nvlink-x8")
    return Hardware::create(v100Nvlink());
  if (name == "a100-40g-nvlink-x8")
    return Hardware::create(a100Nvlink());
  if (name == "h100-80g-nvlink-x8")
    return Hardware::create(h100Nvlink());
  std::string known;
  for (llvm::StringRef n : kPresetNames)
    known += (known.empty() ? "" : ", ") + n.str();
  return makeError(
      llvm::formatv("unknown hardware preset '{0}' (known: {1})", name, known));
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
/// Small helper over llvm::json::Path that turns the first problem into an
/// llvm::Error with the path.
struct Reader {
  llvm::json::Path::Root root{"hardware"};

  Error error() {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << llvm::toString(root.getError());
    return makeError(msg);
  }
};
} // namespace

static bool readLinkParams(const llvm::json::Object &obj, llvm::StringRef key,
                           LinkParams &out, llvm::json::Path path) {
  const llvm::json::Value *v = obj.get(key);
  if (!v)
    return true;
  const llvm::json::Object *o = v->getAsObject();
  if (!o) {
    path.field(key).report("expected an object");
    return false;
  }
  llvm::json::Path p = path.field(key);
  return detail::readNumber(*o, "gbps", out.GBps, p, true) &&
         detail::readNumber(*o, "latency_us", out.latencyUs, p, true);
}

Expected<Hardware>
ftpipe::partition::hardwareFromJSON(const llvm::json::Value &json) {
  Reader r;
  llvm::json::Path path(r.root);
  const llvm::json::Object *obj = json.getAsObject();
  if (!obj) {
    path.report("expected an object");
    return r.error();
  }
  HardwareSpec spec;
  // A cluster may start from a preset and override fields.
  if (std::optional<llvm::StringRef> base = obj->getString("base")) {
    Expected<Hardware> preset = getHardwarePreset(*base);
    if (!preset)
      return preset.takeError();
    spec = preset->spec();
  }
  if (std::optional<llvm::StringRef> name = obj->getString("name"))
    spec.name = name->str();
  if (std::optional<llvm::StringRef> dtype = obj->getString("dtype"))
    spec.dtype = dtype->str();
  if (!readLinkParams(*obj, "intra_node", spec.intraNode, path) ||
      !readLinkParams(*obj, "network", spec.network, path))
    return r.error();

  if (const llvm::json::Value *devs = obj->get("devices")) {
    const llvm::json::Array *arr = devs->getAsArray();
    llvm::json::Path dp = path.field("devices");
    if (!arr) {
      dp.report("expected an array");
      return r.error();
    }
    spec.devices.clear();
    spec.links.clear();
    if (arr->size() > kMaxDevices) {
      static_assert(kMaxDevices == 256, "update the message");
      dp.report("more than 256 devices");
      return r.error();
    }
    for (size_t i = 0; i < arr->size(); ++i) {
      llvm::json::Path ep = dp.index(i);
      const llvm::json::Object *d = (*arr)[i].getAsObject();
      if (!d) {
        ep.report("expected an object");
        return r.error();
      }
      Device dev;
      uint64_t count = 1, node = 0;
      if (std::optional<llvm::StringRef> n = d->getString("name"))
        dev.name = n->str();
      if (!detail::readUnsigned(*d, "memory_bytes", dev.memoryBytes, ep,
                                true) ||
          !detail::readNumber(*d, "tflops", dev.tflops, ep, true) ||
          !detail::readNumber(*d, "mem_gbps", dev.memGBps, ep, true) ||
          !detail::readNumber(*d, "launch_us", dev.launchUs, ep, false) ||
          !detail::readUnsigned(*d, "node", node, ep, false) ||
          !detail::readUnsigned(*d, "count", count, ep, false))
        return r.error();
      if (count == 0 || count > kMaxDevices - spec.devices.size()) {
        static_assert(kMaxDevices == 256, "update the message");
        ep.field("count").report("expected at least 1, and at most 256 "
                                 "devices in all");
        return r.error();
      }
      dev.node = uint32_t(node);
      std::string base = dev.name;
      for (uint64_t c = 0; c < count; ++c) {
        if (count > 1)
          dev.name = (base + ":" + llvm::Twine(c)).str();
        spec.devices.push_back(dev);
      }
    }
  }
  if (const llvm::json::Value *cores = obj->get("node_cores")) {
    const llvm::json::Array *arr = cores->getAsArray();
    llvm::json::Path cp = path.field("node_cores");
    if (!arr) {
      cp.report("expected an array");
      return r.error();
    }
    spec.nodeCores.clear();
    for (size_t i = 0; i < arr->size(); ++i) {
      std::optional<int64_t> n = (*arr)[i].getAsInteger();
      if (!n || *n < 0 || *n > int64_t(kMaxDevices)) {
        static_assert(kMaxDevices == 256, "update the message");
        cp.index(i).report("expected an integer in [0, 256]");
        return r.error();
      }
      spec.nodeCores.push_back(uint32_t(*n));
    }
  }
  if (const llvm::json::Value *links = obj->get("links")) {
    const llvm::json::Array *arr = links->getAsArray();
    llvm::json::Path lp = path.field("links");
    if (!arr) {
      lp.report("expected an array");
      return r.error();
    }
    spec.links.clear();
    for (size_t i = 0; i < arr->size(); ++i) {
      llvm::json::Path ep = lp.index(i);
      const llvm::json::Object *l = (*arr)[i].getAsObject();
      if (!l) {
        ep.report("expected an object");
        return r.error();
      }
      uint64_t src = 0, dst = 0;
      Link link;
      if (!detail::readUnsigned(*l, "src", src, ep, true) ||
          !detail::readUnsigned(*l, "dst", dst, ep, true) ||
          !detail::readNumber(*l, "gbps", link.GBps, ep, true) ||
          !detail::readNumber(*l, "latency_us", link.latencyUs, ep, true))
        return r.error();
      if (src > UINT32_MAX || dst > UINT32_MAX) {
        ep.report("device id out of range");
        return r.error();
      }
      link.src = DeviceId(src);
      link.dst = DeviceId(dst);
      spec.links.push_back(link);
    }
  }
  Expected<Hardware> hw = Hardware::create(std::move(spec));
  if (!hw)
    return makeError("hardware: " + llvm::toString(hw.takeError()));
  return hw;
}

llvm::json::Value ftpipe::partition::hardwareToJSON(const Hardware &hw) {
  const HardwareSpec &spec = hw.spec();
  llvm::json::Array devices, links;
  for (const Device &d : spec.devices)
    devices.push_back(llvm::json::Object{{"name", d.name},
                                         {"memory_bytes", d.memoryBytes},
                                         {"tflops", d.tflops},
                                         {"mem_gbps", d.memGBps},
                                         {"launch_us", d.launchUs},
                                         {"node", int64_t(d.node)}});
  for (const Link &l : spec.links)
    links.push_back(llvm::json::Object{{"src", int64_t(l.src)},
                                       {"dst", int64_t(l.dst)},
                                       {"gbps", l.GBps},
                                       {"latency_us", l.latencyUs}});
  auto params = [](const LinkParams &p) {
    return llvm::json::Object{{"gbps", p.GBps}, {"latency_us", p.latencyUs}};
  };
  llvm::json::Object json{{"name", spec.name},
                          {"dtype", spec.dtype},
                          {"devices", std::move(devices)},
                          {"links", std::move(links)},
                          {"intra_node", params(spec.intraNode)},
                          {"network", params(spec.network)}};
  if (!spec.nodeCores.empty())
    json["node_cores"] = llvm::json::Array(spec.nodeCores);
  return json;
}

Expected<Hardware>
ftpipe::partition::loadHardware(llvm::StringRef pathOrPreset) {
  if (!llvm::sys::fs::exists(pathOrPreset) &&
      llvm::is_contained(hardwarePresetNames(), pathOrPreset))
    return getHardwarePreset(pathOrPreset);
  Expected<std::unique_ptr<llvm::MemoryBuffer>> text = support::readBoundedFile(
      pathOrPreset, "hardware file", support::kMaxInputFileBytes,
      support::FileKinds::RegularOrStream);
  if (!text)
    return makeError(llvm::toString(text.takeError()) +
                     " (and it is not a preset name)");
  Expected<llvm::json::Value> json =
      support::parseBoundedJSON((*text)->getBuffer());
  if (!json)
    return makeError(llvm::formatv("{0}: {1}", pathOrPreset,
                                   llvm::toString(json.takeError())));
  Expected<Hardware> hw = hardwareFromJSON(*json);
  if (!hw)
    return makeError(llvm::formatv("{0}: {1}", pathOrPreset,
                                   llvm::toString(hw.takeError())));
  return hw;
}
