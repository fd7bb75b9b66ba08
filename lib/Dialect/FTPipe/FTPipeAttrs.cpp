//===- FTPipeAttrs.cpp - ftpipe attributes ----------------------*- C++ -*-===//
//
// Parsing, printing and verification of the cost, hardware and plan
// attributes.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Schedule/Replicas.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace mlir::ftpipe;

FailureOr<F64> mlir::ftpipe::parseF64(AsmParser &parser) {
  // Hand-written hardware files say `gbps = 12`: accept integers too, which
  // AsmParser::parseFloat rejects.
  SMLoc loc = parser.getCurrentLocation();
  Attribute number;
  if (parser.parseAttribute(number))
    return failure();
  if (auto floatAttr = dyn_cast<FloatAttr>(number))
    return F64(floatAttr.getValueAsDouble());
  if (auto intAttr = dyn_cast<IntegerAttr>(number))
    return F64(static_cast<double>(intAttr.getValue().getSExtValue()));
  return parser.emitError(loc) << "expected a number, got " << number;
}

/// The shortest text of `value` in the printf `format` (which takes a
/// precision) that reads back as the same double.
static std::string shortestRoundTrip(const char *format, double value,
                                     int maxPrecision) {
  std::string text;
  for (int precision = 0; precision <= maxPrecision; ++precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), format, precision, value);
    text = buffer;
    if (std::strtod(text.c_str(), nullptr) == value)
      break;
  }
  return text;
}

std::string mlir::ftpipe::formatF64(double value) {
  std::string text = shortestRoundTrip("%.*g", value, 17);
  // Prefer plain decimals ("10.0", "0.0125") for everyday magnitudes.
  double magnitude = std::fabs(value);
  if (text.find_first_of("eE") != std::string::npos && magnitude >= 1e-4 &&
      magnitude < 1e15) {
    std::string fixed = shortestRoundTrip("%.*f", value, 24);
    if (std::strtod(fixed.c_str(), nullptr) == value)
      text = fixed;
  }
  // The MLIR lexer needs a '.' to see a float; it goes before any exponent.
  if (std::isfinite(value) && text.find('.') == std::string::npos) {
    size_t exponent = text.find_first_of("eE");
    text.insert(exponent == std::string::npos ? text.size() : exponent, ".0");
  }
  return text;
}

void mlir::ftpipe::printF64(AsmPrinter &printer, double value) {
  printer << formatF64(value);
}

#define GET_ATTRDEF_CLASSES
#include "FTPipe/Dialect/FTPipe/FTPipeAttrs.cpp.inc"

void FTPipeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "FTPipe/Dialect/FTPipe/FTPipeAttrs.cpp.inc"
      >();
}

/// Checks that a time or rate field is finite and not negative.
static LogicalResult checkNonNegative(function_ref<InFlightDiagnostic()> emit,
                                      StringRef field, double value) {
  if (!std::isfinite(value) || value < 0)
    return emit() << "'" << field << "' must be finite and non-negative, got "
                  << formatF64(value);
  return success();
}

/// Checks that a byte count or index is not negative.
static LogicalResult checkNonNegative(function_ref<InFlightDiagnostic()> emit,
                                      StringRef field, int64_t value) {
  if (value < 0)
    return emit() << "'" << field << "' must be non-negative, got " << value;
  return success();
}

LogicalResult CostAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               F64 fwdMs, F64 bwdMs, int64_t paramBytes,
                               int64_t actBytes, int64_t outBytes,
                               F64 bwdWeightMs) {
  if (bwdWeightMs > bwdMs)
    return emitError() << "'bwd_weight_ms' (" << formatF64(bwdWeightMs)
                       << ") must not exceed 'bwd_ms' (" << formatF64(bwdMs)
                       << ")";
  return success(
      succeeded(checkNonNegative(emitError, "fwd_ms", fwdMs)) &&
      succeeded(checkNonNegative(emitError, "bwd_ms", bwdMs)) &&
      succeeded(checkNonNegative(emitError, "bwd_weight_ms", bwdWeightMs)) &&
      succeeded(checkNonNegative(emitError, "param_bytes", paramBytes)) &&
      succeeded(checkNonNegative(emitError, "act_bytes", actBytes)) &&
      succeeded(checkNonNegative(emitError, "out_bytes", outBytes)));
}

LogicalResult
DeviceSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringRef name, int64_t memoryBytes, F64 tflops,
                       F64 memGbps, F64 launchUs, int64_t node) {
  if (memoryBytes <= 0)
    return emitError() << "device '" << name
                       << "' must have a positive 'memory_bytes', got "
                       << memoryBytes;
  if (!(tflops > 0) || !std::isfinite(tflops))
    return emitError() << "device '" << name
                       << "' must have a positive 'tflops', got "
                       << formatF64(tflops);
  if (!(memGbps > 0) || !std::isfinite(memGbps))
    return emitError() << "device '" << name
                       << "' must have a positive 'mem_gbps', got "
                       << formatF64(memGbps);
  return success(
      succeeded(checkNonNegative(emitError, "launch_us", launchUs)) &&
      succeeded(checkNonNegative(emitError, "node", node)));
}

