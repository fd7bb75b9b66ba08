//===- HFCheckpoint.cpp - Hugging Face checkpoint directories -------------===//
//
// Reading (index, shards, conversion to the model's types, every refusal
// naming its file) and the atomic writing of a directory that
// from_pretrained loads as it is.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HFCheckpoint.h"
#include "FTPipe/Runtime/FloatConversion.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace ftpipe::runtime;
namespace support = ftpipe::support;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string join(llvm::StringRef directory, llvm::StringRef name) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The shards of the index at `indexPath`: shard file -> its tensors.
static llvm::Expected<std::map<std::string, std::set<std::string>>>
readIndex(llvm::StringRef directory, const std::string &indexPath) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> text =
      support::readBoundedFile(indexPath, "checkpoint index");
  if (!text)
    return text.takeError();
  llvm::Expected<llvm::json::Value> json =
      support::parseBoundedJSON((*text)->getBuffer());
  if (!json)
    return fail(indexPath + ": " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *map =
      root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return fail(indexPath + ": no \"weight_map\" object");
  std::map<std::string, std::set<std::string>> shards;
  for (const auto &[name, value] : *map) {
    std::optional<llvm::StringRef> file = value.getAsString();
    if (!file)
      return fail(indexPath + ": weight_map '" + name.str() +
                  "' is not a file name");
    // A shard is a file in the checkpoint directory, nowhere else.
    if (file->empty() || file->contains('/') || file->contains('\\') ||
        *file == "." || *file == "..")
      return fail(indexPath + ": weight_map '" + name.str() + "' names '" +
                  *file + "', not a file of " + directory);
    shards[file->str()].insert(name.str());
  }
  for (const auto &[file, names] : shards)
    if (!llvm::sys::fs::exists(join(directory, file)))
      return fail(indexPath + ": names the shard " + file + " (for '" +
                  *names.begin() + "'" +
                  (names.size() > 1
                       ? " and " + std::to_string(names.size() - 1) + " more"
                       : std::string()) +
                  "), which is not in " + directory);
  return shards;
}

llvm::Expected<LoadedWeights> ftpipe::runtime::readCheckpointWeights(
    llvm::StringRef path, const std::vector<ParameterInfo> &params) {
  LoadedWeights result;
  // File -> the tensors to take from it (empty: all of them).
  std::map<std::string, std::set<std::string>> files;
  if (llvm::sys::fs::is_directory(path)) {
    result.directory = path.str();
    std::string index = join(path, kHFIndexFile);
    std::string single = join(path, kHFWeightsFile);
    if (llvm::sys::fs::exists(index)) {
      llvm::Expected<std::map<std::string, std::set<std::string>>> shards =
          readIndex(path, index);
      if (!shards)
        return shards.takeError();
      for (auto &[file, names] : *shards)
        files[join(path, file)] = std::move(names);
    } else if (llvm::sys::fs::exists(single)) {
      files[single] = {};
    } else {
      return fail(path + ": neither " + kHFIndexFile + " nor " +
                  kHFWeightsFile + ": not a Hugging Face checkpoint directory");
    }
  } else {
    files[path.str()] = {};
  }

  std::map<std::string, const ParameterInfo *> byName;
  for (const ParameterInfo &param : params)
    byName[param.name] = &param;
  std::map<DType, int64_t> storedElements;
  std::map<std::string, std::string> source;
  for (const auto &[file, listed] : files) {
    llvm::Expected<SafetensorsFile> shard = readSafetensors(file);
    if (!shard)
      return shard.takeError();
    for (const std::string &name : listed)
      if (!shard->tensors.count(name))
        return fail(file + ": has no tensor '" + name + "', which " +
                    kHFIndexFile + " places there");
    for (auto &[name, tensor] : shard->tensors) {
      if (!listed.empty() && !listed.count(name))
        return fail(file + ": tensor '" + name + "' is not in " + kHFIndexFile);
      // Names and shapes of a single file are validateWeights' to check
      // (ftpipe-run); a shard's shape is checked here, naming the shard.
      auto param = byName.find(name);
      if (param != byName.end()) {
        const ParameterInfo &info = *param->second;
        if (tensor.shape != info.shape && !result.directory.empty())
          return fail(file + ": tensor '" + name + "' is " +
                      shapeString(tensor.shape) +
                      ", the model's parameter is " + shapeString(info.shape) +
                      " (from the config the model was generated from)");
        if (tensor.shape == info.shape && isFloatType(tensor.type) &&
            isFloatType(info.type)) {
          storedElements[tensor.type] += tensor.elements();
          tensor = convertFloatTensor(tensor, info.type);
        }
      }
      if (!source.emplace(name, file).second)
        return fail(file + ": tensor '" + name + "' is also in " +
                    source[name]);
      result.weights[name] = std::move(tensor);
    }
  }
  int64_t most = -1;
  for (const auto &[type, elements] : storedElements)
    if (elements > most) {
      most = elements;
      result.storedType = type;
    }
  return result;
}

