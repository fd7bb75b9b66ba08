//===- ManifestFiles.h - Manifests written for readManifest -----*- C++ -*-===//
//
// The manifest tests' one way to hand JSON to the runtime's reader: written
// as DIR/manifest.json of a fresh directory, read back with readManifest,
// the directory removed.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_RUNTIME_MANIFESTFILES_H
#define FTPIPE_UNITTESTS_RUNTIME_MANIFESTFILES_H

#include "FTPipe/Runtime/ArtifactManifest.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

namespace ftpipe {
namespace runtime {

/// readManifest of `manifest` written into a fresh directory.
inline llvm::Expected<ArtifactManifest>
readWrittenManifest(const llvm::json::Value &manifest) {
  llvm::SmallString<128> directory;
  EXPECT_FALSE(
      llvm::sys::fs::createUniqueDirectory("ftpipe-manifest", directory));
  llvm::SmallString<128> path(directory);
  llvm::sys::path::append(path, "manifest.json");
  {
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    EXPECT_FALSE(error);
    out << manifest;
  }
  auto result = readManifest(directory);
  llvm::sys::fs::remove_directories(directory);
  return result;
}

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_RUNTIME_MANIFESTFILES_H
