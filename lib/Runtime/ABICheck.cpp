//===- ABICheck.cpp - The manifest's entry points against the code --------===//
//
// ABICheck.h. The ABI description is written by ftpipe-record-entry-abi
// (include/FTPipe/Support/EntryABI.h); it is read here within the size the
// artifact's symbol table gives it, and must end in a NUL inside it.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ABICheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <map>
#include <set>

using namespace ftpipe::runtime;
using ftpipe::support::ABIValue;
using ftpipe::support::EntryABI;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string describe(const EntryPoint &entry) {
  return "entry point '" + entry.name + "' ('" + entry.symbol + "')";
}

/// The manifest's value as an ABIValue, for messages.
static std::string manifestValue(const EntryValue &value) {
  if (value.kind == EntryValue::Kind::Microbatch)
    return "the micro-batch (scalar index)";
  ABIValue tensor{true, dtypeName(value.tensor.type).lower(),
                  value.tensor.shape};
  return tensor.str();
}

/// Whether the code's `code` can be passed as the manifest's `value`.
static bool matches(const EntryValue &value, const ABIValue &code) {
  std::optional<DType> element =
      ftpipe::runtime::parseManifestDType(code.element);
  if (!element)
    return false;
  if (value.kind == EntryValue::Kind::Microbatch)
    return !code.tensor && *element == DType::I64;
  return code.tensor && *element == value.tensor.type &&
         code.shape == value.tensor.shape;
}

std::optional<ArtifactSymbol>
ftpipe::runtime::findArtifactSymbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (!address)
    return std::nullopt;
  ArtifactSymbol symbol;
  symbol.address = address;
  Dl_info where;
  void *entry = nullptr;
  struct link_map *artifact = nullptr;
  if (dladdr1(address, &where, &entry, RTLD_DL_SYMENT) &&
      dlinfo(library, RTLD_DI_LINKMAP, &artifact) == 0 &&
      where.dli_fbase == reinterpret_cast<void *>(artifact->l_addr)) {
    symbol.own = true;
    if (entry && where.dli_saddr == address)
      symbol.size = static_cast<const ElfW(Sym) *>(entry)->st_size;
  }
  return symbol;
}

llvm::Error ftpipe::runtime::checkAllocatorBinding(void *library,
                                                   llvm::StringRef path) {
  auto fileOf = [](void *address) -> std::string {
    Dl_info where;
    return dladdr(address, &where) && where.dli_fname ? where.dli_fname
                                                      : "an unknown object";
  };
  for (const char *name :
       {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc",
        "_mlir_memref_to_llvm_free"}) {
    // Its own: the artifact's dependencies, searched in its load order.
    void *own = dlsym(library, name);
    // What its calls bind to first: the global scope.
    void *bound = dlsym(RTLD_DEFAULT, name);
    if (own && bound && own != bound)
      return fail(path + ": its buffer allocator '" + name +
                  "' would bind to " + fileOf(bound) +
                  ", which this process loaded before the artifact, not to " +
                  fileOf(own) +
                  ", its own: run the artifact in a process without the "
                  "other target's runtime (ftpipe-run linked with "
                  "--as-needed, nothing preloaded)");
  }
  return llvm::Error::success();
}

llvm::Error ftpipe::runtime::checkEntryABI(const EntryPoint &entry,
                                           const EntryABI &abi) {
  auto compare = [&](llvm::StringRef role, llvm::StringRef plural,
                     llvm::StringRef verb,
                     const std::vector<EntryValue> &manifest,
                     const std::vector<ABIValue> &code) -> llvm::Error {
    if (manifest.size() != code.size())
      return fail(describe(entry) + ": the manifest lists " +
                  llvm::Twine(manifest.size()) + " " + plural + ", the code " +
                  verb + " " + llvm::Twine(code.size()));
    for (size_t i = 0; i < code.size(); ++i)
      if (!matches(manifest[i], code[i]))
        return fail(describe(entry) + ": " + role + " " + llvm::Twine(i) +
                    ": the manifest says " + manifestValue(manifest[i]) +
                    ", the code " + verb + " " + code[i].str());
    return llvm::Error::success();
  };
  if (llvm::Error error = compare("argument", "arguments", "takes",
                                  entry.arguments, abi.arguments))
    return error;
  return compare("result", "results", "returns", entry.results, abi.results);
}

