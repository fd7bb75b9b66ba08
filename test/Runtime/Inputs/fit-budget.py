# Sets every device's budget in DIR/manifest.json to the memory the plan
# counted there, so that any setup needing more is over budget:
#   fit-budget.py DIR
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "ftpipe-compile"))
import ftpipe_manifest  # noqa: E402

path = sys.argv[1] + "/manifest.json"
manifest = ftpipe_manifest.load(path)
for device in manifest["device_memory"]:
    device["inputs"]["budget_bytes"] = device["counted"]["total_bytes"]
with open(path, "w") as f:
    json.dump(manifest, f, indent=2)
