//===- EntryABITest.cpp - The text of ABI descriptions --------------------===//
//
// Printing and parsing round-trip; malformed descriptions (they come from an
// artifact the runtime has not checked yet) are refused naming the line.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/EntryABI.h"

#include "gtest/gtest.h"

using namespace ftpipe::support;

namespace {

std::string refusal(llvm::StringRef text) {
  llvm::Expected<EntryABI> abi = parseEntryABI(text);
  if (abi)
    return "accepted";
  return llvm::toString(abi.takeError());
}

TEST(EntryABI, RoundTrips) {
  EntryABI abi;
  abi.arguments = {{false, "index", {}}, {true, "f32", {128, 64}}};
  abi.results = {{true, "f32", {}}, {true, "i1", {4, 1, 2}}};
  std::string text = printEntryABI(abi);
  EXPECT_EQ(text, "ftpipe-abi 1\n"
                  "argument scalar index\n"
                  "argument tensor f32 128 64\n"
                  "result tensor f32\n"
                  "result tensor i1 4 1 2\n");
  llvm::Expected<EntryABI> parsed = parseEntryABI(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->arguments, abi.arguments);
  EXPECT_EQ(parsed->results, abi.results);
  EXPECT_EQ(abi.arguments[1].str(), "tensor f32 [128, 64]");
  EXPECT_EQ(abi.arguments[0].str(), "scalar index");

  llvm::Expected<EntryABI> empty = parseEntryABI("ftpipe-abi 1\n");
  ASSERT_TRUE(bool(empty)) << llvm::toString(empty.takeError());
  EXPECT_TRUE(empty->arguments.empty() && empty->results.empty());
}

TEST(EntryABI, RefusesMalformedText) {
  EXPECT_EQ(refusal(""), "not an ABI description of version 1 (it starts '')");
  EXPECT_EQ(refusal("ftpipe-abi 2\nresult tensor f32\n"),
            "not an ABI description of version 1 (it starts 'ftpipe-abi 2')");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult tensor\n"),
            "line 2: expected a role, 'scalar' or 'tensor', and an element "
            "type");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult vector f32 4\n"),
            "line 2: expected 'scalar' or 'tensor', found 'vector'");
  EXPECT_EQ(refusal("ftpipe-abi 1\nargument scalar index 4\n"),
            "line 2: a scalar has no dimensions");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult tensor f32 4 -1\n"),
            "line 2: '-1' is not a size");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult tensor f32 99999999999999999999\n"),
            "line 2: '99999999999999999999' is not a size");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult tensor f32 ?\n"),
            "line 2: '?' is not a size");
  EXPECT_EQ(refusal("ftpipe-abi 1\nresult tensor f32\nargument scalar i64\n"),
            "line 3: an argument after the results");
  EXPECT_EQ(refusal("ftpipe-abi 1\noutput tensor f32\n"),
            "line 2: expected 'argument' or 'result', found 'output'");
}

} // namespace
