#!/usr/bin/python3
"""The CI streaming fixture: an OpenAI-compatible server whose timings and
faults are chosen per request by a path prefix, e.g.

  POST /ttft=50,itl=10,jitter=2,n=20/v1/completions

Keys (all optional): ttft (ms before the first token), itl (ms between
tokens), jitter (ms, uniform +-), n (tokens; default the request's
max_tokens / max_completion_tokens), status (an HTTP error status to answer
with instead), fail_every (every k-th request answers 500), stall_after
(tokens, then silence for `stall` s, default 30), malformed_after (tokens,
then a truncated JSON event), errevent_after (tokens, then a
{"error": ...} event, as vLLM streams a failure), usage=0 (no usage chunk),
close_after (tokens, then the connection is cut mid-body).

Run alone: fixture_server.py [port]  (prints "port N").
"""
import random
import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import sse_server  # noqa: E402


def parse(prefix):
    opts = {}
    for kv in filter(None, prefix.split(",")):
        k, _, v = kv.partition("=")
        opts[k] = float(v)
    return opts


class Injected:
    def __init__(self, seed=1):
        self.rng = random.Random(seed)
        self.count = 0
        self.lock = threading.Lock()

    def gap(self, base, jitter):
        with self.lock:
            j = self.rng.uniform(-jitter, jitter) if jitter else 0.0
        return max(0.0, base + j) / 1000.0

    def serve(self, h, req, chat, prefix, rid, rec):
        o = parse(prefix)
        with self.lock:
            self.count += 1
            k = self.count
        if "status" in o:
            return h.error(int(o["status"]), "injected status")
        if o.get("fail_every") and k % int(o["fail_every"]) == 0:
            return h.error(500, "injected failure")
        want = req.get("max_completion_tokens") or req.get("max_tokens") or 16
        n = int(o.get("n", want))
        prompt = req.get("prompt")
        if chat:
            prompt = " ".join(m.get("content", "") for m in
                              req.get("messages", []))
        ptoks = len(str(prompt or "").split())
        h.start_stream()
        time.sleep(self.gap(o.get("ttft", 0), 0))
        for i in range(n):
            if i:
                time.sleep(self.gap(o.get("itl", 0), o.get("jitter", 0)))
            if i == o.get("stall_after", -1):
                time.sleep(o.get("stall", 30))
                return
            if i == o.get("malformed_after", -1):
                h.chunk('data: {"choices":[{"index":0,"text":"\n\n')
                h.chunk(b"")
                return
            if i == o.get("errevent_after", -1):
                h.event({"error": {"message": "injected", "type":
                                   "server_error", "code": 500}})
                h.event("[DONE]")
                h.chunk(b"")
                return
            if i == o.get("close_after", -1):
                h.wfile.flush()
                h.connection.shutdown(2)
                h.close_connection = True
                return
            h.token(rid, chat, " t%d" % i, rec, first=(i == 0))
        h.finish_stream(rid, chat, ptoks, n, rec, usage=o.get("usage", 1) != 0)


if __name__ == "__main__":
    srv = sse_server.serve(Injected(), int(sys.argv[1]) if len(sys.argv) > 1
                           else 0)
    print("port", srv.server_address[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
