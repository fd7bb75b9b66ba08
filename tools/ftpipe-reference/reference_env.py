#!/usr/bin/env python3
# reference_env.py - is the test-only reference environment usable, and if not, why
#
# Shared by test/Reference/lit.local.cfg (which marks the tests there
# UNSUPPORTED and prints the reason) and the CTest test `hf-reference-env`
# (which exits 77, CTest's skip, with the reason, so that the skip shows in
# CTest's summary too). Runs under any python3: it only starts the venv's.
#
#   reference_env.py VENV      exit 0: usable; 77: not, the reason on stdout

import os
import subprocess
import sys

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _probe(python, code):
    """None when `code` runs in the venv, else the last error line."""
    try:
        result = subprocess.run([python, "-c", code], capture_output=True,
                                text=True, timeout=300,
                                env=dict(os.environ, **OFFLINE))
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if result.returncode == 0:
        return None
    lines = result.stderr.strip().splitlines()
    return lines[-1] if lines else "exit status %d" % result.returncode


def probe(venv):
    """Returns (python, why the reference tests cannot run or None, why the
    importer tests cannot run or None)."""
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(venv + ".unavailable"):
        reason = open(venv + ".unavailable").read().strip()
        return python, reason, reason
    if not os.path.exists(os.path.join(venv, "ftpipe-stamp")):
        reason = ("no reference environment in %s (scripts/setup-reference-env.sh "
                  "sets it up; the test command runs it)" % venv)
        return python, reason, reason
    error = _probe(python, "import torch, transformers, safetensors, numpy")
    if error:
        reason = "the reference environment does not import: " + error
        return python, reason, reason
    error = _probe(python, "import torch_mlir.fx")
    return python, None, error and "torch-mlir does not import: " + error


def main():
    venv = sys.argv[1]
    _, reason, importer_reason = probe(venv)
    if reason:
        print("SKIPPED: test/Reference cannot run: " + reason)
        return 77
    if importer_reason:
        print("SKIPPED: test/Reference/import-*.test cannot run: " +
              importer_reason)
        return 77
    print("reference environment %s: usable (test/Reference runs in lit)" % venv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
