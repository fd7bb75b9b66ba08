//===- OutputFiles.h - Writing and deleting without following links -*- C++
//-*-===//
//
// Every file the runtime writes (--save, checkpoints, --trace) and every
// directory it deletes from goes through these functions, so that a link
// planted in an output directory (a shared or world-writable one, such as a
// cluster file system) cannot aim a write or a delete elsewhere:
//  - files are created under a fresh temporary name with O_CREAT | O_EXCL |
//    O_NOFOLLOW inside a directory opened by descriptor, then renamed into
//    place with renameat (a link at the final name is replaced, its target
//    untouched);
//  - a directory is deleted only if it is a real directory (opened with
//    O_NOFOLLOW), owned by this user and holding the marker file that
//    createOwnedSubdirectory put there; its entries are unlinked relative to
//    its descriptor (unlinkat removes a link, never its target), and it may
//    hold nothing but regular files.
// The directory given by the user (the parent of --save, the checkpoint
// directory) may itself be a link: that is the user's choice of path.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SUPPORT_OUTPUTFILES_H
#define FTPIPE_SUPPORT_OUTPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ftpipe {
namespace support {

/// Whether a write is flushed to disk (fsync of the file before its rename
/// and of the directory after).
enum class Durability { Buffered, Synced };

/// A directory held open by descriptor; files are created and renamed
/// relative to it. Move-only.
class OutputDirectory {
public:
  /// Opens the directory at `path` (creating it and its parents first when
  /// `create` is set); `path` may be a link.
  static llvm::Expected<OutputDirectory> open(llvm::StringRef path,
                                              bool create);

  OutputDirectory(OutputDirectory &&other);
  OutputDirectory &operator=(OutputDirectory &&other);
  OutputDirectory(const OutputDirectory &) = delete;
  OutputDirectory &operator=(const OutputDirectory &) = delete;
  ~OutputDirectory();

  llvm::StringRef path() const { return directory; }

  /// Writes `bytes` to a new file under a fresh temporary name next to
  /// `name` and returns that name; nothing is followed or overwritten.
  llvm::Expected<std::string> writeTemporary(llvm::StringRef name,
                                             llvm::StringRef bytes,
                                             Durability durability);
  /// Renames `from` to `to` inside this directory (replacing a file or a
  /// link at `to`, never following it).
  llvm::Error rename(llvm::StringRef from, llvm::StringRef to);
  /// writeTemporary, then rename into `name` (then sync() when Synced).
  llvm::Error writeFile(llvm::StringRef name, llvm::StringRef bytes,
                        Durability durability);
  /// Flushes the directory's entries to disk.
  llvm::Error sync();

  /// Opens the subdirectory `name` as one of ours: creates it with
  /// `marker` inside when absent; when present, it must be a real directory
  /// (not a link), owned by this user, with `marker` a regular file in it
  /// (or, with `adoptUnmarked`, without one: the marker is then added; for
  /// a directory that other processes of the same run create at once).
  llvm::Expected<OutputDirectory>
  openOwnedSubdirectory(llvm::StringRef name, llvm::StringRef marker,
                        bool adoptUnmarked = false);
  /// Why the entry `name` is not a directory of ours carrying `marker`, or
  /// an empty string if it is (checked without following links).
  std::string whyNotOwned(llvm::StringRef name, llvm::StringRef marker);
  /// Deletes the subdirectory `name` and the regular files in it, after
  /// checking that it is ours (whyNotOwned); refuses, deleting nothing, if it
  /// is not or if it holds anything but regular files and links.
  llvm::Error removeOwnedSubdirectory(llvm::StringRef name,
                                      llvm::StringRef marker);
  /// Unlinks the entry `name` (a file or a link; never what a link points
  /// to).
  llvm::Error removeFile(llvm::StringRef name);
  /// The names in this directory (without "." and ".."), unsorted.
  llvm::Expected<std::vector<std::string>> entries();
  /// Whether an entry `name` (of any kind, a link included) is here.
  bool contains(llvm::StringRef name);
  /// Whether `name` is a regular file here (links not followed).
  bool isRegularFile(llvm::StringRef name);

private:
  OutputDirectory(int fd, std::string directory)
      : fd(fd), directory(std::move(directory)) {}
  int fd = -1;
  std::string directory;
};

/// Writes `bytes` to `path` through a fresh temporary file in the same
/// directory, renamed into place (OutputDirectory::writeFile).
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes,
                                Durability durability = Durability::Buffered);

/// Checks, before any work is done, that `path` can later be written by
/// writeFileAtomically: its directory exists and is writable, and `path` is
/// not a directory. `option` names it in the message ("--save").
llvm::Error checkOutputPath(llvm::StringRef path, llvm::StringRef option);

} // namespace support
} // namespace ftpipe

#endif // FTPIPE_SUPPORT_OUTPUTFILES_H
