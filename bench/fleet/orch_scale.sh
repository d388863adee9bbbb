#!/bin/sh
# bench/fleet/orch_scale.sh BUILD N MODE...: the fleet orchestration at N
# simulated nodes, for real: tests/fleet/slurm.sh boots a Slurm 22.05
# cluster of N slurmd, one per network namespace (docs/fleet.md, "The
# test bed"), and for each MODE (ring, all, phased) times
#   salloc -N N strata run --fleet slurm --pairs MODE --only H1 --only R2
# (H1 on every node, R2 between the pairs MODE plans: SKIP in a namespace,
# which has no RDMA device, so a pair costs its srun steps and the
# launcher's bookkeeping, not a measurement).  Prints per MODE the pairs,
# the run's wall and its phases from the fleet journal, and the peak
# resident memory of the largest process in salloc's tree (GNU time's
# %M: the launcher, or an srun it waited for).  Run under the heavy-test
# lock; the bed is stopped at the end, each fleet journal copied to
# BUILD/orch-N-MODE.jsonl first.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BUILD N MODE..." >&2; exit 2; }
build=$(cd "$1" && pwd); n=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
bed=$build/orch-bed-$n
FLEET_NODES=$n FLEET_GUESTS=0 FLEET_FEATURES=none "$root/tests/fleet/slurm.sh" start "$bed"
trap '"$root/tests/fleet/slurm.sh" stop "$bed" >/dev/null 2>&1 || true' EXIT
. "$bed/env"
export SLURM_CONF
cat > "$bed/site.yaml" <<SITE
site: { name: orch-scale, expect: [host] }
fleet: { pairs: { max: 100000 } }
SITE
for mode in "$@"; do
  out=$bed/$mode
  t0=$(date +%s.%N)
  /usr/bin/time -o "$out.time" -f "%M" salloc -N "$n" --job-name strata-orch \
    "$build/strata" run --fleet slurm --pairs "$mode" --site "$bed/site.yaml" \
    --set H1.load1_per_cpu.max=none --only H1 --only R2 -o "$out.xlsx" \
    "$root/specs" >"$out.log" 2>&1 || true
  t1=$(date +%s.%N)
  cp "$out.jsonl" "$build/orch-$n-$mode.jsonl"   # the bed's folder goes at the end
  /usr/bin/python3 - "$out.jsonl" "$mode" "$n" "$(tail -1 "$out.time")" "$t0" "$t1" <<'PY'
import json, sys
path, mode, n, rss, t0, t1 = sys.argv[1:]
recs = [json.loads(l) for l in open(path)]
pairs = {tuple(r["pair"]) for r in recs if r.get("type") == "result" and r.get("phase") == "pair"}
steps = {}
for r in recs:
    if r.get("type") == "step":
        s = steps.setdefault(r["phase"], [0, 0.0])
        s[0] += 1
        s[1] += r["wall_s"]
end = [r for r in recs if r.get("type") == "end"]
ph = [r for r in recs if r.get("type") == "phased"]
print("N=%s %-6s pairs %5d (all pairs %d)%s: salloc %.1f s, run wall %.1f s; %s; peak RSS %.0f MiB"
      % (n, mode, len(pairs), int(n) * (int(n) - 1) // 2,
         (", %d admitted, %d refused" % (ph[0]["admitted"], ph[0]["refused"])) if ph else "",
         float(t1) - float(t0), end[0]["wall_s"] if end else -1,
         ", ".join("%s %d step%s %.1f s" % (k, v[0], "" if v[0] == 1 else "s", v[1])
                   for k, v in steps.items()), int(rss) / 1024))
PY
done
