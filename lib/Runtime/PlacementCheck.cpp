//===- PlacementCheck.cpp - Parameter placement against the code ----------===//
//
// PlacementCheck.h: the holders of each parameter derived from the entry
// points' `param` arguments, compared with the manifest's owner and copies.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/PlacementCheck.h"

#include "llvm/ADT/Twine.h"

#include <map>
#include <set>

using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error ftpipe::runtime::checkPlacement(const ArtifactManifest &manifest) {
  // Per parameter, its readers' devices with one entry point each.
  std::map<std::string, std::map<int64_t, std::string>> readers;
  for (const auto &[name, entry] : manifest.entryPoints)
    for (const EntryValue &argument : entry.arguments)
      if (argument.kind == EntryValue::Kind::Param)
        readers[argument.name].try_emplace(entry.device, name);
  for (const auto &[name, param] : manifest.parameters) {
    auto role = [&](int64_t device) {
      return device == param.devices.front() ? "its owner" : "a copy";
    };
    const std::map<int64_t, std::string> &on = readers[name];
    if (on.empty())
      return fail("parameter '" + name + "': no entry point reads it, but " +
                  "the manifest places it on device " +
                  llvm::Twine(param.devices.front()) + " (" +
                  role(param.devices.front()) + ")");
    std::set<int64_t> listed(param.devices.begin(), param.devices.end());
    for (int64_t device : param.devices)
      if (!on.count(device))
        return fail("parameter '" + name + "': device " + llvm::Twine(device) +
                    " is " + role(device) +
                    ", but no entry point reads it there (it is read on "
                    "device " +
                    llvm::Twine(on.begin()->first) + ", by '" +
                    on.begin()->second + "')");
    for (const auto &[device, entry] : on)
      if (!listed.count(device))
        return fail("parameter '" + name + "': entry point '" + entry +
                    "' reads it on device " + llvm::Twine(device) +
                    ", which is neither its owner nor one of its copies");
  }
  return llvm::Error::success();
}
