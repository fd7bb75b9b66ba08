//===- FTPipe.td - The whole ftpipe dialect ----------------*- tablegen -*-===//
//
// Umbrella file: the dialect, its attributes and its ops, so that one
// tablegen run documents the dialect as a whole.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_DIALECT_FTPIPE_FTPIPE_TD
#define FTPIPE_DIALECT_FTPIPE_FTPIPE_TD

include "FTPipe/Dialect/FTPipe/FTPipeDialect.td"
include "FTPipe/Dialect/FTPipe/FTPipeAttrs.td"
include "FTPipe/Dialect/FTPipe/FTPipeOps.td"

#endif // FTPIPE_DIALECT_FTPIPE_FTPIPE_TD
