//===- OutputFiles.cpp - Writing and deleting without following links -----===//
//
// POSIX *at calls on directory descriptors: LLVM's file API works on paths
// and follows links.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ftpipe::support;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Error errnoError(const llvm::Twine &what) {
  return makeError(what + ": " + std::strerror(errno));
}

llvm::Expected<OutputDirectory> OutputDirectory::open(llvm::StringRef path,
                                                      bool create) {
  if (create)
    if (std::error_code error = llvm::sys::fs::create_directories(path))
      return makeError(path + ": " + error.message());
  std::string name = path.str();
  int fd = ::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(path);
  return OutputDirectory(fd, name);
}

OutputDirectory::OutputDirectory(OutputDirectory &&other)
    : fd(other.fd), directory(std::move(other.directory)) {
  other.fd = -1;
}

OutputDirectory &OutputDirectory::operator=(OutputDirectory &&other) {
  if (this != &other) {
    if (fd >= 0)
      ::close(fd);
    fd = other.fd;
    directory = std::move(other.directory);
    other.fd = -1;
  }
  return *this;
}

OutputDirectory::~OutputDirectory() {
  if (fd >= 0)
    ::close(fd);
}

/// `directory/name` for messages.
static std::string join(llvm::StringRef directory, llvm::StringRef name) {
  return (directory + "/" + name).str();
}

llvm::Expected<std::string>
OutputDirectory::writeTemporary(llvm::StringRef name, llvm::StringRef bytes,
                                Durability durability) {
  // Unique within the process by the counter, across processes by the pid;
  // a name that exists anyway (planted, or left by a killed process with
  // the same pid) is skipped, never opened.
  static std::atomic<uint64_t> counter{0};
  std::string temporary;
  int out = -1;
  for (int attempt = 0; attempt < 100 && out < 0; ++attempt) {
    temporary =
        llvm::formatv("{0}.tmp-{1}-{2}", name, ::getpid(), counter.fetch_add(1))
            .str();
    out = ::openat(fd, temporary.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0 && errno != EEXIST)
      return errnoError(join(directory, temporary));
  }
  if (out < 0)
    return errnoError(join(directory, temporary));
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t written = ::write(out, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0) {
      llvm::Error error = errnoError(join(directory, temporary));
      ::close(out);
      ::unlinkat(fd, temporary.c_str(), 0);
      return std::move(error);
    }
    data += written;
    left -= written;
  }
  if ((durability == Durability::Synced && ::fsync(out) != 0) ||
      ::close(out) != 0) {
    llvm::Error error = errnoError(join(directory, temporary));
    ::unlinkat(fd, temporary.c_str(), 0);
    return std::move(error);
  }
  return temporary;
}

llvm::Error OutputDirectory::rename(llvm::StringRef from, llvm::StringRef to) {
  if (::renameat(fd, from.str().c_str(), fd, to.str().c_str()) != 0)
    return errnoError("renaming " + join(directory, from) + " to " + to);
  return llvm::Error::success();
}

llvm::Error OutputDirectory::writeFile(llvm::StringRef name,
                                       llvm::StringRef bytes,
                                       Durability durability) {
  llvm::Expected<std::string> temporary =
      writeTemporary(name, bytes, durability);
  if (!temporary)
    return temporary.takeError();
  if (llvm::Error error = rename(*temporary, name)) {
    ::unlinkat(fd, temporary->c_str(), 0);
    return error;
  }
  if (durability == Durability::Synced)
    return sync();
  return llvm::Error::success();
}

llvm::Error OutputDirectory::sync() {
  if (::fsync(fd) != 0)
    return errnoError(directory + ": fsync");
  return llvm::Error::success();
}

