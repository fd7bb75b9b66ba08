//===- mixed_pipe_scaling.cpp - How Mixed-Pipe's time grows -----*- C++ -*-===//
//
// Runs the whole Mixed-Pipe (packing for L in {P, 2P, 3P, 4P}, paired runs
// for L in {5P, 6P, 8P}) on random graphs of 1k to 100k ops, prints one table
// (time per phase, objective, ratio to the lower bound, imbalance) and the
// growth exponent of the total time fitted by least squares on log(time)
// against log(ops). Every plan is re-verified.
// Not a test: figures depend on the machine.
//
// Usage: ftpipe-bench-scaling [layered|wide|chain] [max-ops] [devices]
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Verify.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ftpipe::partition;

int main(int argc, char **argv) {
  std::string familyName = argc > 1 ? argv[1] : "layered";
  uint32_t maxOps = argc > 2 ? uint32_t(std::atoi(argv[2])) : 100000;
  uint32_t devices = argc > 3 ? uint32_t(std::atoi(argv[3])) : 8;
  GraphFamily family = familyName == "wide"    ? GraphFamily::Wide
                       : familyName == "chain" ? GraphFamily::Chain
                                               : GraphFamily::Layered;

  // The default testbed's devices and links, with memory large enough that
  // every size fits: this measures time, not feasibility.
  llvm::Expected<Hardware> preset =
      getHardwarePreset(defaultHardwarePresetName());
  if (!preset) {
    llvm::errs() << llvm::toString(preset.takeError()) << "\n";
    return 1;
  }
  HardwareSpec spec = preset->spec();
  if (devices > spec.devices.size())
    devices = spec.devices.size();
  spec.devices.resize(devices);
  for (Device &d : spec.devices)
    d.memoryBytes = uint64_t(1) << 50;
  llvm::Expected<Hardware> hw = Hardware::create(spec);
  if (!hw) {
    llvm::errs() << llvm::toString(hw.takeError()) << "\n";
    return 1;
  }

  llvm::outs() << llvm::formatv(
      "Mixed-Pipe scaling: family {0}, P = {1} ({2} links, memory unbounded), "
      "L in {{P, 2P, 3P, 4P} (packing) and {{5P, 6P, 8P} (paired runs)\n",
      familyName, devices, preset->name());
  llvm::outs() << llvm::formatv("{0,8} {1,10} {2,10} {3,10} {4,10} {5,11} "
                                "{6,9} {7,9} {8,4} {9}\n",
                                "ops", "coarsen_s", "assign_s", "refine_s",
                                "total_s", "async_ms", "/bound", "imbal", "L",
                                "verified");
  std::vector<double> logN, logT;
  for (uint32_t n : {1000u, 2000u, 5000u, 10000u, 20000u, 50000u, 100000u}) {
    if (n > maxOps)
      break;
    RandomGraphOptions o;
    o.family = family;
    o.numNodes = n;
    o.seed = 1;
    llvm::Expected<Graph> g = generateRandomGraph(o);
    if (!g) {
      llvm::errs() << llvm::toString(g.takeError()) << "\n";
      return 1;
    }
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<MixedPipeResult> r = runMixedPipe(*g, *hw);
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!r) {
      llvm::errs() << llvm::toString(r.takeError()) << "\n";
      return 1;
    }
    MixedPipeConfig defaults;
    llvm::Error err = verifyPlan(*g, *hw, r->plan, defaults.objective);
    std::string verified = err ? llvm::toString(std::move(err)) : "yes";
    llvm::outs() << llvm::formatv(
        "{0,8} {1,10:F3} {2,10:F3} {3,10:F3} {4,10:F3} {5,11:F2} {6,9:F3} "
        "{7,9:F3} {8,4} {9}\n",
        n, r->times.coarsenSec, r->times.assignSec, r->times.refineSec, wall,
        r->metrics.asyncMsPerMicroBatch,
        r->metrics.asyncMsPerMicroBatch / r->metrics.lowerBoundMs,
        r->metrics.imbalance, r->numBlocks, verified);
    llvm::outs().flush();
    logN.push_back(std::log(double(n)));
    logT.push_back(std::log(std::max(wall, 1e-6)));
  }
  if (logN.size() >= 2) {
    double mx = 0, my = 0;
    for (size_t i = 0; i < logN.size(); ++i) {
      mx += logN[i];
      my += logT[i];
    }
    mx /= logN.size();
    my /= logN.size();
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < logN.size(); ++i) {
      sxy += (logN[i] - mx) * (logT[i] - my);
      sxx += (logN[i] - mx) * (logN[i] - mx);
    }
    llvm::outs() << llvm::formatv(
        "fitted growth: time ~ ops^{0:F2} (least squares on log-log, "
        "{1} sizes)\n",
        sxy / sxx, logN.size());
  }
  return 0;
}
