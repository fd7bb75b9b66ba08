//===- BoundedInput.cpp - Reading files that users hand over --------------===//
//
// POSIX calls rather than llvm::sys::fs, because the kind of a file must be
// checked on the descriptor that is then read (open, fstat, read), and a
// FIFO must be opened without blocking to be refused at all.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ftpipe::support;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// "64 MiB" for whole MiB, "<n> bytes" otherwise.
static std::string sizeText(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    return llvm::formatv("{0} MiB", bytes >> 20).str();
  return llvm::formatv("{0} bytes", bytes).str();
}

/// What a file of mode `mode` is, for messages.
static const char *kindName(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

namespace {
/// A file descriptor closed on every path out.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

/// Opens `path` for reading and checks its kind on the descriptor. A FIFO is
/// opened without blocking when only regular files are accepted.
static llvm::Error openChecked(llvm::StringRef path, llvm::StringRef what,
                               FileKinds kinds, Descriptor &file,
                               struct stat &status) {
  std::string name = path.str();
  int flags = O_RDONLY | O_CLOEXEC;
  if (kinds == FileKinds::RegularOnly)
    flags |= O_NONBLOCK;
  do
    file.fd = ::open(name.c_str(), flags);
  while (file.fd < 0 && errno == EINTR);
  if (file.fd < 0)
    return makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                   std::strerror(errno)));
  if (::fstat(file.fd, &status) != 0)
    return makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                   std::strerror(errno)));
  bool stream = S_ISFIFO(status.st_mode) || S_ISCHR(status.st_mode) ||
                S_ISBLK(status.st_mode);
  if (S_ISREG(status.st_mode) ||
      (stream && kinds == FileKinds::RegularOrStream))
    return llvm::Error::success();
  return makeError(llvm::formatv("{0} '{1}' is {2}, not a regular file", what,
                                 path, kindName(status.st_mode)));
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
ftpipe::support::readBoundedFile(llvm::StringRef path, llvm::StringRef what,
                                 uint64_t maxBytes, FileKinds kinds) {
  Descriptor file;
  struct stat status;
  if (llvm::Error error = openChecked(path, what, kinds, file, status))
    return std::move(error);
  auto tooLarge = [&] {
    return makeError(llvm::formatv("{0} '{1}' is larger than {2}", what, path,
                                   sizeText(maxBytes)));
  };

  if (S_ISREG(status.st_mode)) {
    if (static_cast<uint64_t>(status.st_size) > maxBytes)
      return tooLarge();
    // Blocking reads again (a regular file never blocks, but the mapping
    // code does not expect O_NONBLOCK either).
    ::fcntl(file.fd, F_SETFL, ::fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
    // Only the size seen by fstat is read, so a file that grows meanwhile
    // is cut there.
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getOpenFile(file.fd, path, status.st_size,
                                        /*RequiresNullTerminator=*/false);
    if (!buffer)
      return makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                     buffer.getError().message()));
    return std::move(*buffer);
  }

  // A pipe or a device (FileKinds::RegularOrStream): read until its end or
  // the limit.
  std::string text;
  llvm::SmallVector<char, 0> chunk(1 << 16);
  while (true) {
    ssize_t got = ::read(file.fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return makeError(llvm::formatv("cannot read {0} '{1}': {2}", what, path,
                                     std::strerror(errno)));
    if (got == 0)
      break;
    text.append(chunk.data(), got);
    if (text.size() > maxBytes)
      return tooLarge();
  }
  return llvm::MemoryBuffer::getMemBufferCopy(text, path);
}

llvm::Error ftpipe::support::checkRegularFile(llvm::StringRef path,
                                              llvm::StringRef what) {
  Descriptor file;
  struct stat status;
  return openChecked(path, what, FileKinds::RegularOnly, file, status);
}

/// The line (1-based) of byte `offset` in `text`.
static size_t lineOf(llvm::StringRef text, size_t offset) {
  return 1 + text.take_front(offset).count('\n');
}

/// The offset of the quote that ends the string whose opening quote is at
/// `open`, or text.size() if none.
static size_t stringEnd(llvm::StringRef text, size_t open) {
  for (size_t i = open + 1, e = text.size(); i < e; ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i;
  }
  return text.size();
}

/// Refuses nesting deeper than `maxDepth`; strings are skipped, so brackets
/// inside them do not count.
static llvm::Error checkDepth(llvm::StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      i = stringEnd(text, i);
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return makeError(
            llvm::formatv("line {0}: JSON nested deeper than {1} levels",
                          lineOf(text, i), maxDepth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::Error::success();
}

/// Refuses an object with a key twice. `text` is known to be valid JSON.
/// Keys are compared after unescaping ("a" and "\u0061" are one key, as
/// for llvm::json).
static llvm::Error checkDuplicateKeys(llvm::StringRef text) {
  struct Frame {
    bool object;
    bool expectKey;
    llvm::StringSet<> keys;
  };
  llvm::SmallVector<Frame, 8> stack;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      size_t end = stringEnd(text, i);
      if (!stack.empty() && stack.back().object && stack.back().expectKey) {
        llvm::StringRef raw = text.slice(i + 1, end);
        std::string key = raw.str();
        if (raw.contains('\\')) {
          llvm::Expected<llvm::json::Value> decoded =
              llvm::json::parse(text.slice(i, end + 1));
          if (!decoded)
            return decoded.takeError();
          key = decoded->getAsString().value_or(raw).str();
        }
        if (!stack.back().keys.insert(key).second)
          return makeError(llvm::formatv("line {0}: duplicate key '{1}'",
                                         lineOf(text, i), key));
        stack.back().expectKey = false;
      }
      i = end;
    } else if (c == '{' || c == '[') {
      stack.push_back(Frame{c == '{', c == '{', {}});
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    } else if (c == ',' && !stack.empty() && stack.back().object) {
      stack.back().expectKey = true;
    }
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::json::Value>
ftpipe::support::parseBoundedJSON(llvm::StringRef text, unsigned maxDepth) {
  if (llvm::Error error = checkDepth(text, maxDepth))
    return std::move(error);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return json.takeError();
  if (llvm::Error error = checkDuplicateKeys(text))
    return std::move(error);
  return json;
}
