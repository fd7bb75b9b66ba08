//===- PlacementCheck.h - Parameter placement against the code --*- C++ -*-===//
//
// A parameter's devices in the manifest (`owner` and `copies`) decide where
// its weights live, which device updates it and which devices sum its tied
// gradients; the entry points' `param` arguments decide where it is read.
// When the two disagree, a run trained and then aborted before saving (a
// wrong owner), exited 0 without training or saving the parameter (an owner
// of -1), or waited for a gradient that never came (a fake tied copy).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_PLACEMENTCHECK_H
#define FTPIPE_RUNTIME_PLACEMENTCHECK_H

#include "FTPipe/Runtime/ArtifactManifest.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace runtime {

/// Every parameter's devices (its owner and copies) are exactly the devices
/// of the entry points that read it: a listed device that no entry point
/// reads it on, a parameter no entry point reads, and an entry point reading
/// it on a device not listed are refused, naming parameter, device and
/// entry point.
llvm::Error checkPlacement(const ArtifactManifest &manifest);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_PLACEMENTCHECK_H
