# Sets every device's budget in DIR/manifest.json to the memory the plan
# counted there, so that any setup needing more is over budget:
#   fit-budget.py DIR
import json
import sys

path = sys.argv[1] + "/manifest.json"
with open(path) as f:
    manifest = json.load(f)
for device in manifest["device_memory"]:
    device["inputs"]["budget_bytes"] = device["counted"]["total_bytes"]
with open(path, "w") as f:
    json.dump(manifest, f, indent=2)
