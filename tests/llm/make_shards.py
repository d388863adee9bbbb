#!/usr/bin/env python3
"""On the GPU machine (tests/gpu/staging.sh; not CI): a model's named
shards to stage, written the way a Hugging Face model is shipped:
save_pretrained's safetensors shards (model-0000N-of-0000M.safetensors)
and model.safetensors.index.json, of a GPT-2-XL-shaped causal LM
(48 layers, 1600 wide, 25 heads: about 1.56e9 parameters, fp16) with
random weights initialised on the GPU (no weights to download).

usage: make_shards.py OUTDIR [MAX_SHARD_SIZE]   (default 512MB)
"""
import json
import os
import sys
import time

import torch
import transformers

out = sys.argv[1]
shard = sys.argv[2] if len(sys.argv) > 2 else "512MB"
t0 = time.monotonic()
cfg = transformers.GPT2Config(n_layer=48, n_embd=1600, n_head=25,
                              n_positions=1024, vocab_size=50257)
torch.manual_seed(1)
with torch.device("cuda"):
    model = transformers.GPT2LMHeadModel(cfg).half()
made = time.monotonic() - t0
model.save_pretrained(out, max_shard_size=shard, safe_serialization=True)
files = sorted(f for f in os.listdir(out))
print(json.dumps({
    "params": sum(p.numel() for p in model.parameters()),
    "dtype": "float16", "init_s": round(made, 2),
    "save_s": round(time.monotonic() - t0 - made, 2),
    "files": {f: os.path.getsize(os.path.join(out, f)) for f in files},
    "torch": torch.__version__, "transformers": transformers.__version__}))
