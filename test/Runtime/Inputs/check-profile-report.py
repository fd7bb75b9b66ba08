#!/usr/bin/env python3
# check-profile-report.py PROFILE PRICED ANALYTICAL - compares the per-stage
# compute of two ftpipe-report JSON files (the same plan priced with the
# measured PROFILE of ftpipe-run --profile-out, and by the cost model alone)
# with the profile's stage times: a stage's compute is its forward, its
# backward proper and, when it recomputes, its forward again (a profile of
# the CPU target: its CPU times, fwd_cpu_ms and bwd_cpu_ms, which the cost
# model prices there; wall times otherwise). Prints one line
# per stage and a summary; exits 1 when a priced stage is off by more than
# the rounding of its ops' costs (6 significant digits each).
import json
import sys

profile = json.load(open(sys.argv[1]))
priced = json.load(open(sys.argv[2]))["per_stage"]
analytical = json.load(open(sys.argv[3]))["per_stage"]
if len(profile["stages"]) != len(priced):
    sys.exit("the profile has %d stages, the report %d"
             % (len(profile["stages"]), len(priced)))
cpu = profile["source"].get("target") == "cpu" and all(
    "fwd_cpu_ms" in stage for stage in profile["stages"])
matched = differs = 0
for stage, report, model in zip(profile["stages"], priced, analytical):
    fwd, bwd = ((stage["fwd_cpu_ms"], stage["bwd_cpu_ms"]) if cpu
                else (stage["fwd_ms"], stage["bwd_ms"]))
    if stage.get("recomputes"):
        bwd = max(0.0, bwd - fwd)
    expected = fwd + bwd + (fwd if report["recompute"] else 0.0)
    ok = abs(report["compute_ms"] - expected) <= 1e-4 * expected + 1e-9
    matched += ok
    differs += abs(model["compute_ms"] - expected) > 0.01 * expected
    print("stage %d: %s" % (stage["id"], "as measured" if ok else
          "priced %.6g ms, measured %.6g ms" % (report["compute_ms"], expected)))
print("priced as measured (%s): %d of %d stages; the cost model alone "
      "differs on %d" % ("CPU times" if cpu else "wall times", matched,
                         len(priced), differs))
sys.exit(0 if matched == len(priced) else 1)
