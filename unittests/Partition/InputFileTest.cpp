//===- InputFileTest.cpp - Bounded file reading and JSON depth
//--------------===//
//
// The size limit of readInputFile (on a regular file and on an endless
// device) and the nesting check of parseBoundedJSON, which must count only
// brackets outside strings.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace ftpipe::partition;

namespace {

std::string errorOf(llvm::Error error) {
  return llvm::toString(std::move(error));
}

TEST(InputFile, ReadsASmallFileWhole) {
  llvm::SmallString<128> path;
  int fd = -1;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("input-file", "json", fd, path));
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << "{\"a\": 1}";
  }
  llvm::Expected<std::string> text = readInputFile(path, "test file");
  ASSERT_TRUE(bool(text)) << errorOf(text.takeError());
  EXPECT_EQ(*text, "{\"a\": 1}");
  // The same file over a limit of 4 bytes.
  llvm::Expected<std::string> tooLarge = readInputFile(path, "test file", 4);
  ASSERT_FALSE(bool(tooLarge));
  EXPECT_NE(errorOf(tooLarge.takeError()).find("is larger than"),
            std::string::npos);
  llvm::sys::fs::remove(path);
}

TEST(InputFile, StopsReadingAnEndlessDevice) {
  llvm::Expected<std::string> text =
      readInputFile("/dev/zero", "cluster", 1 << 20);
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "cluster '/dev/zero' is larger than 1 MiB");
}

TEST(InputFile, NamesAMissingFile) {
  llvm::Expected<std::string> text = readInputFile("/no/such/file", "profile");
  ASSERT_FALSE(bool(text));
  EXPECT_NE(
      errorOf(text.takeError()).find("cannot read profile '/no/such/file'"),
      std::string::npos);
}

TEST(InputFile, RefusesDeepNestingOnly) {
  std::string deep = std::string(65, '[') + std::string(65, ']');
  llvm::Expected<llvm::json::Value> refused = parseBoundedJSON(deep);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(errorOf(refused.takeError()),
            "line 1: JSON nested deeper than 64 levels");
  std::string limit = std::string(64, '[') + std::string(64, ']');
  llvm::Expected<llvm::json::Value> accepted = parseBoundedJSON(limit);
  EXPECT_TRUE(bool(accepted)) << errorOf(accepted.takeError());
}

TEST(InputFile, IgnoresBracketsInStrings) {
  // 100 brackets in a string, and an escaped quote that does not end it.
  std::string text = "{\"name\": \"" + std::string(100, '[') + "\\\"" +
                     std::string(100, '{') + "\"}";
  llvm::Expected<llvm::json::Value> json = parseBoundedJSON(text);
  ASSERT_TRUE(bool(json)) << errorOf(json.takeError());
  EXPECT_EQ(json->getAsObject()->getString("name")->size(), 201u);
}

} // namespace
