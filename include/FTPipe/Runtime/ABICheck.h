//===- ABICheck.h - The manifest's entry points against the code -*- C++
//-*-===//
//
// What the libffi call of an entry point and the executor rely on, checked
// before the first call (docs/Robustness.md): a manifest edited to disagree
// with its artifact (a result or argument fewer, a rank changed, symbols
// swapped) made the call read or write outside its buffers, and a gradient
// named for a parameter its stage does not hold was added outside the
// gradient sums. Generic over entry points and value kinds: nothing here
// lists entry names.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_ABICHECK_H
#define FTPIPE_RUNTIME_ABICHECK_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Support/EntryABI.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace ftpipe {
namespace runtime {

/// A symbol of a loaded artifact.
struct ArtifactSymbol {
  void *address = nullptr;
  /// The symbol's size in the artifact's symbol table (0 if unknown).
  uint64_t size = 0;
  /// Whether the artifact itself defines it (dlsym also searches the
  /// artifact's dependencies: a manifest naming "exit" would call libc).
  bool own = false;
};

/// `name` in the library `dlopen` returned; none if no object defines it.
std::optional<ArtifactSymbol> findArtifactSymbol(void *library,
                                                 const char *name);

/// Checks that the artifact at `path` (loaded as `library`, RTLD_LOCAL)
/// gets its buffers from its own allocator. Generated code calls
/// `_mlir_memref_to_llvm_alloc`, `_aligned_alloc` and `_free`, defined by
/// FTPipeCPUKernels for CPU artifacts (HostAllocator.h) and by
/// FTPipeCUDARuntime for CUDA ones (device memory); the dynamic linker binds
/// the artifact's calls to the first definition in the process's global
/// scope before its own dependencies, so a process that has the other
/// library there (linked without --as-needed, as the sanitizer build links,
/// or preloaded) would hand a CPU artifact device memory. Refused, naming
/// both libraries.
llvm::Error checkAllocatorBinding(void *library, llvm::StringRef path);

/// Compares `entry` with the description of the code its symbol names:
/// counts, and per argument and result scalar or tensor, element type and
/// shape. A micro-batch argument must be a scalar index or i64, every other
/// argument and every result a tensor. The message names the entry point,
/// the argument or result, and what each side says.
llvm::Error checkEntryABI(const EntryPoint &entry,
                          const support::EntryABI &abi);

/// Reads `ftpipe_abi_F` for `entry.symbol` (`_mlir_ciface_F`) from the
/// artifact at `path` (loaded as `library`), within the symbol's size, and
/// checks `entry` against it. An artifact without the description (made by
/// an ftpipe-compile from before it) is refused: its calls cannot be
/// checked.
llvm::Error checkArtifactABI(void *library, llvm::StringRef path,
                             const EntryPoint &entry);

/// The entry points' values against the parts of the manifest the executor
/// indexes with them: a parameter argument has its parameter's shape and
/// type; an input argument its input's; a gradient result names a parameter
/// that an entry point of its stage reads, once per entry point, with that
/// parameter's shape and type; a saved argument K has a saved result K of an
/// entry point of its stage with the same shape and type; a loss has one
/// element, f32 or f64.
llvm::Error checkEntryValues(const ArtifactManifest &manifest);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_ABICHECK_H
