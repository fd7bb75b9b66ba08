"""check_replica_choice.py REPORT.json: the options of `ftpipe-report
replicas=auto` (its `replica_options`): the partitioners in their order,
then the chosen option, whether it is the only one chosen, the fastest
feasible option of every partitioner's, and (replicated) at least
kReplicaMinGain (5 %) under the fastest pure pipeline."""

import json
import sys

rows = json.load(open(sys.argv[1]))["replica_options"]
methods = []
for row in rows:
    if row["method"] not in methods:
        methods.append(row["method"])
print("methods", " ".join(methods))
feasible = [r for r in rows if r["feasible"]]
chosen = [r for r in rows if r["chosen"]]
fastest = min(r["ms_per_minibatch"] for r in feasible)
pure = min(r["ms_per_minibatch"] for r in feasible if r["depth"] == sum(r["replicas"]))
c = chosen[0]
print(f"chosen {c['method']} depth {c['depth']} replicas {c['replicas']}, {len(chosen)} chosen, "
      f"fastest {c['ms_per_minibatch'] == fastest}, "
      f"beats the fastest pure by 5 %: {c['ms_per_minibatch'] < 0.95 * pure}")
