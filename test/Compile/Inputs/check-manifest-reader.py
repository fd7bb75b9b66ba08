# check-manifest-reader.py TOOLS DIR - the Python tools' manifest reader
# (TOOLS/ftpipe_manifest.py) on DIR/manifest.json as ftpipe-compile wrote
# it, then on copies with one field broken each: prints what it read and
# every refusal.
import copy
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import ftpipe_manifest  # noqa: E402

manifest = ftpipe_manifest.load(sys.argv[2])
print("read: %d devices, %d stages, %d entry points" % (
    len(manifest["devices"]), len(manifest["stages"]),
    len(ftpipe_manifest.entries(manifest))))


def broken(name, change):
    bad = copy.deepcopy(manifest)
    change(bad)
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "manifest.json"), "w") as f:
            json.dump(bad, f)
        try:
            ftpipe_manifest.load(directory)
            print("%s: read" % name)
        except ftpipe_manifest.ManifestError as error:
            print("%s: %s" % (name, str(error).replace(directory, "DIR")))


broken("version", lambda m: m.update(version=2))
broken("shape", lambda m: m["entry_points"][1]["arguments"][1].update(
    shape="2x3"))
broken("index", lambda m: m["entry_points"][0]["arguments"][0].update(
    index=7))
broken("owner", lambda m: next(iter(m["parameters"].values())).pop("owner"))
broken("split", lambda m: m["stages"][0].update(backward_input=3))