llvm::Expected<uint64_t>
ftpipe::runtime::parseShardSize(llvm::StringRef text, llvm::StringRef option) {
  static const std::pair<const char *, uint64_t> units[] = {
      {"KiB", 1ull << 10},
      {"MiB", 1ull << 20},
      {"GiB", 1ull << 30},
      {"KB", 1000},
      {"MB", 1000'000},
      {"GB", 1000'000'000},
      {"B", 1}};
  llvm::StringRef number = text.trim();
  uint64_t scale = 1;
  for (const auto &[suffix, factor] : units)
    if (number.consume_back(suffix)) {
      scale = factor;
      break;
    }
  uint64_t value = 0;
  if (number.trim().getAsInteger(10, value) || value == 0 ||
      value > UINT64_MAX / scale)
    return fail(option + " '" + text +
                "': give a positive size such as 5GB, 200MB or 20000");
  return value * scale;
}

llvm::Expected<std::optional<HFSaveOptions>> ftpipe::runtime::chooseSaveOptions(
    llvm::StringRef format, llvm::StringRef dtype, llvm::StringRef shardSize,
    const LoadedWeights &loaded) {
  if (format != "auto" && format != "file" && format != "hf")
    return fail("--save-format: 'file', 'hf' or 'auto', not '" + format + "'");
  bool hf = format == "hf" || (format == "auto" && !loaded.directory.empty());
  if (!hf)
    return std::nullopt;
  if (loaded.directory.empty())
    return fail("--save-format hf copies config.json and the tokenizer from "
                "the checkpoint directory: give that directory as --weights");
  HFSaveOptions options;
  options.sourceDirectory = loaded.directory;
  options.type = loaded.storedType;
  if (!dtype.empty()) {
    std::optional<DType> type = parseDType(dtype.upper());
    if (!type ||
        (*type != DType::BF16 && *type != DType::F16 && *type != DType::F32))
      return fail("--save-dtype: bf16, f16 or f32, not '" + dtype + "'");
    options.type = *type;
  }
  llvm::Expected<uint64_t> shard =
      parseShardSize(shardSize, "--save-shard-size");
  if (!shard)
    return shard.takeError();
  options.maxShardBytes = *shard;
  return options;
}

/// The parent directory and name of `path`.
static std::pair<std::string, std::string> splitPath(llvm::StringRef path) {
  llvm::StringRef trimmed = path.rtrim('/');
  if (trimmed.empty())
    trimmed = path;
  llvm::StringRef parent = llvm::sys::path::parent_path(trimmed);
  return {parent.empty() ? "." : parent.str(),
          llvm::sys::path::filename(trimmed).str()};
}

llvm::Error ftpipe::runtime::checkHFSaveDirectory(llvm::StringRef path) {
  auto [parent, name] = splitPath(path);
  if (name.empty() || name == "." || name == "..")
    return fail("--save " + path + ": not a directory name");
  if (!llvm::sys::fs::is_directory(parent))
    return fail("--save " + path + ": the directory " + parent +
                " does not exist");
  llvm::Expected<support::OutputDirectory> directory =
      support::OutputDirectory::open(parent, /*create=*/false);
  if (!directory)
    return directory.takeError();
  if (directory->contains(name)) {
    std::string why = directory->whyNotOwned(name, kHFSaveMarker);
    if (!why.empty())
      return fail("--save " + path +
                  " exists and FTPipe cannot replace it: " + why);
  }
  return llvm::Error::success();
}

/// The tensors of each shard: in name order, a new shard when the next
/// tensor would take the current one past `maxBytes`.
static std::vector<TensorMap> makeShards(const TensorMap &weights, DType type,
                                         uint64_t maxBytes) {
  std::vector<TensorMap> shards;
  uint64_t bytes = 0;
  for (const auto &[name, tensor] : weights) {
    Tensor converted =
        isFloatType(tensor.type) ? convertFloatTensor(tensor, type) : tensor;
    uint64_t size = converted.bytes.size();
    if (shards.empty() || (bytes > 0 && bytes + size > maxBytes)) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back()[name] = std::move(converted);
    bytes += size;
  }
  return shards;
}

/// transformers' name of a float type in config.json.
static llvm::StringRef torchDtypeName(DType type) {
  switch (type) {
  case DType::BF16:
    return "bfloat16";
  case DType::F16:
    return "float16";
  case DType::F64:
    return "float64";
  default:
    return "float32";
  }
}

/// The source's config.json with its dtype set to `type`.
static llvm::Expected<std::string> savedConfig(llvm::StringRef source,
                                               DType type) {
  std::string path = join(source, kHFConfigFile);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> text =
      support::readBoundedFile(path, "model config");
  if (!text)
    return text.takeError();
  llvm::Expected<llvm::json::Value> json =
      support::parseBoundedJSON((*text)->getBuffer());
  if (!json)
    return fail(path + ": " + llvm::toString(json.takeError()));
  llvm::json::Object *config = json->getAsObject();
  if (!config)
    return fail(path + ": not a JSON object");
  bool newer = config->get("dtype") != nullptr;
  (*config)[newer ? "dtype" : "torch_dtype"] = torchDtypeName(type);
  return llvm::formatv("{0:2}\n", llvm::json::Value(std::move(*json))).str();
}

llvm::Error ftpipe::runtime::writeHFCheckpoint(llvm::StringRef path,
                                               const TensorMap &weights,
                                               const HFSaveOptions &options) {
  if (!isFloatType(options.type))
    return fail("--save: cannot store weights as " + dtypeName(options.type));
  auto [parentPath, name] = splitPath(path);
  llvm::Expected<std::string> config =
      savedConfig(options.sourceDirectory, options.type);
  if (!config)
    return config.takeError();
  std::vector<std::pair<std::string, std::string>> files = {
      {kHFConfigFile, std::move(*config)}};
  for (const char *copied : kHFCopiedFiles) {
    std::string from = join(options.sourceDirectory, copied);
    if (!llvm::sys::fs::exists(from))
      continue;
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        support::readBoundedFile(from, "checkpoint file");
    if (!bytes)
      return bytes.takeError();
    files.emplace_back(copied, (*bytes)->getBuffer().str());
  }

  llvm::Expected<support::OutputDirectory> parent =
      support::OutputDirectory::open(parentPath, /*create=*/false);
  if (!parent)
    return parent.takeError();
  std::string partialName = ".partial-" + name, oldName = ".old-" + name;
  for (const std::string &leftover : {partialName, oldName})
    if (parent->contains(leftover))
      if (llvm::Error error =
              parent->removeOwnedSubdirectory(leftover, kHFSaveMarker))
        return error;
  llvm::Expected<support::OutputDirectory> partial =
      parent->openOwnedSubdirectory(partialName, kHFSaveMarker);
  if (!partial)
    return partial.takeError();

  std::vector<TensorMap> shards =
      makeShards(weights, options.type, options.maxShardBytes);
  llvm::json::Object weightMap;
  uint64_t totalBytes = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string file = shards.size() == 1
                           ? std::string(kHFWeightsFile)
                           : llvm::formatv("model-{0:d5}-of-{1:d5}.safetensors",
                                           i + 1, shards.size())
                                 .str();
    for (const auto &[tensorName, tensor] : shards[i]) {
      weightMap[tensorName] = file;
      totalBytes += tensor.bytes.size();
    }
    if (llvm::Error error = partial->writeFile(
            file, serializeSafetensors(shards[i], {{"format", "pt"}}),
            support::Durability::Synced))
      return error;
  }
  if (shards.size() > 1)
    files.emplace_back(
        kHFIndexFile,
        llvm::formatv(
            "{0:2}\n",
            llvm::json::Value(llvm::json::Object{
                {"metadata", llvm::json::Object{{"total_size", totalBytes}}},
                {"weight_map", std::move(weightMap)}}))
            .str());
  for (const auto &[file, bytes] : files)
    if (llvm::Error error =
            partial->writeFile(file, bytes, support::Durability::Synced))
      return error;

  // Into place: an older save moves aside first (a directory is renamed
  // only onto an empty one), then goes.
  bool replacing = parent->contains(name);
  if (replacing) {
    std::string why = parent->whyNotOwned(name, kHFSaveMarker);
    if (!why.empty())
      return fail("--save " + path +
                  " exists and FTPipe cannot replace it: " + why);
    if (llvm::Error error = parent->rename(name, oldName))
      return error;
  }
  if (llvm::Error error = parent->rename(partialName, name))
    return error;
  if (llvm::Error error = parent->sync())
    return error;
  if (replacing)
    return parent->removeOwnedSubdirectory(oldName, kHFSaveMarker);
  return llvm::Error::success();
}
