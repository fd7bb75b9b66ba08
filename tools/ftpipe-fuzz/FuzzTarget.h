//===- FuzzTarget.h - FTPipe's fuzz target ----------------------*- C++ -*-===//
//
// The one function both fuzz drivers call (libFuzzer through
// LLVMFuzzerTestOneInput, and MutationDriver.cpp directly).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TOOLS_FTPIPE_FUZZ_FUZZTARGET_H
#define FTPIPE_TOOLS_FTPIPE_FUZZ_FUZZTARGET_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

/// Runs one input; the first byte picks its kind ('I' IR, 'H' cluster,
/// 'P' profile, 'G' graph, 'M' model config, 'S' safetensors, 'A' artifact
/// manifest, 'C' checkpoint manifest, 'V' data values). Returns 0; aborts on a
/// finding that did not crash by itself. An empty input only sets up.
int ftpipeFuzzOne(const uint8_t *data, size_t size);

/// The pass pipelines that IR inputs go through (for --print-pipelines, so
/// that a test can check that every registered pass is among them).
std::vector<std::string> ftpipeFuzzPipelines();

/// Print the diagnostics of each input (off: most inputs are refused, and
/// their errors are noise while fuzzing).
extern bool ftpipeFuzzShowDiagnostics;

#endif // FTPIPE_TOOLS_FTPIPE_FUZZ_FUZZTARGET_H
