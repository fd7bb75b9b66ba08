//===- ProfileSchema.cpp - Measured profiles, object by object ------------===//
//
// toJSON and fromJSON of every object of a measured profile
// (ProfileSchema.h), one pair per struct, and the file's reader and writer.
// The readers use llvm::json's mappers, so a missing or mistyped field is
// reported with its path; every time is checked to lie in [0, 1e9] ms.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ProfileSchema.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Support/IndexRanges.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace ftpipe::runtime;
namespace json = llvm::json;

namespace {

/// Maps the time `key` of `mapper`'s object, checking its range.
bool mapTime(json::ObjectMapper &mapper, llvm::StringLiteral key, double &ms,
             json::Path path) {
  if (!mapper.map(key, ms))
    return false;
  if (!(ms >= 0 && ms <= kMaxProfileMs)) {
    path.field(key).report("expected a time in [0, 1e9] ms");
    return false;
  }
  return true;
}

/// The same for a time that may be absent.
bool mapOptionalTime(json::ObjectMapper &mapper, const json::Value &value,
                     llvm::StringLiteral key, std::optional<double> &ms,
                     json::Path path) {
  if (!value.getAsObject()->get(key))
    return true;
  ms.emplace();
  return mapTime(mapper, key, *ms, path);
}

/// Maps the count `key`, which must not be negative.
bool mapCount(json::ObjectMapper &mapper, llvm::StringLiteral key,
              int64_t &count, json::Path path, bool optional = false) {
  if (!(optional ? mapper.mapOptional(key, count) : mapper.map(key, count)))
    return false;
  if (count < 0) {
    path.field(key).report("expected a count, at least 0");
    return false;
  }
  return true;
}

} // namespace

