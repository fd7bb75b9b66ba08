//===- HostDevice.h - Functions compiled for the host and the GPU -*- C++
//-*-===//
//
// FTPIPE_HOST_DEVICE marks a function that both the host compiler and nvcc
// (lib/Runtime/*.cu) compile: __host__ __device__ under nvcc, nothing
// otherwise. Header-only, no CUDA header.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_HOSTDEVICE_H
#define FTPIPE_RUNTIME_HOSTDEVICE_H

#ifdef __CUDACC__
#define FTPIPE_HOST_DEVICE __host__ __device__
#else
#define FTPIPE_HOST_DEVICE
#endif

#endif // FTPIPE_RUNTIME_HOSTDEVICE_H
