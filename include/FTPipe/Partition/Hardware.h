//===- Hardware.h - Devices, links and cluster presets ----------*- C++ -*-===//
//
// What a plan runs on: devices (memory, sustained compute and memory speed,
// kernel launch overhead, the machine they sit in) and the links between them
// (bandwidth and latency). Described by a plain, editable HardwareSpec; a
// Hardware is a validated spec with a dense device-by-device link table, so
// transferMs is O(1) in the partitioner's inner loops.
//
// Presets (documented with sources in Hardware.cpp and docs/Partition.md):
// `rtx2080ti-pcie-x8` (default; FTPipe's testbed), `v100-nvlink-x8`,
// `a100-40g-nvlink-x8`, `h100-80g-nvlink-x8`. Any other cluster is a JSON file.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_HARDWARE_H
#define FTPIPE_PARTITION_HARDWARE_H

#include "FTPipe/Partition/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// One accelerator. Speeds are sustained figures (what real kernels reach),
/// not datasheet peaks; the presets say how each was derived.
/// The ranges a hardware description must keep to (Hardware::create checks
/// them): wide enough for any real device or link, narrow enough that every
/// time and byte sum the partitioner forms stays finite and exact enough.
inline constexpr size_t kMaxDevices = 256;
inline constexpr uint64_t kMaxDeviceMemoryBytes = uint64_t(1) << 50; // 1 PiB
inline constexpr double kMinTflops = 1e-3, kMaxTflops = 1e15;
inline constexpr double kMinGBps = 1e-3, kMaxGBps = 1e15;
inline constexpr double kMaxLatencyUs = 1e6; // launch and link latency

struct Device {
  std::string name;
  /// Memory the partitioner may fill, in bytes.
  uint64_t memoryBytes = 0;
  /// Sustained arithmetic rate in TFLOP/s for the spec's dtype.
  double tflops = 0.0;
  /// Sustained device-memory bandwidth in GB/s (1 GB = 1e9 bytes).
  double memGBps = 0.0;
  /// Fixed cost of launching one kernel, in microseconds.
  double launchUs = 0.0;
  /// Machine (host) the device sits in; devices on different machines talk
  /// over the network unless a link says otherwise.
  uint32_t node = 0;

  /// Roofline time of one kernel: launch overhead plus the larger of compute
  /// time at `tflops` and memory time at `memGBps`.
  double rooflineMs(double flops, double bytes) const;
};

/// A device from datasheet peaks, with the sustained efficiencies every
/// preset uses (70 % of peak FLOP/s, 80 % of peak bandwidth, 5 us launch;
/// Hardware.cpp gives the sources), so devices described from a datasheet or
/// detected on a machine compare fairly with the presets.
Device sustainedDevice(llvm::StringRef name, uint64_t memoryBytes,
                       double peakTflops, double peakGBps, uint32_t node = 0);

/// A directed link between two devices. Transfer time of b bytes is
/// b / (GBps * 1e9) s + latencyUs.
struct Link {
  DeviceId src = 0;
  DeviceId dst = 0;
  double GBps = 0.0;
  double latencyUs = 0.0;
};

/// Bandwidth and latency of a class of connection.
struct LinkParams {
  double GBps = 0.0;
  double latencyUs = 0.0;
};

/// Editable description of a cluster. Explicit links override the defaults:
/// devices on the same machine use `intraNode`, devices on different machines
/// use `network`.
struct HardwareSpec {
  std::string name;
  /// What `tflops` refers to (e.g. "fp32").
  std::string dtype = "fp32";
  std::vector<Device> devices;
  /// Explicit links; a link also applies in the reverse direction unless the
  /// reverse is listed too.
  std::vector<Link> links;
  LinkParams intraNode;
  LinkParams network;
  /// Per node (by Device::node), how many of its devices can compute at
  /// once: processes sharing a CPU's cores (4 MPI processes on 2 cores: 2).
  /// 0, or a node past the end: every device its own (GPUs). The replica
  /// search bounds a node's mini-batch by its devices' work over its cores.
  std::vector<uint32_t> nodeCores;
};

/// A validated HardwareSpec with a dense link table.
class Hardware {
public:
  Hardware() = default;

  /// Validates `spec`: at least one device; memory, tflops and memGBps
  /// positive and finite; launchUs non-negative; every link names existing,
  /// distinct devices with positive bandwidth and non-negative latency; the
  /// defaults are positive whenever some device pair needs them.
  static llvm::Expected<Hardware> create(HardwareSpec spec);

  /// The validated description (copy it to derive a variant).
  const HardwareSpec &spec() const { return hwSpec; }
  /// Preset or cluster name.
  llvm::StringRef name() const { return hwSpec.name; }
  /// Number of devices (P).
  size_t numDevices() const { return hwSpec.devices.size(); }
  /// Device d (0 <= d < numDevices()).
  const Device &device(DeviceId d) const { return hwSpec.devices[d]; }
  /// All devices, indexed by DeviceId.
  llvm::ArrayRef<Device> devices() const { return hwSpec.devices; }

  /// How many devices of `node` can compute at once (HardwareSpec::nodeCores;
  /// 0: all of them).
  uint32_t nodeCores(uint32_t node) const {
    return node < hwSpec.nodeCores.size() ? hwSpec.nodeCores[node] : 0;
  }

  /// Link between two distinct devices (explicit, or the default class).
  const LinkParams &link(DeviceId from, DeviceId to) const {
    return table[size_t(from) * numDevices() + to];
  }

  /// Time to move `bytes` from `from` to `to`, in ms: 0 when from == to (and
  /// when bytes == 0), else bytes / bandwidth + latency.
  double transferMs(uint64_t bytes, DeviceId from, DeviceId to) const {
    if (from == to || bytes == 0)
      return 0.0;
    const LinkParams &l = link(from, to);
    return double(bytes) / (l.GBps * 1e6) + l.latencyUs * 1e-3;
  }

  /// Returns a copy with only the first `count` devices (1 <= count <=
  /// numDevices()), e.g. to plan for P = 4 on an 8-GPU preset.
  llvm::Expected<Hardware> firstDevices(size_t count) const;
  /// Returns a copy with only `devices` (distinct ids), device i of the
  /// copy being devices[i], with the links between them.
  llvm::Expected<Hardware>
  selectDevices(llvm::ArrayRef<DeviceId> devices) const;

private:
  HardwareSpec hwSpec;
  std::vector<LinkParams> table;
};

/// Name of the default preset: "rtx2080ti-pcie-x8".
llvm::StringRef defaultHardwarePresetName();

/// Names of all embedded presets.
llvm::ArrayRef<llvm::StringRef> hardwarePresetNames();

/// Returns the preset called `name`, or an error listing the known names.
llvm::Expected<Hardware> getHardwarePreset(llvm::StringRef name);

/// Parses the cluster JSON format (docs/Partition.md). Errors name the path
/// of the bad field, e.g. "expected a number at hardware.devices[2].tflops".
llvm::Expected<Hardware> hardwareFromJSON(const llvm::json::Value &json);

/// Serializes to the format hardwareFromJSON reads (round-trips exactly).
llvm::json::Value hardwareToJSON(const Hardware &hardware);

/// Reads `path`: a JSON cluster file; or, when no such file exists and the
/// string is a preset name, that preset.
llvm::Expected<Hardware> loadHardware(llvm::StringRef pathOrPreset);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_HARDWARE_H