json::Value ftpipe::runtime::toJSON(const ProfileSource &source) {
  json::Object slowdowns;
  for (auto [process, factor] : source.slowdowns)
    slowdowns[std::to_string(process)] = factor;
  return json::Object{{"artifacts", source.artifacts},
                      {"target", source.target},
                      {"host", source.host},
                      {"processes", source.processes},
                      {"schedule", source.schedule},
                      {"micro_batches", source.microBatches},
                      {"warmup_steps", source.warmupSteps},
                      {"steps", source.steps},
                      {"statistic", source.statistic},
                      {"slowdowns", std::move(slowdowns)}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ProfileSource &source,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::map<std::string, double> slowdowns;
  if (!mapper || !mapper.mapOptional("artifacts", source.artifacts) ||
      !mapper.mapOptional("target", source.target) ||
      !mapper.mapOptional("host", source.host) ||
      !mapCount(mapper, "processes", source.processes, path, true) ||
      !mapper.mapOptional("schedule", source.schedule) ||
      !mapCount(mapper, "micro_batches", source.microBatches, path, true) ||
      !mapCount(mapper, "warmup_steps", source.warmupSteps, path, true) ||
      !mapCount(mapper, "steps", source.steps, path, true) ||
      !mapper.mapOptional("statistic", source.statistic) ||
      !mapper.mapOptional("slowdowns", slowdowns))
    return false;
  source.slowdowns.clear();
  for (auto &[process, factor] : slowdowns) {
    int64_t id;
    if (llvm::StringRef(process).getAsInteger(10, id) || id < 0 ||
        !(factor >= 1 && factor <= 1e6)) {
      path.field("slowdowns")
          .field(process)
          .report("expected a process number and a factor in [1, 1e6]");
      return false;
    }
    source.slowdowns[id] = factor;
  }
  return true;
}

json::Value ftpipe::runtime::toJSON(const ProfileStage &stage) {
  json::Object object{{"id", stage.id},
                      {"device", stage.device},
                      {"ops", ftpipe::support::indexRangesToJSON(stage.ops)},
                      {"fwd_ms", stage.forwardMs},
                      {"bwd_ms", stage.backwardMs},
                      {"fwd_wait_ms", stage.forwardWaitMs},
                      {"bwd_wait_ms", stage.backwardWaitMs},
                      {"samples", stage.samples}};
  if (stage.recomputes)
    object["recomputes"] = *stage.recomputes;
  if (stage.inputMs)
    object["input_ms"] = *stage.inputMs;
  if (stage.weightMs)
    object["weight_ms"] = *stage.weightMs;
  if (stage.forwardCpuMs)
    object["fwd_cpu_ms"] = *stage.forwardCpuMs;
  if (stage.backwardCpuMs)
    object["bwd_cpu_ms"] = *stage.backwardCpuMs;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ProfileStage &stage,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  if (!mapper || !mapCount(mapper, "id", stage.id, path) ||
      !mapCount(mapper, "device", stage.device, path) ||
      !mapTime(mapper, "fwd_ms", stage.forwardMs, path) ||
      !mapTime(mapper, "bwd_ms", stage.backwardMs, path) ||
      !mapOptionalTime(mapper, value, "input_ms", stage.inputMs, path) ||
      !mapOptionalTime(mapper, value, "weight_ms", stage.weightMs, path) ||
      !mapOptionalTime(mapper, value, "fwd_cpu_ms", stage.forwardCpuMs, path) ||
      !mapOptionalTime(mapper, value, "bwd_cpu_ms", stage.backwardCpuMs,
                       path) ||
      !mapCount(mapper, "samples", stage.samples, path, true) ||
      !mapper.mapOptional("recomputes", stage.recomputes))
    return false;
  stage.forwardWaitMs = stage.backwardWaitMs = 0;
  std::optional<double> forwardWait, backwardWait;
  if (!mapOptionalTime(mapper, value, "fwd_wait_ms", forwardWait, path) ||
      !mapOptionalTime(mapper, value, "bwd_wait_ms", backwardWait, path))
    return false;
  stage.forwardWaitMs = forwardWait.value_or(0);
  stage.backwardWaitMs = backwardWait.value_or(0);
  if (stage.inputMs.has_value() != stage.weightMs.has_value()) {
    path.field(stage.inputMs ? "weight_ms" : "input_ms")
        .report("a split backward gives both input_ms and weight_ms");
    return false;
  }
  if (stage.forwardCpuMs.has_value() != stage.backwardCpuMs.has_value()) {
    path.field(stage.forwardCpuMs ? "bwd_cpu_ms" : "fwd_cpu_ms")
        .report("CPU times come as fwd_cpu_ms and bwd_cpu_ms together");
    return false;
  }
  stage.ops.clear();
  if (const json::Value *ops = value.getAsObject()->get("ops"))
    return ftpipe::support::indexRangesFromJSON(*ops, stage.ops,
                                                path.field("ops"));
  return true;
}

json::Value ftpipe::runtime::toJSON(const ProfileProcess &process) {
  json::Object object{
      {"process", process.process}, {"device", process.device},
      {"step_ms", process.stepMs},  {"compute_ms", process.computeMs},
      {"wait_ms", process.waitMs},  {"update_ms", process.updateMs}};
  if (process.cpuMs)
    object["cpu_ms"] = *process.cpuMs;
  return object;
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               ProfileProcess &process, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapCount(mapper, "process", process.process, path) &&
         mapCount(mapper, "device", process.device, path) &&
         mapTime(mapper, "step_ms", process.stepMs, path) &&
         mapTime(mapper, "compute_ms", process.computeMs, path) &&
         mapTime(mapper, "wait_ms", process.waitMs, path) &&
         mapTime(mapper, "update_ms", process.updateMs, path) &&
         mapOptionalTime(mapper, value, "cpu_ms", process.cpuMs, path);
}

json::Value ftpipe::runtime::toJSON(const ProfileTimes &times) {
  return json::Object{{"fwd_ms", times.forwardMs},
                      {"bwd_ms", times.backwardMs}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value, ProfileTimes &times,
                               json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapTime(mapper, "fwd_ms", times.forwardMs, path) &&
         mapTime(mapper, "bwd_ms", times.backwardMs, path);
}

json::Value ftpipe::runtime::toJSON(const MeasuredProfile &profile) {
  json::Object ops;
  for (const auto &[scope, times] : profile.ops)
    ops[scope] = toJSON(times);
  return json::Object{
      {"format", kProfileFormat},       {"version", kProfileVersion},
      {"source", profile.source},       {"stages", profile.stages},
      {"processes", profile.processes}, {"ops", std::move(ops)}};
}

bool ftpipe::runtime::fromJSON(const json::Value &value,
                               MeasuredProfile &profile, json::Path path) {
  const json::Object *object = value.getAsObject();
  if (!object) {
    path.report("expected an object (a profile, or op scope -> times)");
    return false;
  }
  profile = MeasuredProfile();
  // The older form: op scope -> times, nothing else.
  if (!object->get("format"))
    return fromJSON(value, profile.ops, path);
  json::ObjectMapper mapper(value, path);
  std::string format;
  int64_t version = 0;
  if (!mapper.map("format", format) || !mapper.map("version", version))
    return false;
  if (format != kProfileFormat || version != kProfileVersion) {
    path.field(format != kProfileFormat ? "format" : "version")
        .report("not an ftpipe-profile of version 1");
    return false;
  }
  if (!mapper.mapOptional("source", profile.source) ||
      !mapper.mapOptional("stages", profile.stages) ||
      !mapper.mapOptional("processes", profile.processes) ||
      !mapper.mapOptional("ops", profile.ops))
    return false;
  std::set<int64_t> seen;
  for (auto [i, stage] : llvm::enumerate(profile.stages)) {
    if (stage.id != int64_t(i)) {
      path.field("stages").index(i).field("id").report(
          "expected the stage's position (stages are listed 0, 1, ...)");
      return false;
    }
    for (int64_t op : stage.ops)
      if (!seen.insert(op).second) {
        path.field("stages").index(i).field("ops").report(
            "an op of this stage is in an earlier one too");
        return false;
      }
  }
  return true;
}

llvm::Expected<MeasuredProfile>
ftpipe::runtime::readProfile(llvm::StringRef path) {
  auto text = ftpipe::support::readBoundedFile(
      path, "profile", ftpipe::support::kMaxInputFileBytes,
      ftpipe::support::FileKinds::RegularOrStream);
  if (!text)
    return text.takeError();
  auto parsed = ftpipe::support::parseBoundedJSON((*text)->getBuffer());
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "profile '" + path + "' is not JSON: " +
                                       llvm::toString(parsed.takeError()));
  MeasuredProfile profile;
  json::Path::Root root("profile");
  if (!fromJSON(*parsed, profile, root))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "profile '" + path +
                                       "': " + llvm::toString(root.getError()));
  return profile;
}

llvm::Error ftpipe::runtime::writeProfile(llvm::StringRef path,
                                          const MeasuredProfile &profile) {
  return ftpipe::support::writeFileAtomically(
      path, llvm::formatv("{0:2}\n", toJSON(profile)).str());
}