LogicalResult LinkAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t src, int64_t dst, F64 gbps,
                               F64 latencyUs) {
  if (failed(checkNonNegative(emitError, "src", src)) ||
      failed(checkNonNegative(emitError, "dst", dst)) ||
      failed(checkNonNegative(emitError, "latency_us", latencyUs)))
    return failure();
  if (src == dst)
    return emitError() << "link joins device " << src << " to itself";
  if (!(gbps > 0) || !std::isfinite(gbps))
    return emitError() << "link " << src << " <-> " << dst
                       << " must have a positive 'gbps', got "
                       << formatF64(gbps);
  return success();
}

LogicalResult HardwareAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef name,
                                   ArrayRef<DeviceSpecAttr> devices,
                                   ArrayRef<LinkAttr> links,
                                   ArrayRef<int64_t> nodeCores) {
  int64_t numDevices = devices.size();
  if (numDevices == 0)
    return emitError() << "hardware '" << name << "' has no devices";
  for (int64_t cores : nodeCores)
    if (cores < 0 || cores > numDevices)
      return emitError() << "hardware '" << name << "': node_cores must be in "
                         << "[0, " << numDevices << "], got " << cores;
  llvm::DenseSet<std::pair<int64_t, int64_t>> seen;
  for (LinkAttr link : links) {
    if (link.getSrc() >= numDevices || link.getDst() >= numDevices)
      return emitError() << "link " << link.getSrc() << " <-> " << link.getDst()
                         << " names a device outside 0.." << numDevices - 1;
    std::pair<int64_t, int64_t> key(std::min(link.getSrc(), link.getDst()),
                                    std::max(link.getSrc(), link.getDst()));
    if (!seen.insert(key).second)
      return emitError() << "link " << key.first << " <-> " << key.second
                         << " is given twice";
  }
  return success();
}

FailureOr<SmallVector<bool>> mlir::ftpipe::parseBoolList(AsmParser &parser) {
  SmallVector<bool> values;
  // An empty list (`[]`) has no first word.
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalKeyword(&word)))
    return values;
  while (true) {
    if (word != "true" && word != "false")
      return parser.emitError(loc)
             << "expected 'true' or 'false', got '" << word << "'";
    values.push_back(word == "true");
    if (failed(parser.parseOptionalComma()))
      return values;
    loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&word))
      return failure();
  }
}

void mlir::ftpipe::printBoolList(AsmPrinter &printer, ArrayRef<bool> values) {
  llvm::interleaveComma(values, printer.getStream(),
                        [&](bool v) { printer << (v ? "true" : "false"); });
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               StringRef method, ArrayRef<int64_t> stageDevice,
                               F64 objectiveMs, ArrayRef<int64_t> memoryBytes,
                               F64 seconds, ArrayRef<bool> recompute,
                               ArrayRef<int64_t> replicas) {
  if (!replicas.empty() && replicas.size() != memoryBytes.size())
    return emitError() << "plan has " << memoryBytes.size()
                       << " devices but replicas has " << replicas.size()
                       << " entries";
  for (auto [device, count] : llvm::enumerate(replicas))
    if (count < 1 || count > ::ftpipe::schedule::ReplicaLayout::kMaxReplicas)
      return emitError() << "replicas of device " << device << " must be 1 to "
                         << ::ftpipe::schedule::ReplicaLayout::kMaxReplicas
                         << ", got " << count;
  if (!recompute.empty() && recompute.size() != stageDevice.size())
    return emitError() << "plan has " << stageDevice.size()
                       << " stages but recompute has " << recompute.size()
                       << " entries";
  for (auto [stage, device] : llvm::enumerate(stageDevice))
    if (device < 0)
      return emitError() << "stage " << stage << " has negative device "
                         << device;
  for (auto [device, bytes] : llvm::enumerate(memoryBytes))
    if (bytes < 0)
      return emitError() << "device " << device << " has negative memory "
                         << bytes;
  return success(
      succeeded(checkNonNegative(emitError, "objective_ms", objectiveMs)) &&
      succeeded(checkNonNegative(emitError, "seconds", seconds)));
}

LogicalResult
TrainingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     ::ftpipe::schedule::Kind schedule, unsigned microbatches,
                     ::ftpipe::schedule::Optimizer optimizer,
                     ::ftpipe::schedule::WeightVersions versions,
                     ::ftpipe::schedule::RecomputeMode recompute) {
  if (microbatches == 0)
    return emitError() << "a training setup needs at least one micro-batch";
  return success();
}
