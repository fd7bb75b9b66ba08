# memref_abi.py - calling MLIR-generated entry points from Python: MLIR 19's
# memref descriptors as ctypes structures, arrays as arguments, and the result
# structure of an `_mlir_ciface_` function (one descriptor, or a struct of
# them). numpy and ctypes only: run_artifacts.py (CPU artifacts),
# stage_programs.py and hf_reference.py here, and scripts/gpu/
# run_cuda_artifacts.py on a GPU machine with no other package, share it.

import ctypes

import numpy as np


def memref_struct(rank):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank),
                   ("strides", ctypes.c_int64 * rank)]
    return type("MemRef%d" % rank, (ctypes.Structure,), {"_fields_": fields})


def descriptor(array):
    # Not ascontiguousarray: that one makes scalars 1-d. No copy of an array
    # that is C-contiguous already (the entry points do not write into their
    # arguments).
    array = np.asarray(array, order="C")
    desc = memref_struct(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    for i, (size, stride) in enumerate(zip(array.shape, array.strides)):
        desc.sizes[i] = size
        desc.strides[i] = stride // array.itemsize
    return desc, array


def read_memref(desc, shape, dtype):
    """Copies a contiguous result buffer of any element type."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) if shape else 1
    pointer = ctypes.cast(desc.aligned, ctypes.POINTER(ctypes.c_char))
    raw = np.ctypeslib.as_array(pointer, shape=(count * dtype.itemsize,))
    return raw.copy().view(dtype).reshape(shape)


def call_with_results(function, results, args):
    """Calls `function` (an `_mlir_ciface_` entry point) on `args` (ctypes
    arguments); `results` are dicts with a "shape" each. Returns one result
    descriptor per result ([] for none)."""
    if not results:
        function(*args)
        return []
    if len(results) == 1:
        out = memref_struct(len(results[0]["shape"]))()
        function(ctypes.byref(out), *args)
        return [out]
    out = type("Results", (ctypes.Structure,), {"_fields_": [
        ("r%d" % i, memref_struct(len(r["shape"])))
        for i, r in enumerate(results)]})()
    function(ctypes.byref(out), *args)
    return [getattr(out, "r%d" % i) for i in range(len(results))]