/// Opens `name` under `parent` as a directory without following a link.
static int openSubdirectory(int parent, llvm::StringRef name) {
  return ::openat(parent, name.str().c_str(),
                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/// Why the directory open as `sub` is not ours: another owner, or no
/// `marker` regular file in it. Empty if it is ours.
static std::string whyNotOwnedOpen(int sub, const std::string &path,
                                   llvm::StringRef marker) {
  struct stat status;
  if (::fstat(sub, &status) != 0)
    return path + ": " + std::strerror(errno);
  if (status.st_uid != ::geteuid())
    return path + " belongs to another user";
  struct stat markerStatus;
  if (::fstatat(sub, marker.str().c_str(), &markerStatus,
                AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(markerStatus.st_mode))
    return path + " has no " + marker.str() + " file: not made by FTPipe";
  return "";
}

/// Why `name` under `parent` cannot be opened as a directory: a link, not a
/// directory, or the system's reason.
static std::string whyNotOpened(int parent, const std::string &path,
                                llvm::StringRef name) {
  struct stat status;
  if (::fstatat(parent, name.str().c_str(), &status, AT_SYMLINK_NOFOLLOW) ==
      0) {
    if (S_ISLNK(status.st_mode))
      return path + " is a link, not a directory of FTPipe's";
    if (!S_ISDIR(status.st_mode))
      return path + " is not a directory";
  }
  return path + ": " + std::strerror(errno);
}

llvm::Expected<OutputDirectory> OutputDirectory::openOwnedSubdirectory(
    llvm::StringRef name, llvm::StringRef marker, bool adoptUnmarked) {
  std::string path = join(directory, name);
  bool created = ::mkdirat(fd, name.str().c_str(), 0755) == 0;
  if (!created && errno != EEXIST)
    return errnoError(path);
  int sub = openSubdirectory(fd, name);
  if (sub < 0)
    return makeError(whyNotOpened(fd, path, name));
  OutputDirectory result(sub, path);
  std::string why = whyNotOwnedOpen(sub, path, marker);
  bool unmarked = llvm::StringRef(why).ends_with("not made by FTPipe");
  if (!why.empty() && !(unmarked && (created || adoptUnmarked)))
    return makeError(why);
  if (unmarked) {
    // O_CREAT without O_EXCL: processes of one run may add it at once.
    int out = ::openat(sub, marker.str().c_str(),
                       O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0)
      return errnoError(join(path, marker));
    ::close(out);
  }
  return std::move(result);
}

std::string OutputDirectory::whyNotOwned(llvm::StringRef name,
                                         llvm::StringRef marker) {
  std::string path = join(directory, name);
  int sub = openSubdirectory(fd, name);
  if (sub < 0)
    return whyNotOpened(fd, path, name);
  std::string why = whyNotOwnedOpen(sub, path, marker);
  ::close(sub);
  return why;
}

/// The names in the directory open as `fd`.
static llvm::Expected<std::vector<std::string>>
listDirectory(int fd, const std::string &path) {
  int copy = ::dup(fd);
  if (copy < 0)
    return errnoError(path);
  DIR *stream = ::fdopendir(copy);
  if (!stream) {
    ::close(copy);
    return errnoError(path);
  }
  ::rewinddir(stream);
  std::vector<std::string> names;
  while (struct dirent *entry = ::readdir(stream)) {
    llvm::StringRef name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name.str());
  }
  ::closedir(stream);
  return names;
}

llvm::Expected<std::vector<std::string>> OutputDirectory::entries() {
  return listDirectory(fd, directory);
}

bool OutputDirectory::contains(llvm::StringRef name) {
  struct stat status;
  return ::fstatat(fd, name.str().c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0;
}

bool OutputDirectory::isRegularFile(llvm::StringRef name) {
  struct stat status;
  return ::fstatat(fd, name.str().c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(status.st_mode);
}

llvm::Error OutputDirectory::removeFile(llvm::StringRef name) {
  if (::unlinkat(fd, name.str().c_str(), 0) != 0)
    return errnoError(join(directory, name));
  return llvm::Error::success();
}

llvm::Error OutputDirectory::removeOwnedSubdirectory(llvm::StringRef name,
                                                     llvm::StringRef marker) {
  std::string path = join(directory, name);
  int sub = openSubdirectory(fd, name);
  if (sub < 0)
    return makeError(whyNotOpened(fd, path, name) + "; not deleted");
  OutputDirectory held(sub, path);
  std::string why = whyNotOwnedOpen(sub, path, marker);
  if (!why.empty())
    return makeError(why + "; not deleted");
  llvm::Expected<std::vector<std::string>> names = held.entries();
  if (!names)
    return names.takeError();
  // Everything is checked before anything is deleted.
  for (const std::string &entry : *names) {
    struct stat status;
    if (::fstatat(sub, entry.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0)
      return errnoError(join(path, entry));
    if (!S_ISREG(status.st_mode) && !S_ISLNK(status.st_mode))
      return makeError(join(path, entry) +
                       " is not a file that FTPipe writes; " + path +
                       " not deleted");
  }
  for (const std::string &entry : *names)
    if (llvm::Error error = held.removeFile(entry))
      return error;
  if (::unlinkat(fd, name.str().c_str(), AT_REMOVEDIR) != 0)
    return errnoError(path);
  return llvm::Error::success();
}

/// The directory and file name of an output path.
static std::pair<std::string, std::string> splitPath(llvm::StringRef path) {
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  return {parent.empty() ? "." : parent.str(),
          llvm::sys::path::filename(path).str()};
}

llvm::Error ftpipe::support::writeFileAtomically(llvm::StringRef path,
                                                 llvm::StringRef bytes,
                                                 Durability durability) {
  auto [parent, name] = splitPath(path);
  llvm::Expected<OutputDirectory> directory =
      OutputDirectory::open(parent, /*create=*/false);
  if (!directory)
    return directory.takeError();
  return directory->writeFile(name, bytes, durability);
}

llvm::Error ftpipe::support::checkOutputPath(llvm::StringRef path,
                                             llvm::StringRef option) {
  auto [parent, name] = splitPath(path);
  if (name.empty() || name == "." || name == "..")
    return makeError(option + " " + path + ": not a file name");
  struct stat status;
  if (::stat(parent.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    return makeError(option + " " + path + ": the directory " + parent +
                     " does not exist");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    return makeError(option + " " + path + ": the directory " + parent +
                     " is not writable");
  if (::lstat(path.str().c_str(), &status) == 0 && S_ISDIR(status.st_mode))
    return makeError(option + " " + path + " is a directory");
  return llvm::Error::success();
}
