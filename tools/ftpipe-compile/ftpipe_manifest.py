# ftpipe_manifest.py - the one reader of ftpipe-compile's manifest.json for
# FTPipe's Python tools (run_artifacts.py, ftpipe-data, the test and bench
# helpers). The schema is C++'s (include/FTPipe/Runtime/ManifestSchema.h,
# documented in docs/Compile.md); this module checks the format, the version
# and the type of every field the Python tools read, and names the path of
# one that is wrong ("manifest.entry_points[3].arguments[1].shape: expected a
# list"), the way the runtime's reader does.
#
#   import ftpipe_manifest
#   manifest = ftpipe_manifest.load(DIR)   # or DIR/manifest.json
#   manifest["stage_order"], ftpipe_manifest.entries(manifest), ...

import json
import os

FORMAT = "ftpipe-manifest"
VERSION = 1


class ManifestError(Exception):
    """A manifest that cannot be read, or whose fields are not what the
    schema says."""


def _expect(value, kind, path):
    ok = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "str": lambda v: isinstance(v, str),
          "list": lambda v: isinstance(v, list),
          "dict": lambda v: isinstance(v, dict)}[kind](value)
    if not ok:
        raise ManifestError("%s: expected %s" % (path, {
            "int": "an integer", "str": "a string", "list": "a list",
            "dict": "an object"}[kind]))
    return value


def _field(obj, key, kind, path, optional=False):
    if key not in obj:
        if optional:
            return None
        raise ManifestError("%s.%s: missing" % (path, key))
    return _expect(obj[key], kind, "%s.%s" % (path, key))


def _tensor(obj, path):
    _field(obj, "dtype", "str", path)
    for i, size in enumerate(_field(obj, "shape", "list", path)):
        _expect(size, "int", "%s.shape[%d]" % (path, i))


def _entry_point(entry, path):
    _expect(entry, "dict", path)
    for key in ("name", "symbol", "kind"):
        _field(entry, key, "str", path)
    for key in ("device", "stage"):
        _field(entry, key, "int", path)
    for group in ("arguments", "results"):
        for i, value in enumerate(_field(entry, group, "list", path)):
            at = "%s.%s[%d]" % (path, group, i)
            _expect(value, "dict", at)
            kind = _field(value, "kind", "str", at)
            if _field(value, "index", "int", at) != i:
                raise ManifestError("%s.index: expected %d" % (at, i))
            if kind != "microbatch":
                _tensor(value, at)
            if kind in ("param", "input", "grad", "metric"):
                _field(value, "name", "str", at)
            if kind in ("saved", "weight_saved"):
                _field(value, "saved", "int", at)


def check(manifest):
    """Raises ManifestError unless `manifest` (parsed JSON) is an
    ftpipe-compile manifest of this version whose fields the Python tools
    read have their schema's types."""
    path = "manifest"
    _expect(manifest, "dict", path)
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ManifestError(
            "not an ftpipe-compile manifest of version %d (format %r, "
            "version %r)" % (VERSION, manifest.get("format"),
                             manifest.get("version")))
    _field(manifest, "target", "str", path)
    for i, device in enumerate(_field(manifest, "devices", "list", path)):
        at = "%s.devices[%d]" % (path, i)
        _expect(device, "dict", at)
        _field(device, "id", "int", at)
        _field(device, "artifact", "str", at)
    for i, stage in enumerate(_field(manifest, "stages", "list", path)):
        at = "%s.stages[%d]" % (path, i)
        _expect(stage, "dict", at)
        _field(stage, "id", "int", at)
        _field(stage, "device", "int", at)
        _field(stage, "forward", "str", at)
        for key in ("backward", "backward_input", "backward_weight"):
            _field(stage, key, "str", at, optional=True)
    order = _field(manifest, "stage_order", "list", path, optional=True)
    for i, stage in enumerate(order or []):
        _expect(stage, "int", "%s.stage_order[%d]" % (path, i))
    for i, entry in enumerate(_field(manifest, "entry_points", "list", path)):
        _entry_point(entry, "%s.entry_points[%d]" % (path, i))
    for table in ("parameters", "inputs"):
        for name, tensor in (_field(manifest, table, "dict", path,
                                    optional=True) or {}).items():
            at = "%s.%s.%s" % (path, table, name)
            _expect(tensor, "dict", at)
            _tensor(tensor, at)
            if table == "parameters":
                _field(tensor, "owner", "int", at)
                _field(tensor, "copies", "list", at, optional=True)
    for i, memory in enumerate(_field(manifest, "device_memory", "list", path,
                                      optional=True) or []):
        at = "%s.device_memory[%d]" % (path, i)
        _expect(memory, "dict", at)
        _field(memory, "device", "int", at)
        _field(memory, "inputs", "dict", at)
        _field(memory, "counted", "dict", at, optional=True)


def load(path):
    """The checked manifest of `path`: a directory written by ftpipe-compile
    or its manifest.json. A manifest without `stage_order` gets the stages in
    id order, as the runtime reads it."""
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as error:
        raise ManifestError("%s: cannot read the manifest: %s" % (path, error))
    try:
        check(manifest)
    except ManifestError as error:
        raise ManifestError("%s: %s" % (path, error)) from None
    if "stage_order" not in manifest:
        manifest["stage_order"] = sorted(s["id"] for s in manifest["stages"])
    return manifest


def entries(manifest):
    """The entry points by name."""
    return {e["name"]: e for e in manifest["entry_points"]}


def stages(manifest):
    """The stages by id."""
    return {s["id"]: s for s in manifest["stages"]}
