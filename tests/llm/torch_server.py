#!/usr/bin/env python3
"""A small OpenAI-compatible streaming server that generates real tokens
on a GPU: a GPT-2-shaped causal LM built from a config with random
weights (4 layers, 512 wide, 8 heads, fp16; no download), served through
sse_server.py (the same wire format and vLLM-named /metrics as the CI
fixture).  For the GPU machine (PyTorch + transformers there), not CI.

Scheduling: one engine thread steps every active request by one token in
turn (prefill on arrival, then one decode step each with its own KV
cache), so concurrent requests share the GPU and inter-token latency
grows with concurrency as on a real server.  No batching across
requests.  Tokens: prompt words hashed to ids (a stand-in tokenizer; the
model is random anyway); EOS is never honoured (ignore_eos semantics), so
every request makes exactly max_tokens.

usage: torch_server.py [port]   (prints "port N" when ready)
"""
import queue
import sys
import threading
import time
import zlib

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import sse_server  # noqa: E402

MODEL = "strata-gpt2-4l-512-random"


class Engine:
    def __init__(self, device="cuda"):
        torch.manual_seed(0)
        cfg = GPT2Config(n_layer=4, n_embd=512, n_head=8, n_positions=2048,
                         vocab_size=50257)
        self.model = GPT2LMHeadModel(cfg).to(device=device,
                                             dtype=torch.float16).eval()
        self.device = device
        self.vocab = cfg.vocab_size
        self.inbox = queue.Queue()
        self.active = []
        self.steps = 0
        self.busy_ns = 0
        threading.Thread(target=self.loop, daemon=True).start()

    def ids(self, text):
        words = str(text).split() or ["."]
        return [zlib.crc32(w.encode()) % self.vocab for w in words]

    def submit(self, prompt_ids, n):
        out = queue.Queue()
        self.inbox.put({"ids": prompt_ids, "n": n, "out": out,
                        "past": None, "made": 0, "next": None})
        return out

    @torch.inference_mode()
    def step(self, r):
        if r["past"] is None:
            x = torch.tensor([r["ids"]], device=self.device)
        else:
            x = r["next"].view(1, 1)
        o = self.model(input_ids=x, past_key_values=r["past"], use_cache=True)
        r["past"] = o.past_key_values
        r["next"] = o.logits[0, -1].argmax()
        tok = int(r["next"])          # waits for the GPU: the token is real
        r["made"] += 1
        r["out"].put((tok, time.monotonic_ns()))
        return r["made"] >= r["n"]

    def loop(self):
        while True:
            if not self.active:
                self.active.append(self.inbox.get())
            while True:
                try:
                    self.active.append(self.inbox.get_nowait())
                except queue.Empty:
                    break
            t = time.monotonic_ns()
            for r in list(self.active):
                if self.step(r):
                    r["out"].put(None)
                    self.active.remove(r)
            self.busy_ns += time.monotonic_ns() - t
            self.steps += 1


class TorchBackend:
    def __init__(self, engine):
        self.engine = engine

    def serve(self, h, req, chat, prefix, rid, rec):
        m = h.server.metrics
        prompt = req.get("prompt")
        if chat:
            prompt = " ".join(str(x.get("content", ""))
                              for x in req.get("messages", []))
        ids = self.engine.ids(prompt)
        n = int(req.get("max_completion_tokens") or req.get("max_tokens")
                or 16)
        with m.lock:
            m.running += 1
        out = self.engine.submit(ids, n)
        rec["generated_ns"] = []
        h.start_stream()
        i = 0
        while True:
            item = out.get()
            if item is None:
                break
            tok, made = item
            rec["generated_ns"].append(made)
            h.token(rid, chat, " w%d" % tok, rec, first=(i == 0))
            i += 1
        with m.lock:
            m.running -= 1
        h.finish_stream(rid, chat, len(ids), i, rec)


def start(port=0):
    eng = Engine()
    # warm-up: CUDA context, kernels, allocator, the prompt lengths used
    for words in (4, 128, 1024):
        q = eng.submit(eng.ids(" ".join(["warm"] * words)), 8)
        while q.get() is not None:
            pass
    return sse_server.serve(TorchBackend(eng), port, MODEL, "127.0.0.1"), eng


if __name__ == "__main__":
    srv, _ = start(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print("port", srv.server_address[1], flush=True)
    while True:
        time.sleep(3600)
