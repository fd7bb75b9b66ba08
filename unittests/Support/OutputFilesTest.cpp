//===- OutputFilesTest.cpp - Writes and deletes that follow no link -------===//
//
// OutputDirectory against planted links: a write replaces a link at its
// name and never touches the target; a subdirectory is opened or deleted as
// ours only if it is a real directory with the marker, holding only files;
// a refused delete deletes nothing.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace ftpipe::support;
namespace fs = llvm::sys::fs;

namespace {

std::string errorOf(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// A fresh directory with a victim file and a victim directory outside the
/// output directory `out`.
struct Sandbox {
  std::string root, out, victimFile, victimDir;
  Sandbox() {
    llvm::SmallString<128> path;
    EXPECT_FALSE(fs::createUniqueDirectory("output-files", path));
    root = path.str().str();
    out = root + "/out";
    victimFile = root + "/victim.txt";
    victimDir = root + "/victim";
    EXPECT_FALSE(fs::create_directories(out));
    EXPECT_FALSE(fs::create_directories(victimDir));
    write(victimFile, "precious");
    write(victimDir + "/file", "precious");
  }
  ~Sandbox() { fs::remove_directories(root); }
  static void write(const std::string &path, llvm::StringRef text) {
    std::error_code error;
    llvm::raw_fd_ostream os(path, error);
    os << text;
  }
  static std::string read(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : "<missing>";
  }
};

TEST(OutputFiles, WriteReplacesALinkNotItsTarget) {
  Sandbox box;
  ASSERT_FALSE(fs::create_link(box.victimFile, box.out + "/w.safetensors"));
  ASSERT_FALSE(fs::create_link(box.victimFile, box.out + "/w.safetensors.tmp"));
  ASSERT_FALSE(bool(writeFileAtomically(box.out + "/w.safetensors", "new")));
  EXPECT_EQ(Sandbox::read(box.victimFile), "precious");
  EXPECT_EQ(Sandbox::read(box.out + "/w.safetensors"), "new");
  fs::file_status status;
  ASSERT_FALSE(fs::status(box.out + "/w.safetensors", status, false));
  EXPECT_EQ(status.type(), fs::file_type::regular_file);
}

TEST(OutputFiles, OwnedSubdirectoriesAreRealAndMarked) {
  Sandbox box;
  llvm::Expected<OutputDirectory> out = OutputDirectory::open(box.out, false);
  ASSERT_TRUE(bool(out)) << errorOf(out.takeError());
  // A link is neither opened nor deleted as ours.
  ASSERT_FALSE(fs::create_link(box.victimDir, box.out + "/link"));
  llvm::Expected<OutputDirectory> link =
      out->openOwnedSubdirectory("link", ".mark", /*adoptUnmarked=*/true);
  ASSERT_FALSE(bool(link));
  EXPECT_EQ(errorOf(link.takeError()),
            box.out + "/link is a link, not a directory of FTPipe's");
  EXPECT_EQ(errorOf(out->removeOwnedSubdirectory("link", ".mark")),
            box.out + "/link is a link, not a directory of FTPipe's; not "
                      "deleted");
  // A real directory without the marker is not ours either.
  ASSERT_FALSE(fs::create_directories(box.out + "/plain"));
  Sandbox::write(box.out + "/plain/notes", "mine");
  EXPECT_EQ(errorOf(out->removeOwnedSubdirectory("plain", ".mark")),
            box.out + "/plain has no .mark file: not made by FTPipe; not "
                      "deleted");
  EXPECT_EQ(Sandbox::read(box.out + "/plain/notes"), "mine");
  EXPECT_EQ(Sandbox::read(box.victimDir + "/file"), "precious");

  // One of ours: created with the marker, deleted with its files and links
  // (the links themselves, not their targets).
  llvm::Expected<OutputDirectory> own =
      out->openOwnedSubdirectory("own", ".mark");
  ASSERT_TRUE(bool(own)) << errorOf(own.takeError());
  ASSERT_FALSE(bool(own->writeFile("a", "x", Durability::Synced)));
  ASSERT_FALSE(fs::create_link(box.victimFile, box.out + "/own/b"));
  EXPECT_EQ(out->whyNotOwned("own", ".mark"), "");
  // A subdirectory inside is not something FTPipe writes: nothing goes.
  ASSERT_FALSE(fs::create_directories(box.out + "/own/sub"));
  EXPECT_EQ(errorOf(out->removeOwnedSubdirectory("own", ".mark")),
            box.out + "/own/sub is not a file that FTPipe writes; " + box.out +
                "/own not deleted");
  EXPECT_EQ(Sandbox::read(box.out + "/own/a"), "x");
  ASSERT_FALSE(fs::remove(box.out + "/own/sub"));
  ASSERT_FALSE(bool(out->removeOwnedSubdirectory("own", ".mark")));
  EXPECT_FALSE(fs::exists(box.out + "/own"));
  EXPECT_EQ(Sandbox::read(box.victimFile), "precious");
}

TEST(OutputFiles, ChecksOutputPathsBeforeWork) {
  Sandbox box;
  EXPECT_FALSE(bool(checkOutputPath(box.out + "/w.safetensors", "--save")));
  EXPECT_EQ(errorOf(checkOutputPath(box.root + "/none/w", "--save")),
            "--save " + box.root + "/none/w: the directory " + box.root +
                "/none does not exist");
  EXPECT_EQ(errorOf(checkOutputPath(box.out, "--trace")),
            "--trace " + box.out + " is a directory");
}

} // namespace
