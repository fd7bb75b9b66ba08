//===- InputFile.cpp - Bounded reading of input files -------------------===//
//
// A size-limited file reader and a nesting-depth check ahead of the JSON
// parser.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/InputFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace ftpipe::partition;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::string>
ftpipe::partition::readInputFile(llvm::StringRef path, llvm::StringRef what,
                                 uint64_t maxBytes) {
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                   llvm::toString(file.takeError())));
  std::string text;
  llvm::SmallVector<char, 0> chunk(1 << 16);
  llvm::Error error = llvm::Error::success();
  while (true) {
    llvm::Expected<size_t> read = llvm::sys::fs::readNativeFile(
        *file, llvm::MutableArrayRef<char>(chunk.data(), chunk.size()));
    if (!read) {
      error = makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                      llvm::toString(read.takeError())));
      break;
    }
    if (*read == 0)
      break;
    text.append(chunk.data(), *read);
    if (text.size() > maxBytes) {
      error = makeError(llvm::formatv("{0} '{1}' is larger than {2} MiB", what,
                                      path, maxBytes >> 20));
      break;
    }
  }
  llvm::sys::fs::closeFile(*file);
  if (error)
    return std::move(error);
  return text;
}

/// The line (1-based) of byte `offset` in `text`.
static size_t lineOf(llvm::StringRef text, size_t offset) {
  return 1 + text.take_front(offset).count('\n');
}

llvm::Expected<llvm::json::Value>
ftpipe::partition::parseBoundedJSON(llvm::StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return makeError(
            llvm::formatv("line {0}: JSON nested deeper than {1} levels",
                          lineOf(text, i), maxDepth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}
