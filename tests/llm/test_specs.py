#!/usr/bin/python3
"""ctest llm_specs (label llm): B16/B17/E5 (specs/vllm) with strata's own
client against two fixture endpoints (scenario A slower than B), the
server witness read from their /metrics, E5's OR rule judged both ways,
and the workbook read back.

usage: test_specs.py <strata binary> <tests/llm> <work dir>
"""
import json
import os
import subprocess
import sys

import openpyxl

STRATA, HERE, WORK = sys.argv[1:4]
sys.path.insert(0, HERE)
import fixture_server  # noqa: E402
import sse_server  # noqa: E402

SPECS = os.path.join(HERE, "..", "..", "specs", "vllm")
os.makedirs(WORK, exist_ok=True)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()
fails = check.fails


def results(path):
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "result":
                out[r["id"]] = r
    return out


def run(name, tcp, rdma, extra="", args=()):
    site = os.path.join(WORK, name + ".yaml")
    with open(site, "w") as f:
        f.write("""vllm:
  model: strata-fixture
  input_len: 32
  output_len: 12
  num_prompts: 12
  concurrency: [2, 4]
  tcp: { base_url: "%s", ready_url: "%s/health" }
  rdma: { base_url: "%s" }
%s""" % (tcp, base, rdma, extra))
    xlsx = os.path.join(WORK, name + ".xlsx")
    p = subprocess.run([STRATA, "run", SPECS, "--site", site, "-o", xlsx]
                       + list(args),
                       capture_output=True, text=True, timeout=240)
    sys.stderr.write(p.stderr[-2000:])
    return results(xlsx[:-5] + ".jsonl"), xlsx, p.returncode


srv = sse_server.serve(fixture_server.Injected(seed=5))
base = "http://127.0.0.1:%d" % srv.server_address[1]
# the witness: a fixture server per scenario would double the threads;
# one server, two timing prefixes, is the same wire

# 1. no site: SKIP naming what is missing
p = subprocess.run([STRATA, "run", SPECS, "-o",
                    os.path.join(WORK, "none.xlsx")],
                   capture_output=True, text=True, timeout=60)
res = results(os.path.join(WORK, "none.jsonl"))
check(res.get("B16", {}).get("status") == "SKIP" and "site.vllm.tcp.base_url"
      in (res["B16"].get("reason") or ""), "B16 SKIPs without a site")

# 2. B faster than A: TTFT 40 vs 200 ms -> E5 PASS on TTFT.  E5 compares
# TTFT means: at 40 vs 80 ms a loaded 2-core host (a parallel test run)
# once gave B17 a p99 of 162 ms and a mean equal to B16's (85.8 ms), so
# the gap is wide enough that only seconds of scheduling delay close it
res, xlsx, rc = run("faster", base + "/ttft=200,itl=10",
                    base + "/ttft=40,itl=10")
b16, b17, e5 = res.get("B16", {}), res.get("B17", {}), res.get("E5", {})
m16, m17 = b16.get("metrics", {}), b17.get("metrics", {})
check(b16.get("status") == "PASS" and b17.get("status") == "PASS",
      "B16/B17 PASS (%s %s / %s %s)" % (b16.get("status"), b16.get("reason"),
                                        b17.get("status"), b17.get("reason")))
check(m16.get("completed") == 12 and m16.get("output_tokens") == 144,
      "B16: 12 requests x 12 tokens")
check(200 <= m16.get("ttft_p50_ms", 0) <= 260 and
      40 <= m17.get("ttft_p50_ms", 0) <= 80, "TTFT p50 %.1f / %.1f ms"
      % (m16.get("ttft_p50_ms", 0), m17.get("ttft_p50_ms", 0)))
check(m16.get("server_requests") == 12, "witness: vllm:request_success_total"
      " moved by 12 (%s)" % m16.get("server_requests"))
st, ct = m16.get("server_ttft_mean_ms"), m16.get("ttft_mean_ms")
# The server's own histogram (the witness) holds the injected 200 ms; the
# client sees it plus its share of a shared host: a mean of 12 requests
# was 40 ms above the server's at load 19 on the 2-core CI host.  The
# timing accuracy itself is llm_fixture's (per-request p50/p90 bounds).
check(st is not None and ct is not None and 200 <= st <= 320 and
      0 <= ct - st <= 60,
      "witness: server TTFT mean %s vs client %s ms" % (st, ct))
check(m16.get("server_generation_tokens") == 144, "witness: generation tokens")
check(m16.get("time_to_ready_s") is not None, "time to ready measured")
check("delta.cpu.total.busy_pct" in m16, "CPU sampled beside B16")


def benefit(rec):
    """E5's check of the shipped criterion E5.benefit (any_of)."""
    for c in rec.get("checks", []):
        if c.get("criterion") == "benefit" and c.get("op") == "any_of":
            return c
    return {}


bf = benefit(e5)
check(e5.get("status") == "PASS" and "ttft_gain_pct" in bf.get("held", [])
      and "specs/thresholds.yaml:" in str(bf.get("source"))
      and len(bf.get("members", [])) == 4,
      "E5 PASS on TTFT by E5.benefit from specs/thresholds.yaml (%s %s)"
      % (e5.get("status"), bf.get("text")))
tables = [t["name"] for t in b16.get("tables", [])]
check("TCP ladder" in tables and "TCP server witness" in tables,
      "B16 tables: %s" % tables)
ladder = [t for t in b16["tables"] if t["name"] == "TCP ladder"][0]
check([r[0] for r in ladder["rows"]] == [2, 4], "ladder rungs 2, 4")
if os.path.exists(xlsx):
    wb = openpyxl.load_workbook(xlsx)
    text = " ".join(str(c.value) for ws in wb.worksheets
                    for row in ws.iter_rows() for c in row if c.value)
    check("B16" in text and "E5" in text and "TCP vs RDMA" in text,
          "workbook holds B16 and E5's comparison")

# 3. B slower than A: no KPI passes, E5 FAILs (the CPU KPI is the whole
# host's busy time here, shared with whatever else runs: it is switched
# off, as a site picks its KPIs: --set E5.benefit.cpu_reduction_pct.min=none)
# (a wide gap: on the shared 2-core CI host at load 19 a 2x gap, ttft
# 30/60 ms and itl 8/12, was once overturned by scheduling delays of A)
res, xlsx, rc = run("slower", base + "/ttft=20,itl=5",
                    base + "/ttft=150,itl=40",
                    args=["--set", "E5.benefit.cpu_reduction_pct.min=none"])
e5 = res.get("E5", {})
bf = benefit(e5)
check(e5.get("status") == "FAIL" and not bf.get("held") and
      len(bf.get("members", [])) == 3 and
      "cpu_reduction_pct" not in str(bf.get("text")),
      "E5 FAIL when nothing improves, CPU KPI off (%s %s)"
      % (e5.get("status"), bf.get("text")))

# 4. failures: B17's endpoint answers 503 -> B17 FAIL, E5 BLOCKED
res, xlsx, rc = run("broken", base + "/ttft=10,itl=2", base + "/status=503")
b17 = res.get("B17", {})
check(b17.get("status") == "FAIL" and
      b17["metrics"].get("failed_http") == 12,
      "B17 FAIL with 12 HTTP failures (%s)" % b17.get("metrics", {}).get("failed"))
check(res.get("E5", {}).get("status") == "BLOCKED", "E5 BLOCKED")

srv.shutdown()
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
