# -*- Python -*-
# lit configuration of FTPipe's regression tests.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FTPipe"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ftpipe_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%ftpipe_src_root", config.ftpipe_src_root))
config.substitutions.append(("%shared", config.ftpipe_shared_dir))
config.substitutions.append(
    ("%ftpipe_lib_dir", os.path.join(config.ftpipe_obj_root, "lib")))
config.substitutions.append(("%ftpipe_obj_root", config.ftpipe_obj_root))
# A sanitizer build (docs/Robustness.md): every process gets its ASan
# options (CMakeLists.txt says why). Libraries that Python loads with ctypes
# (stage programs, libFTPipeStageABI.so) carry ASan, whose runtime must then
# be loaded first, so Python runs with it preloaded; LeakSanitizer is off in
# those processes: CPython and PyTorch keep memory at exit on purpose.
config.ftpipe_python_env = ""
if config.ftpipe_asan_runtime:
    config.environment["ASAN_OPTIONS"] = config.ftpipe_asan_options
    config.ftpipe_python_env = "env LD_PRELOAD=%s ASAN_OPTIONS=%s:detect_leaks=0 " % (
        config.ftpipe_asan_runtime, config.ftpipe_asan_options)
config.substitutions.append(("%python", config.ftpipe_python_env + sys.executable))

llvm_config.use_default_substitutions()
# `not`, `FileCheck` and friends live in LLVM's tools directory; put it first
# on PATH so RUN lines that start with `not` work.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.ftpipe_tools_dir, append_path=True)

tools = [ToolSubst("ftpipe-opt", unresolved="fatal"),
         ToolSubst("ftpipe-model-gen", unresolved="fatal"),
         ToolSubst("ftpipe-run", unresolved="fatal"),
         ToolSubst("ftpipe-compile", unresolved="fatal")]
llvm_config.add_tool_substitutions(
    tools, [config.ftpipe_tools_dir, config.llvm_tools_dir])

# OpenMPI's mpirun, for the runtime's multi-process tests (as root it needs
# these two variables).
if shutil.which("mpirun") and config.ftpipe_have_mpi:
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Each test's mpirun keeps its session directory under the test's own
    # %t.mpi: OpenMPI 4's creation of the one under $TMPDIR (shared by all
    # tests) races when two mpiruns start at once (open-mpi/ompi#8510).
    # `ftpipe-run --np` does the same by itself (relaunchUnderMpirun).
    config.substitutions.append(
        ("%mpirun", "env OMPI_MCA_orte_tmpdir_base=%t.mpi mpirun"))

if os.path.exists(os.path.join(config.ftpipe_shared_dir, "models")):
    config.available_features.add("shared-models")

# The CUDA target (ftpipe-compile --target=cuda, ftpipe-lower-cuda): needs
# the CUDA toolkit at configure time (lib/Runtime's FTPipeCUDARuntime, ptxas);
# no GPU.
if config.ftpipe_have_cuda_runtime:
    config.available_features.add("cuda")