llvm::Error ftpipe::runtime::checkArtifactABI(void *library,
                                              llvm::StringRef path,
                                              const EntryPoint &entry) {
  auto refuse = [&](const llvm::Twine &why) {
    return fail(path + ": " + why + ": the manifest does not match the " +
                "artifacts");
  };
  llvm::StringRef function = entry.symbol;
  if (!function.consume_front("_mlir_ciface_"))
    return refuse(describe(entry) + " is not an _mlir_ciface_ function");
  std::string name = (support::kEntryABISymbolPrefix + function).str();
  std::optional<ArtifactSymbol> symbol =
      findArtifactSymbol(library, name.c_str());
  if (!symbol || !symbol->own)
    return fail(path + " has no ABI description '" + name + "' for " +
                describe(entry) +
                ": not an entry point of this artifact, or compiled by an "
                "ftpipe-compile from before ABI descriptions (compile the "
                "model again)");
  const char *bytes = static_cast<const char *>(symbol->address);
  const void *end =
      symbol->size ? std::memchr(bytes, '\0', symbol->size) : nullptr;
  if (!end)
    return refuse("the ABI description '" + name + "' is not a string");
  llvm::Expected<EntryABI> abi = support::parseEntryABI(
      llvm::StringRef(bytes, static_cast<const char *>(end) - bytes));
  if (!abi)
    return refuse("the ABI description '" + name +
                  "': " + llvm::toString(abi.takeError()));
  if (llvm::Error error = checkEntryABI(entry, *abi))
    return refuse(llvm::toString(std::move(error)));
  return llvm::Error::success();
}

static bool sameTensor(const ManifestTensor &a, const ManifestTensor &b) {
  return a.type == b.type && a.shape == b.shape;
}

static std::string tensorString(const ManifestTensor &tensor) {
  return dtypeName(tensor.type).lower() + " " + shapeString(tensor.shape);
}

llvm::Error
ftpipe::runtime::checkEntryValues(const ArtifactManifest &manifest) {
  // Per stage: the parameters its entry points read, and its saved results.
  std::map<int64_t, std::set<std::string>> stageParams;
  std::map<std::pair<int64_t, int64_t>, ManifestTensor> savedResults;
  for (const auto &[name, entry] : manifest.entryPoints) {
    for (const EntryValue &argument : entry.arguments)
      if (argument.kind == EntryValue::Kind::Param)
        stageParams[entry.stage].insert(argument.name);
    for (const EntryValue &result : entry.results)
      if (result.kind == EntryValue::Kind::Saved)
        savedResults.try_emplace({entry.stage, result.saved}, result.tensor);
  }
  for (const auto &[name, entry] : manifest.entryPoints) {
    for (auto [i, argument] : llvm::enumerate(entry.arguments)) {
      auto where = [&, i = i]() -> std::string {
        return "entry point '" + name + "', argument " + std::to_string(i) +
               " ";
      };
      if (argument.kind == EntryValue::Kind::Param) {
        const ManifestTensor &param =
            manifest.parameters.at(argument.name).tensor;
        if (!sameTensor(argument.tensor, param))
          return fail(where() + "('" + argument.name + "') is " +
                      tensorString(argument.tensor) + ", the parameter " +
                      tensorString(param));
      } else if (argument.kind == EntryValue::Kind::Input) {
        const ManifestTensor &input = manifest.inputs.at(argument.name);
        if (!sameTensor(argument.tensor, input))
          return fail(where() + "('" + argument.name + "') is " +
                      tensorString(argument.tensor) + ", the input " +
                      tensorString(input));
      } else if (argument.kind == EntryValue::Kind::Saved) {
        auto saved = savedResults.find({entry.stage, argument.saved});
        if (saved == savedResults.end())
          return fail(where() + "reads saved value " +
                      llvm::Twine(argument.saved) +
                      ", which no entry point of stage " +
                      llvm::Twine(entry.stage) + " returns");
        if (!sameTensor(argument.tensor, saved->second))
          return fail(where() + "(saved value " + llvm::Twine(argument.saved) +
                      ") is " + tensorString(argument.tensor) +
                      ", the saved result " + tensorString(saved->second));
      }
    }
    std::set<std::string> gradients;
    for (auto [i, result] : llvm::enumerate(entry.results)) {
      std::string where =
          "entry point '" + name + "', result " + std::to_string(i) + " ";
      bool real =
          result.tensor.type == DType::F32 || result.tensor.type == DType::F64;
      bool one = llvm::all_of(result.tensor.shape,
                              [](int64_t size) { return size == 1; });
      if (result.kind == EntryValue::Kind::Loss && (!real || !one))
        return fail(where + "(the loss) is " + tensorString(result.tensor) +
                    ": a loss is one f32 or f64 value");
      if (result.kind != EntryValue::Kind::Grad)
        continue;
      if (!stageParams[entry.stage].count(result.name))
        return fail(where + "is the gradient of '" + result.name +
                    "', which no entry point of stage " +
                    llvm::Twine(entry.stage) + " reads");
      if (!gradients.insert(result.name).second)
        return fail(where + "is a second gradient of '" + result.name + "'");
      const ManifestTensor &param = manifest.parameters.at(result.name).tensor;
      if (!sameTensor(result.tensor, param))
        return fail(where + "(the gradient of '" + result.name + "') is " +
                    tensorString(result.tensor) + ", the parameter " +
                    tensorString(param));
    }
  }
  return llvm::Error::success();
}
