//===- Passes.td - FTPipe conversions ----------------------*- tablegen -*-===//
//
// The code-generation passes of FTPipe: what turns per-device tensor IR into
// calls of BLAS and of the runtime (the ftpipe dialect's lowering,
// ftpipe-lower-transfers, is here, as upstream keeps its XToLLVM). Thin passes over the pattern sets in
// LinalgToBLAS.h and ElementwiseFusion.h; the CPU lowering pipeline that
// strings them together with upstream's passes is in CPUPipeline.h.
// docs/generated/FTPipeConversionPasses.md is generated from this file.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_PASSES_TD
#define FTPIPE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinalgToBLASPass : Pass<"ftpipe-linalg-to-blas", "ModuleOp"> {
  let summary = "Turns contractions on buffers into calls of a BLAS gemm";
  let description = [{
    Every `linalg` op on memrefs whose body is `out += a * b` in f32 or f64 and
    whose loops are contraction loops (upstream's `inferContractionDims`: one
    M, one N and one K loop, up to three batch loops) becomes one call of a
    shape-independent entry of FTPipe's CPU kernels library
    (`ftpipe_blas_gemm_f32` / `_f64`, lib/Runtime/BLASKernels.cpp, over
    OpenBLAS's `cblas_sgemm` / `cblas_dgemm`). This covers `linalg.matmul`,
    `linalg.batch_matmul`, their transposed variants and every
    `linalg.generic` of that shape, whatever the order of its loops and the
    layout of its operands (transposed, strided, broadcast over a batch).

    The operands are cast to unranked memrefs, so one declaration serves every
    shape and rank; three `i64` codes say which memref dimension plays which
    role (batch loops, rows, columns) in each operand, a fourth the number of
    batch loops, and a fifth whether the product is added to the output (1) or
    replaces it (0). It replaces it when the op's output buffer was filled
    with zero just before, and the fill is then dropped.

    Before:
    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<32x64xf32>)
    linalg.matmul ins(%a, %b : memref<32x16xf32>, memref<16x64xf32>)
                  outs(%c : memref<32x64xf32>)
    ```
    After:
    ```mlir
    %0 = memref.cast %a : memref<32x16xf32> to memref<*xf32>
    %1 = memref.cast %b : memref<16x64xf32> to memref<*xf32>
    %2 = memref.cast %c : memref<32x64xf32> to memref<*xf32>
    call @ftpipe_blas_gemm_f32(%0, %1, %2, %c33_i64, %c33_i64, %c33_i64,
                               %c0_i64, %c0_i64) : (...) -> ()
    ```
  }];
  let options = [
    Option<"library", "library", "::mlir::ftpipe::GemmLibrary",
           /*default=*/"::mlir::ftpipe::GemmLibrary::OpenBLAS",
           "The gemm entry called", [{::llvm::cl::values(
             clEnumValN(::mlir::ftpipe::GemmLibrary::OpenBLAS, "openblas",
                        "ftpipe_blas_gemm_T (BLASKernels.h, CPU target)"),
             clEnumValN(::mlir::ftpipe::GemmLibrary::CuBLAS, "cublas",
                        "ftpipe_cublas_gemm_T (CuBLASKernels.h, CUDA "
                        "target; same arguments)"))}]>
  ];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect"];
}

def FuseElementwisePass : Pass<"ftpipe-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuses element-wise producers into their consumers, sparing "
                "contractions";
  let description = [{
    Upstream's element-wise fusion of `linalg.generic` on tensors
    (`populateElementwiseOpsFusionPatterns`), after generalising the named
    element-wise ops, so that chains of element-wise and reduction ops become
    few loop nests. A producer is fused into a contraction only when it is a
    pure copy (a transpose or a broadcast: its body yields an input), so that
    every contraction keeps the `out += a * b` body that
    `ftpipe-linalg-to-blas` sends to BLAS; a named contraction fed by such a
    copy is generalised for that. Unit dimensions are dropped on the way
    (upstream's rank-reducing patterns for contractions, a batch matmul of
    one batch becoming a matmul, and unit-extent folding for the other
    generics), so that the reshapes the TOSA front end puts between a
    transpose and its matmul cancel out and the transpose becomes an operand
    layout that BLAS reads in place instead of a copy. A contraction that
    starts from a fill and whose only use is a transpose writes the
    transposed layout itself (its output map composed with the inverse
    permutation), as weight gradients need; one whose only use is an add
    to a tensor read as the add's output is accumulates into that tensor
    instead (BLAS with beta = 1), in the layout the add reads it in: a tied
    embedding's gradient, the head's product plus the embedding's scatter,
    without a separate strided pass.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def LoopLocalityPass : Pass<"ftpipe-loop-locality", "func::FuncOp"> {
  let summary = "Orders and blocks the loops of every linalg.generic for "
                "contiguous inner accesses";
  let description = [{
    Loop nests from `linalg.generic` run their loops in the order of the
    op's iteration dimensions, so a reduction over the rows of a row-major
    buffer (a bias gradient: `db[j] = sum_i dy[i, j]`) reads with the stride
    of a whole row in its innermost loop, which neither caches nor
    vectorises. Two steps, for every generic with static strides:

    - Order: a dimension's cost is the sum over the op's operands of its
      element stride in that operand (capped at a cache line of f32; 0 where
      the operand does not depend on it); loops are sorted by decreasing
      cost, ties keeping their order (`linalg::interchangeGenericOp`).
    - Block: when an operand of at least 4096 elements is still contiguous
      along another dimension than the innermost loop (a transpose: its
      input and output cannot both be), on buffers, that dimension and the
      innermost one are tiled by 32, so that both operands' tiles stay in
      the L1 cache.

    Every output element still accumulates its reduction in the same order,
    so the results are bit for bit the same.
  }];
  let dependentDialects = ["affine::AffineDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

def StridedCopiesToLoopsPass : Pass<"ftpipe-strided-copies-to-loops",
                                    "func::FuncOp"> {
  let summary = "Turns memref.copy of strided views into loops that vectorise";
  let description = [{
    The memref lowering copies a `memref.copy` whose source and target are
    both contiguous with one `memcpy`, and any other with the runtime's
    generic `memrefCopy`, which moves one element at a time through its
    index arithmetic (about 40 ms for GPT-2's 4 x 127 x 50257 logits, copied
    out of and back into the 4 x 128 x 50257 ones for the loss's shift).
    This pass rewrites every copy with a strided source or target into a
    `linalg.generic` that yields its input (identity maps, all loops
    parallel); `ftpipe-loop-locality` then orders its loops and
    `convert-linalg-to-loops` makes the loop nest, whose contiguous innermost
    loop LLVM vectorises. Contiguous copies keep their `memcpy`.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def ApproximateMathPass : Pass<"ftpipe-approximate-math", "func::FuncOp"> {
  let summary = "Replaces f32 exp, tanh and erf with arithmetic, so that their "
                "loops vectorise";
  let description = [{
    Scalar calls of the C library's `expf`, `tanhf` and `erff` keep LLVM's
    loop vectoriser out of every loop that makes them (softmax's exp, GELU's
    erf or tanh). This pass rewrites the f32 `math.exp` and `math.tanh` into
    upstream's polynomial approximations
    (`populateMathPolynomialApproximationPatterns`) and `math.erf` into
    FTPipe's own: `x * S(x^2)` below 1 and `1 - exp(-x^2) * P(|x|) / Q(|x|)`
    above, with coefficients fitted to mpmath's erf, at most 2.3 ulp from
    the exact value (upstream's erf approximation moved trained weights by
    more than the checks against PyTorch allow). f64 ops and the other math
    ops keep their library calls.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def DropAnnotationsPass : Pass<"ftpipe-drop-annotations", "ModuleOp"> {
  let summary = "Removes FTPipe's attributes before code generation";
  let description = [{
    Removes every attribute of the `ftpipe` dialect from the module, its
    functions, their arguments and results, and every op (`ftpipe.param`,
    `ftpipe.name`, `ftpipe.cost`, `ftpipe.stage`, the plan, ...). They
    describe tensors, and their verifiers reject the memrefs that
    bufferization makes of them; the manifest of the compiled artifacts is
    read before this pass runs.
  }];
}

def PlainGluePass : Pass<"ftpipe-plain-glue", "ModuleOp"> {
  let summary = "Compiles loop-free functions (glue) without optimisation";
  let description = [{
    Marks every function of the module with a body, no loop (its blocks'
    control flow has no cycle) and at least `min-ops` operations `optnone`
    and `noinline`. Such a function is glue: a `_mlir_ciface_` wrapper
    (unpacks and packs the memref descriptors of its function's arguments
    and results around one call), an entry point (receives, calls its
    stage function or, inlined, the stage's outlined layers, sends,
    returns its saved values) or a stage function
    whose compute is in outlined layers, BLAS and runtime calls. Each of
    its instructions runs at most once per call, so optimising it saves
    little, while LLVM's instruction selection and post-RA list scheduling
    grow faster than a basic block's size: a stage of GPT-2 124M passes
    and returns hundreds of descriptors, in blocks of thousands of
    instructions. Without recomputation (the CPU default) device 1 of
    GPT-2 124M on 2 devices spent 32 s of CPU in `llc`, 21 s of it in
    post-RA scheduling, 6 s with its glue marked (docs/Compile.md, "Compile
    time"). Functions with loops, and the functions they call, are
    optimised as before. Only the module's own functions are looked at (not
    the kernels of a nested `gpu.module`). Run after
    `convert-func-to-llvm`; the CPU and CUDA lowerings do.
  }];
  let options = [
    Option<"minOps", "min-ops", "unsigned", /*default=*/"100",
           "Mark loop-free functions of at least this many operations">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def CheckLowerablePass : Pass<"ftpipe-check-lowerable", "ModuleOp"> {
  let summary = "Refuses input that upstream's lowering would crash on";
  let description = [{
    The first step of the CPU and CUDA lowerings. MLIR 19's verifiers accept
    some ops that its conversions then crash on; this pass refuses them with
    an error at the op instead:
    - a `tosa.transpose` whose permutation is not a permutation of its
      input's dimensions (`tosa-to-linalg-named` indexes with it; found by
      the fuzz target with `dense<[2147483648, 0]>` and `dense<[-1, 0]>`).
  }];
}

def CopyGlobalsToHeapPass : Pass<"ftpipe-copy-globals-to-heap",
                                  "func::FuncOp"> {
  let summary = "Reads constant buffers from heap copies instead of globals";
  let description = [{
    Replaces every `memref.get_global` (the buffers that bufferization makes
    of constant tensors) by a `memref.alloc` and a `memref.copy` of the
    global into it. The CUDA target allocates every buffer in device memory,
    which kernels can read; a global lives in the host's data segment, which
    they cannot (`ftpipe-device-copies` then makes the copy a host-to-device
    one). A global that only calls read (through casts), such as the site
    text handed to `ftpipe_rt_index_error`, is host data and stays. Run
    before the deallocation pipeline, which then frees the copies.

    Before:
    ```mlir
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    ```
    After:
    ```mlir
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    memref.copy %0, %alloc : memref<4xf32> to memref<4xf32>
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def HostAccessesToDevicePass : Pass<"ftpipe-host-accesses-to-device",
                                    "ModuleOp"> {
  let summary = "Moves what host code still reads or writes of buffers to "
                "the device";
  let description = [{
    For the CUDA target, whose buffers all live in device memory: after
    `convert-parallel-loops-to-gpu`, the code that linalg ops without a
    parallel dimension leave on the host (the store of a 0-d fill, the
    `scf.for` of a full reduction: index guards' minimum and maximum, a
    loss's sum) would load and store device memory from the host. Each run
    of consecutive such operations (`memref.load` / `memref.store`, and
    region operations holding them and nothing that must stay on the host:
    calls, launches, allocations, copies) moves into a `gpu.launch` of one
    block of one thread, in order, on the runtime's stream. A
    `memref.load` whose value the host needs (an index guard's condition)
    becomes a copy of that element into a host scalar (`memref.alloca`),
    `ftpipe_cuda_synchronize`, and a load of the scalar; where it reads a
    small dense argument (at most 64 KiB) that nothing in the function
    writes (every use a load or a copy's source, kernels' bodies included),
    the whole argument is copied to the host once, at the function's entry,
    and every read loads that copy (a gather adjoint's loop over tokens then
    synchronises once, not once per token).

    Afterwards no host code reads or writes a buffer other than its own
    scalars; the pass fails, naming the operation, where one still does.

    Before:
    ```mlir
    memref.store %init, %acc[] : memref<f32>
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %in[%i] : memref<?xf32>
      ...
    }
    %v = memref.load %acc[] : memref<f32>
    ```
    After:
    ```mlir
    gpu.launch blocks(...) in (%c1, %c1, %c1) threads(...) in (%c1, %c1, %c1) {
      memref.store %init, %acc[] : memref<f32>
      scf.for %i = %c0 to %n step %c1 { ... }
      gpu.terminator
    }
    memref.copy %acc, %scalar : memref<f32> to memref<f32>
    call @ftpipe_cuda_synchronize() : () -> ()
    %v = memref.load %scalar[] : memref<f32>
    ```
  }];
  let dependentDialects = ["func::FuncDialect", "gpu::GPUDialect",
                           "memref::MemRefDialect", "arith::ArithDialect"];
}

def DeviceCopiesPass : Pass<"ftpipe-device-copies", "ModuleOp"> {
  let summary = "Turns host-side memref.copy into calls of device copies";
  let description = [{
    Replaces every `memref.copy` in the module's `func.func`s (host code;
    kernels in `gpu.module`s are left alone) by a call of
    `ftpipe_cuda_copy_T` (T: f64, f32, f16, bf16, i64, i32, i16, i8, i1;
    declared by the pass) on unranked casts of source and target. The CUDA
    target keeps every buffer in device memory: finalize-memref-to-llvm would
    turn a contiguous copy into the host's `memcpy` and any other into the C
    runner utilities' `memrefCopy`, both of which read the buffers on the
    host. lib/Runtime's FTPipeCUDARuntime implements the calls as one
    `cudaMemcpyAsync` for dense copies (also from a constant in the host's
    data segment) and a strided copy kernel otherwise. Fails on a copy of an
    element type it has no function for.

    Before:
    ```mlir
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    ```
    After:
    ```mlir
    %0 = memref.cast %a : memref<4xf32> to memref<*xf32>
    %1 = memref.cast %b : memref<4xf32> to memref<*xf32>
    call @ftpipe_cuda_copy_f32(%0, %1) : (memref<*xf32>, memref<*xf32>) -> ()
    ```
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect"];
}

def ReductionsInnermostPass : Pass<"ftpipe-reductions-innermost",
                                   "func::FuncOp"> {
  let summary = "Moves the reduction dimensions of linalg ops inside their "
                "parallel ones";
  let description = [{
    `convert-linalg-to-parallel-loops` nests loops in the order of an op's
    iterators, so a reduction over a leading dimension (the sum over the
    batch and the sequence of a bias gradient: `linalg.reduce` with
    `dimensions = [0]`) becomes an `scf.for` around the `scf.parallel`, and
    on the CUDA target a host loop that launches one kernel per iteration
    (1,536 launches for one bias gradient of a 4 x 384-token BERT layer).
    This pass interchanges every `linalg.generic` whose iterators have a
    reduction before a parallel dimension so that the parallel dimensions
    come first, in their order, then the reductions, in theirs
    (`linalg::interchangeGenericOp`); a `linalg.reduce` becomes the
    equivalent `linalg.generic` first (`linalg::generalizeNamedOp`). The loops become one kernel whose
    threads each sum their element's reduction; every element is summed in
    the same order as before, so results are bit for bit the same.

    Before:
    ```mlir
    linalg.reduce ins(%a : memref<4x384x1024xf32>)
                  outs(%b : memref<384x1024xf32>) dimensions = [0]
      (%in: f32, %acc: f32) { ... }
    ```
    After:
    ```mlir
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a : memref<4x384x1024xf32>) outs(%b : memref<384x1024xf32>) {...}
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def ElementwiseInPlacePass : Pass<"ftpipe-elementwise-in-place",
                                  "func::FuncOp"> {
  let summary = "Makes an element-wise linalg op write the buffer its "
                "result is copied into";
  let description = [{
    Bufferization gives an element-wise op on a slice that is then inserted
    back (a gather adjoint's `acc[k, :] += dy[t, :]` per token) a new buffer
    for its result and a `memref.copy` of it into the slice. For an
    element-wise `linalg.generic` (all iterators parallel, all indexing maps
    the identity, its output's value unused) whose output is a
    `memref.alloc` used only by it, one `memref.copy` into a buffer `X` and
    deallocations, with nothing but side-effect-free ops between the op and
    the copy, this pass makes the op write `X` and drops the temporary, the
    copy and the deallocations. Each element is read and written by the
    same iteration, so an input that is `X` itself (the same value, or a
    view equivalent to it) is read before it is written; any other input
    must be a different buffer from `X`'s (its root, through views, a
    different allocation, one of them a `memref.alloc`), otherwise the op is
    left alone. The values computed are the same, in the same order.

    On the CUDA target this saves a copy per iteration and leaves a loop
    body that `ftpipe-parallel-loops-outside` can turn inside out.

    Before:
    ```mlir
    %row = memref.subview %acc[%k, 0] [1, 1024] [1, 1] : ...
    %tmp = memref.alloc() : memref<1024xf32>
    linalg.generic {...} ins(%row, %dy : ...) outs(%tmp : memref<1024xf32>) {...}
    memref.copy %tmp, %row : memref<1024xf32> to memref<1024xf32, strided<...>>
    memref.dealloc %tmp : memref<1024xf32>
    ```
    After:
    ```mlir
    %row = memref.subview %acc[%k, 0] [1, 1024] [1, 1] : ...
    linalg.generic {...} ins(%row, %dy : ...) outs(%row : ...) {...}
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect"];
}

def ParallelLoopsOutsidePass : Pass<"ftpipe-parallel-loops-outside",
                                    "func::FuncOp"> {
  let summary = "Interchanges an scf.for with the scf.parallel it holds";
  let description = [{
    A gather adjoint adds each token's row of dy into the row of the
    gradient that the token's index names: `scf.for` over the tokens around
    an `scf.parallel` over the row's channels. On the CUDA target the
    `scf.for` stays on the host and launches one kernel per token (1,536
    per gather of a 4 x 384-token batch). This pass turns
    `scf.for %t { A; scf.parallel %c { B } }` into
    `scf.parallel %c { scf.for %t { A; B } }`: one kernel over the channels
    whose threads each loop over the tokens in order. The `scf.parallel`
    may sit inside `scf.if`s of the loop's body (the padding row's test),
    which move along.

    Legal, and done, only when proven so, conservatively: the `scf.for`
    carries no values; the `scf.parallel` is the only one in it, has no
    reductions and bounds defined outside the `scf.for`; everything else in
    the body is side-effect free or a `memref.load`; every buffer written
    (`memref.store`, only inside the `scf.parallel`) is a `memref.alloc`
    of identity layout, accessed only inside the `scf.parallel` and, for
    each parallel induction variable, always at the same dimension of that
    allocation with exactly that variable as index (through `memref.subview`s
    of offset 0 and stride 1 in that dimension), so different parallel
    iterations touch different elements; every buffer read is such a
    written one or traced through views to a `memref.alloc`, a
    `memref.alloca`, a `memref.get_global` or an argument of the function.
    Each element then sees the same operations in the same order (duplicate
    indices still accumulate, one token after the other): results are bit
    for bit the same. Loops nested in loops are handled inside out.

    Before:
    ```mlir
    scf.for %t = %c0 to %c1536 step %c1 {
      %i = memref.load %indices[%c0, %t] : memref<1x1536xi32>
      %k = arith.index_cast %i : i32 to index
      %row = memref.subview %acc[%k, 0] [1, 1024] [1, 1] : ...
      scf.parallel (%c) = (%c0) to (%c1024) step (%c1) {
        ... memref.store %s, %row[%c] ...
      }
    }
    ```
    After:
    ```mlir
    scf.parallel (%c) = (%c0) to (%c1024) step (%c1) {
      scf.for %t = %c0 to %c1536 step %c1 {
        %i = memref.load %indices[%c0, %t] : memref<1x1536xi32>
        ...
        memref.store %s, %row[%c] ...
      }
    }
    ```
  }];
  let dependentDialects = ["scf::SCFDialect"];
}

def MapParallelLoopsToGPUPass : Pass<"ftpipe-map-parallel-loops-to-gpu",
                                     "func::FuncOp"> {
  let summary = "Tiles and maps outermost scf.parallel loops to GPU blocks "
                "and threads";
  let description = [{
    Prepares the `scf.parallel` loops of `convert-linalg-to-parallel-loops`
    for upstream's `convert-parallel-loops-to-gpu`. Each outermost loop's
    innermost (contiguous) dimension is tiled by `block-size`, with bounds
    checks rather than `min` bounds (upstream's `tileParallelLoop`); the tile
    loop goes to `threadIdx.x`, the tile indices to `blockIdx.x`, the next
    outer dimensions to `blockIdx.y` and `blockIdx.z`, and any further ones
    run sequentially in the kernel. Nested `scf.parallel` loops (a parallel
    loop inside a reduction loop) run sequentially in the kernel. Unlike
    upstream's `gpu-map-parallel-loops` (outer loop to blocks in dimension
    order, one thread per block), consecutive threads touch consecutive
    elements and no block exceeds CUDA's limits.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c1000) step (%c1, %c1) {...}
    ```
    After (bounds check inside the inner loop not shown):
    ```mlir
    scf.parallel (%i, %jj) = (%c0, %c0) to (%c4, %c1000) step (%c1, %c256) {
      scf.parallel (%ti, %tj) = (%c0, %c0) to (%c1, %c256) step (%c1, %c1) {
        ...
      } {mapping = [#gpu.loop_dim_map<processor = sequential, ...>,
                    #gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_y, ...>,
                  #gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (along the innermost dimension)">
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

def MergeGPUModulesPass : Pass<"ftpipe-merge-gpu-modules", "ModuleOp"> {
  let summary = "Moves every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel, and
    `gpu-module-to-binary` then runs ptxas once per module: hundreds of
    processes for one transformer stage. This pass moves every `gpu.func`
    into a single `gpu.module @ftpipe_kernels`, renamed after the module it
    came from (those names are unique), and updates the `gpu.launch_func`
    ops. Run it after outlining and before a target is attached.

    Before:
    ```mlir
    gpu.module @f_kernel { gpu.func @f_kernel(...) kernel {...} }
    gpu.module @f_kernel_0 { gpu.func @f_kernel(...) kernel {...} }
    gpu.launch_func @f_kernel_0::@f_kernel ...
    ```
    After:
    ```mlir
    gpu.module @ftpipe_kernels {
      gpu.func @f_kernel(...) kernel {...}
      gpu.func @f_kernel_0(...) kernel {...}
    }
    gpu.launch_func @ftpipe_kernels::@f_kernel_0 ...
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect"];
}

def EarlyDeallocationPass : Pass<"ftpipe-early-deallocation",
                                 "func::FuncOp"> {
  let summary = "Frees each buffer right after its last use";
  let description = [{
    Upstream's ownership-based deallocation frees the buffers of a block at
    its end, so a function holds every buffer it allocated until it returns:
    a stage's backward keeps all of its intermediate values at once. This
    pass moves each `memref.dealloc` of a `memref.alloc` of the same block
    to just after the last op of the block that uses the buffer or anything
    derived from it (every result of every op that reads it, transitively,
    views and pointers included; uses inside nested regions count at their
    ancestor in the block). A buffer that reaches the block's terminator is
    left alone. Run after `convert-bufferization-to-memref`.

    Before:
    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    memref.copy %a, %out : memref<4xf32> to memref<4xf32>
    %b = memref.alloc() : memref<8xf32>
    ...
    memref.dealloc %a : memref<4xf32>
    memref.dealloc %b : memref<8xf32>
    ```
    After: `memref.dealloc %a` comes right after the `memref.copy`, before
    `%b` is allocated.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def RecordPeakMemoryPass : Pass<"ftpipe-record-peak-memory", "ModuleOp"> {
  let summary = "Records each public function's peak of heap buffers";
  let description = [{
    For every public function with a body, the largest number of bytes its
    heap buffers (`memref.alloc`, in the callees too) occupy at once, walking
    its ops in order: an allocation adds its bytes as the host allocator
    charges them (its alignment added, in 64-byte units, whole pages from
    1 MiB up: HostAllocator.cpp), a `memref.dealloc` (also
    one under a condition: the ownership checks of upstream's deallocation)
    removes those of the buffer it frees, a call adds the callee's own peak
    on top of what is live and leaves its results live, and a loop or branch
    counts its body's peak once. Buffers of dynamic size count nothing (the
    models FTPipe compiles have static shapes). The result goes into the
    module as a public constant the runtime finds in the artifact:

    ```mlir
    memref.global "public" constant @ftpipe_peak_bytes_stage2_backward
        : memref<i64> = dense<1234>
    ```

    FTPipe's runtime predicts a device's memory with it (docs/Runtime.md,
    "Memory"). Run after `ftpipe-early-deallocation`.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def RecordEntryABIPass : Pass<"ftpipe-record-entry-abi", "ModuleOp"> {
  let summary = "Records each public function's arguments and results";
  let description = [{
    For every public function with a body, a description of what its C
    interface (`_mlir_ciface_F`) takes and returns: each argument and result
    in order, a scalar passed by value or a tensor passed as a memref
    descriptor, with its element type and static shape. It goes into the
    module as a public, NUL-terminated constant the runtime reads from the
    artifact and compares with the manifest before calling `F`, so a
    manifest edited to disagree with its code (a result or argument fewer, a
    rank or shape changed, symbols swapped) is refused instead of making the
    call read or write outside its buffers (docs/Robustness.md):

    ```mlir
    func.func @stage0_forward(%mb: index, %w: tensor<4x16xf32>)
        -> tensor<4xf32>
    // becomes, besides the function:
    memref.global "public" constant @ftpipe_abi_stage0_forward
        : memref<72xi8> = dense<[...]>
    // "ftpipe-abi 1\nargument scalar index\nargument tensor f32 4 16\n
    //  result tensor f32 4\n\0" (include/FTPipe/Support/EntryABI.h)
    ```

    A tensor of dynamic or unranked shape, or an argument of a type that is
    neither a tensor, a memref nor an integer, index or float, is an error
    at the function. Run on tensor or buffer IR, before the C wrappers are
    made; the CPU and CUDA lowerings run it right after
    `ftpipe-check-lowerable`.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def TrapComputedIndicesPass
    : Pass<"ftpipe-trap-computed-indices", "ModuleOp"> {
  let summary = "Stops the run when indices the model computes leave a table";
  let description = [{
    `ftpipe-clamp-gather-indices` keeps every `tosa.gather` inside its table
    with a clamp (`ftpipe.index_guard`). Ids read from data are checked by
    ftpipe-run against the manifest's `index_bound` before training; ids the
    model computes are not, and a clamp alone would train on the table's
    first or last row without a word. Before each guard whose indices do not
    come unchanged (through reshapes, slices, casts, clamps, selects and
    calls) from an entry point's arguments or from constants, this pass
    inserts a check of their smallest and largest value; an index outside
    `[0, rows)` calls the runtime's `ftpipe_rt_index_error` with the
    gather's location and the value (include/FTPipe/Runtime/StageABI.h),
    which ends the run with a message. The clamp stays, so the code never
    addresses outside a buffer.

    ```mlir
    %safe = tosa.clamp %ids {ftpipe.index_guard, min_int = 0 : i64,
                             max_int = 511 : i64, ...}
    // becomes, when %ids is computed:
    %min = ... tosa.reduce_min over every dimension, tensor.extract
    %max = ... tosa.reduce_max ...
    scf.if %outside {
      %site = memref.get_global @ftpipe_index_site : memref<Nxi8>
      func.call @ftpipe_rt_index_error(%site_unranked, %value, %c512)
    }
    %safe = tosa.clamp %ids ...
    ```

    Run on the device's tensor IR after the C wrappers are requested (the
    callee must stay a plain C function) and before
    `ftpipe-drop-annotations`; the CPU and CUDA lowerings do.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "tosa::TosaDialect"];
}

def OutlineLayersPass : Pass<"ftpipe-outline-layers", "ModuleOp"> {
  let summary = "Moves each repeated layer's ops into a function of its own";
  let description = [{
    Transformer layers repeat, and a stage of six of them (forward, or its
    recomputation and backward) was one function that LLVM optimised as a
    whole, in time that grows much faster than the function. This pass cuts
    every function with a body into runs of consecutive ops from the same
    layer (their location's scope up to its first indexed module, e.g.
    `.../ModuleList[h]/GPT2Block[3]`; ops without one, e.g. constants, join
    the run they sit in, but those before the first layer, e.g. the
    embeddings or a backward's head, make a run of their own) and moves
    each run that computes (holds an op other than glue: calls, constants
    and the memref dialect's ops without regions), or of at least `min-ops`
    ops, into a private function called in its place: its arguments are the
    values it reads from outside, its results the values read after it.
    Constants, and `memref.cast`, `memref.collapse_shape` and
    `memref.expand_shape` of one buffer, are made again on the side that
    reads them, so the calls pass and return the buffers themselves (each
    memref a call passes is a descriptor of several words; an unranked one
    is copied to memory).
    Functions with identical bodies (the same layer code for different
    layers' weights) are merged into one, and the outlined functions are
    marked `no_inline`, so LLVM compiles each distinct layer's code once, in
    a small function. A function with fewer than two runs stays whole.
    What stays is glue without loops, which `ftpipe-plain-glue` has LLVM
    compile as it is (its size grows with the layers: the descriptors of
    every layer's weights and saved values): short runs of glue, and the
    glue after the last op that computes (a backward's copies of its
    results) when at least `min-ops` long.

    The CPU lowering runs it on buffers, after `ftpipe-early-deallocation`
    and `ftpipe-record-peak-memory`: the ops and their order stay, so the
    buffers alive at each point (and the recorded peak) are those of the
    uncut function. A layer function frees what the uncut function freed
    in its run, its arguments included; a `memref.dealloc` belongs to no
    layer (it sits after its buffer's last use; its location says where the
    buffer was made).
  }];
  let options = [
    Option<"minOps", "min-ops", "unsigned", /*default=*/"16",
           "Outline runs of glue of at least this many ops">,
  ];
  let dependentDialects = ["func::FuncDialect"];
}

def InlineSingleCallsPass : Pass<"ftpipe-inline-single-calls", "ModuleOp"> {
  let summary = "Inlines each private function that one call calls";
  let description = [{
    Inlines every private function of one block whose only use in the
    module is one `func.call` from another function, and erases it: after
    `ftpipe-outline-stages`, each stage function and its entry point. The
    CPU and CUDA lowerings run it before bufferization. Upstream's
    `buffer-deallocation-simplification` takes each result of a call to
    alias each of its operands, and an entry point that calls its stage
    function passes and returns hundreds of buffers (the layers' weights
    and saved values): deciding its `bufferization.dealloc` took time that
    grew with the cube of the layers per device (device 1 of a GPT-2 of
    16 layers: 0.4 to 1.0 s of CPU in each of its four entry points, 8
    layers 0.04 to 0.09 s; docs/Compile.md, "Compile time"). Inlined,
    the results are the stage's own allocations, which the simplification
    tells apart one by one. Functions called from several places, or with
    several blocks, stay.
  }];
  let dependentDialects = ["func::FuncDialect"];
}

def LowerTransfersPass : Pass<"ftpipe-lower-transfers", "ModuleOp"> {
  let summary = "Turns ftpipe.send/recv into calls of the runtime's C ABI";
  let description = [{
    Replaces each `ftpipe.send` / `ftpipe.recv` on a tensor of element type
    T by a call of `ftpipe_rt_send_T` / `ftpipe_rt_recv_T` (StageABI.h) on
    the tensor's buffer, as an unranked memref, so that the per-device IR
    then goes through the ordinary bufferization and LLVM lowering. A
    receive writes into a new buffer (`bufferization.to_tensor restrict`).
    Attributes whose values belong to the ftpipe dialect (hardware, plan,
    costs) are dropped, so that upstream tools can read the result.

    ```mlir
    %t = ftpipe.recv from 0 tag 4 microbatch %mb : tensor<2x8xf32>
    // becomes
    %buf = memref.alloc() : memref<2x8xf32>
    %u = memref.cast %buf : memref<2x8xf32> to memref<*xf32>
    call @ftpipe_rt_recv_f32(%c0, %c4, %mbi, %u) : (i64, i64, i64, memref<*xf32>) -> ()
    %t = bufferization.to_tensor %buf restrict writable : memref<2x8xf32>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect",
                           "bufferization::BufferizationDialect",
                           "func::FuncDialect", "memref::MemRefDialect"];
}

#endif // FTPIPE_CONVERSION_PASSES_TD
