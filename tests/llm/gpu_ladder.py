#!/usr/bin/env python3
"""On the GPU machine (not CI): strata's client against torch_server.py
(real tokens from a random GPT-2-shaped model on the GPU) at a
concurrency ladder, each figure set beside the server's own per-request
timestamps (both on CLOCK_MONOTONIC), then B16/B17/E5 through `strata
run specs/vllm` against the same server.  Writes ladder.json and
ladder.md (and the spec run's journal) into OUTDIR.

usage: gpu_ladder.py STRATA SPECS_DIR OUTDIR [ladder...]
"""
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import timing  # noqa: E402
import torch_server  # noqa: E402

strata, specs, out = sys.argv[1:4]
ladder = [int(x) for x in sys.argv[4:]] or [1, 2, 4, 8, 16, 32]
os.makedirs(out, exist_ok=True)

import torch  # noqa: E402
import transformers  # noqa: E402

t0 = time.monotonic()
srv, eng = torch_server.start()
load_s = time.monotonic() - t0
base = "http://127.0.0.1:%d" % srv.server_address[1]
info = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(), "host_cpus": os.cpu_count(),
        "model": torch_server.MODEL, "server_start_s": round(load_s, 2)}
rows = []
for c in ladder:
    n = max(16, 4 * c)
    prefix = "c%d-" % c
    steps0, busy0 = eng.steps, eng.busy_ns
    r = timing.run_client(strata, HERE, {
        "url": base + "/v1/completions", "model": torch_server.MODEL,
        "input_len": 128, "output_len": 64, "num_requests": n,
        "concurrency": c, "ignore_eos": True, "id_prefix": prefix,
        "per_request": True, "seed": c})
    cmp = timing.compare(r, srv.records, prefix)
    both = cmp["first_d"] + cmp["last_d"]
    gd = [abs(d) for d in cmp["gap_d"]]
    row = {
        "concurrency": c, "requests": n, "completed": r["completed"],
        "failed": r["failed"], "output_tokens": r["output_tokens"],
        "ttft_p50_ms": r["ttft_ms"]["p50"], "ttft_p99_ms": r["ttft_ms"]["p99"],
        "itl_p50_ms": r["itl_ms"]["p50"], "itl_p99_ms": r["itl_ms"]["p99"],
        "tpot_p50_ms": r["tpot_ms"]["p50"], "e2e_p50_ms": r["e2e_ms"]["p50"],
        "out_tok_per_s": r["out_tok_per_s"], "req_per_s": r["req_per_s"],
        "server_ttft_p50_ms": timing.quantile(cmp["server_ttft"], 0.5),
        "server_itl_p50_ms": timing.quantile(cmp["server_gaps"], 0.5),
        "recv_minus_write_p50_ms": timing.quantile(both, 0.5),
        "recv_minus_write_max_ms": max(both) if both else None,
        "gap_diff_p50_ms": timing.quantile(gd, 0.5),
        "gap_diff_p99_ms": timing.quantile(gd, 0.99),
        "matched": len(cmp["first_d"]),
        "engine_steps": eng.steps - steps0,
        "engine_busy_s": (eng.busy_ns - busy0) / 1e9,
    }
    rows.append(row)
    print(json.dumps(row), flush=True)

with open(os.path.join(out, "ladder.json"), "w") as f:
    json.dump({"info": info, "rows": rows}, f, indent=1)
cols = ["concurrency", "completed", "ttft_p50_ms", "server_ttft_p50_ms",
        "itl_p50_ms", "server_itl_p50_ms", "itl_p99_ms", "tpot_p50_ms",
        "e2e_p50_ms", "out_tok_per_s", "req_per_s",
        "recv_minus_write_p50_ms", "recv_minus_write_max_ms",
        "gap_diff_p50_ms", "gap_diff_p99_ms"]
with open(os.path.join(out, "ladder.md"), "w") as f:
    f.write(json.dumps(info) + "\n\n| " + " | ".join(cols) + " |\n|"
            + "---|" * len(cols) + "\n")
    for r in rows:
        f.write("| " + " | ".join(
            ("%.2f" % r[k]) if isinstance(r[k], float) else str(r[k])
            for k in cols) + " |\n")

# B16/B17/E5 natively against this server (both scenarios the same
# server: there is one GPU and no S3 path behind it)
# With STAGE_ENDPOINT / STAGE_BUCKET / STAGE_PREFIX (an S3 server beside
# it holding a model's shards: tests/gpu/staging.sh), B16 also measures
# model staging into GPU memory (model_stage_s).
site = os.path.join(out, "site-gpu.yaml")
staging = ""
if os.environ.get("STAGE_ENDPOINT"):
    staging = """  staging: { bucket: %s, prefix: "%s", concurrency: 8, memory: cuda }
s3: { endpoint: "%s", region: us-east-1, bucket: %s }
""" % (os.environ["STAGE_BUCKET"], os.environ["STAGE_PREFIX"],
       os.environ["STAGE_ENDPOINT"], os.environ["STAGE_BUCKET"])
with open(site, "w") as f:
    f.write("""vllm:
  model: %s
  input_len: 128
  output_len: 64
  num_prompts: 64
  concurrency: [1, 8, 32]
  tcp: { base_url: "%s", ready_url: "%s/health" }
  rdma: { base_url: "%s", ready_url: "%s/health" }
""" % (torch_server.MODEL, base, base, base, base) + staging)
p = subprocess.run([strata, "run", specs, "--site", site, "-o",
                    os.path.join(out, "specs-gpu.xlsx"), "--json",
                    os.path.join(out, "specs-gpu.json")],
                   capture_output=True, text=True, timeout=400)
print(p.stdout[-3000:], p.stderr[-3000:])
srv.shutdown()
