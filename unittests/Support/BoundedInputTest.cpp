//===- BoundedInputTest.cpp - The bounded reader of user files ------------===//
//
// readBoundedFile's refusals (a missing file, a size over the limit, a
// device, a FIFO, a directory; streams only where the caller allows them)
// and parseBoundedJSON's (nesting past the limit, counted outside strings
// only; a key twice in one object, also when spelled with escapes).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

using namespace ftpipe::support;

namespace {

std::string errorOf(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// A temporary file holding `text`, removed at the end of the scope.
struct TemporaryFile {
  llvm::SmallString<128> path;
  explicit TemporaryFile(llvm::StringRef text) {
    int fd = -1;
    EXPECT_FALSE(
        llvm::sys::fs::createTemporaryFile("bounded-input", "json", fd, path));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
  }
  ~TemporaryFile() { llvm::sys::fs::remove(path); }
};

TEST(BoundedInput, ReadsASmallFileWhole) {
  TemporaryFile file("{\"a\": 1}");
  auto text = readBoundedFile(file.path, "test file");
  ASSERT_TRUE(bool(text)) << errorOf(text.takeError());
  EXPECT_EQ((*text)->getBuffer(), "{\"a\": 1}");
  // The same file over a limit of 4 bytes.
  auto tooLarge = readBoundedFile(file.path, "test file", 4);
  ASSERT_FALSE(bool(tooLarge));
  EXPECT_EQ(errorOf(tooLarge.takeError()),
            ("test file '" + file.path + "' is larger than 4 bytes").str());
}

TEST(BoundedInput, StopsReadingAnEndlessDeviceWhereStreamsAreAllowed) {
  auto text = readBoundedFile("/dev/zero", "cluster", 1 << 20,
                              FileKinds::RegularOrStream);
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "cluster '/dev/zero' is larger than 1 MiB");
}

TEST(BoundedInput, RefusesADeviceWithoutReadingIt) {
  auto text = readBoundedFile("/dev/zero", "weights");
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "weights '/dev/zero' is a character device, not a regular file");
  EXPECT_EQ(errorOf(checkRegularFile("/dev/zero", "artifact")),
            "artifact '/dev/zero' is a character device, not a regular file");
}

TEST(BoundedInput, RefusesAFifoWithoutBlocking) {
  llvm::SmallString<128> directory;
  ASSERT_FALSE(
      llvm::sys::fs::createUniqueDirectory("bounded-input", directory));
  std::string fifo = (directory + "/fifo").str();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens it: a blocking open or read would hang here.
  auto text = readBoundedFile(fifo, "checkpoint manifest");
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "checkpoint manifest '" + fifo + "' is a FIFO, not a regular file");
  // Through a link too: the kind is that of what is opened.
  std::string link = (directory + "/link").str();
  ASSERT_FALSE(llvm::sys::fs::create_link(fifo, link));
  EXPECT_EQ(errorOf(checkRegularFile(link, "artifact")),
            "artifact '" + link + "' is a FIFO, not a regular file");
  llvm::sys::fs::remove(link);
  llvm::sys::fs::remove(fifo);
  llvm::sys::fs::remove(directory);
}

TEST(BoundedInput, RefusesADirectoryEvenWhereStreamsAreAllowed) {
  auto text = readBoundedFile("/tmp", "graph file", kMaxInputFileBytes,
                              FileKinds::RegularOrStream);
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "graph file '/tmp' is a directory, not a regular file");
}

TEST(BoundedInput, NamesAMissingFile) {
  auto text = readBoundedFile("/no/such/file", "profile");
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(errorOf(text.takeError()),
            "cannot read profile '/no/such/file': No such file or directory");
}

TEST(BoundedInput, RefusesDeepNestingOnly) {
  std::string deep = std::string(65, '[') + std::string(65, ']');
  llvm::Expected<llvm::json::Value> refused = parseBoundedJSON(deep);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(errorOf(refused.takeError()),
            "line 1: JSON nested deeper than 64 levels");
  std::string limit = std::string(64, '[') + std::string(64, ']');
  llvm::Expected<llvm::json::Value> accepted = parseBoundedJSON(limit);
  EXPECT_TRUE(bool(accepted)) << errorOf(accepted.takeError());
  // 40,000 levels (which overflowed the stack of llvm::json::parse), even
  // unbalanced.
  std::string huge = std::string(40000, '{');
  llvm::Expected<llvm::json::Value> hugeRefused = parseBoundedJSON(huge);
  ASSERT_FALSE(bool(hugeRefused));
  EXPECT_EQ(errorOf(hugeRefused.takeError()),
            "line 1: JSON nested deeper than 64 levels");
}

TEST(BoundedInput, IgnoresBracketsInStrings) {
  // 100 brackets in a string, and an escaped quote that does not end it.
  std::string text = "{\"name\": \"" + std::string(100, '[') + "\\\"" +
                     std::string(100, '{') + "\"}";
  llvm::Expected<llvm::json::Value> json = parseBoundedJSON(text);
  ASSERT_TRUE(bool(json)) << errorOf(json.takeError());
  EXPECT_EQ(json->getAsObject()->getString("name")->size(), 201u);
}

TEST(BoundedInput, RefusesDuplicateKeys) {
  llvm::Expected<llvm::json::Value> twice =
      parseBoundedJSON("{\"a\": 1,\n \"b\": {\"dtype\": \"F32\", \"shape\": "
                       "[1],\n \"dtype\": \"I64\"}}");
  ASSERT_FALSE(bool(twice));
  EXPECT_EQ(errorOf(twice.takeError()), "line 3: duplicate key 'dtype'");
  // Escapes name the same key.
  llvm::Expected<llvm::json::Value> escaped =
      parseBoundedJSON("{\"ab\": 1, \"a\\u0062\": 2}");
  ASSERT_FALSE(bool(escaped));
  EXPECT_EQ(errorOf(escaped.takeError()), "line 1: duplicate key 'ab'");
}

TEST(BoundedInput, AcceptsEqualKeysInDifferentObjects) {
  // The same key in sibling and nested objects, keys that look like values
  // ("a" after a colon is a value), and strings in arrays.
  llvm::Expected<llvm::json::Value> json = parseBoundedJSON(
      "{\"x\": {\"a\": \"a\"}, \"y\": {\"a\": [\"a\", \"a\", {\"a\": 1}]},"
      " \"a\": \"x\"}");
  ASSERT_TRUE(bool(json)) << errorOf(json.takeError());
  EXPECT_EQ(json->getAsObject()->size(), 3u);
}

} // namespace
