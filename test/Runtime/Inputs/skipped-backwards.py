#!/usr/bin/env python3
# skipped-backwards.py TRACE - from ftpipe-run --trace's Chrome trace, the
# backward actions (B, I, W) marked skipped (SkippedBackwards.h): how many,
# of which stages, from which micro-batch; and whether any backward of those
# stages ran (not skipped) from that micro-batch on.
import json
import sys

events = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
          if e.get("cat") == "backward"]
skipped = [e for e in events if e["args"].get("skipped")]
if not skipped:
    print("skipped: none")
    sys.exit(0)
stages = sorted({e["args"]["stage"] for e in skipped})
first = min(e["args"]["microbatch"] for e in skipped)
ran = [e for e in events if not e["args"].get("skipped")
       and e["args"]["stage"] in stages and e["args"]["microbatch"] >= first]
print("skipped: %d backwards of stages %s from micro-batch %d; %d of them ran" % (
    len(skipped), ", ".join(map(str, stages)), first, len(ran)))
