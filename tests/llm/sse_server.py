"""An OpenAI-compatible streaming HTTP server skeleton (Python 3 stdlib),
shared by the CI fixture server (fixture_server.py: injected timings and
faults) and the GPU test server (torch_server.py: a real model).

Wire format, from the OpenAI API reference ("Completions" and "Chat
Completions", stream = true): each chunk is a server-sent event
`data: <json>` + blank line; a completion chunk has
object "text_completion" and choices[{index, text, logprobs,
finish_reason}], a chat chunk object "chat.completion.chunk" and
choices[{index, delta{role?, content}, finish_reason}]; with
stream_options.include_usage an extra chunk with "choices": [] and
usage{prompt_tokens, completion_tokens, total_tokens} comes before
`data: [DONE]`.  Errors: the OpenAI error object {"error": {message, type,
param, code}}.

Server-side witness: /metrics speaks the Prometheus text format with
vLLM's metric names (vllm/v1/metrics/loggers.py, see docs/provenance.md
"## LLM serving"), computed from this server's own timestamps; and
/debug/requests gives every request's timestamps (time.monotonic_ns()
at arrival and just before each token chunk is written), keyed by x-request-id.
"""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25,
                0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
                160.0, 640.0, 2560.0]
ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
               0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
E2E_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
               30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
               7680.0]


class Histogram:
    def __init__(self, name, doc, buckets):
        self.name, self.doc, self.buckets = name, doc, buckets
        self.counts = [0] * len(buckets)
        self.sum = 0.0
        self.count = 0

    def observe(self, v):
        self.sum += v
        self.count += 1
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1

    def text(self, labels):
        out = ["# HELP %s %s" % (self.name, self.doc),
               "# TYPE %s histogram" % self.name]
        for b, c in zip(self.buckets, self.counts):
            out.append('%s_bucket{%s,le="%s"} %d' % (self.name, labels,
                                                     repr(float(b)), c))
        out.append('%s_bucket{%s,le="+Inf"} %d' % (self.name, labels,
                                                   self.count))
        out.append("%s_sum{%s} %r" % (self.name, labels, self.sum))
        out.append("%s_count{%s} %d" % (self.name, labels, self.count))
        return out


class Metrics:
    """The vLLM names this server can stand behind (docs/llm.md)."""

    def __init__(self, model):
        self.lock = threading.Lock()
        self.model = model
        self.ttft = Histogram("vllm:time_to_first_token_seconds",
                              "Histogram of time to first token in seconds.",
                              TTFT_BUCKETS)
        self.itl = Histogram("vllm:inter_token_latency_seconds",
                             "Histogram of inter-token latency in seconds.",
                             ITL_BUCKETS)
        self.e2e = Histogram("vllm:e2e_request_latency_seconds",
                             "Histogram of e2e request latency in seconds.",
                             E2E_BUCKETS)
        self.success = 0
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.running = 0
        self.waiting = 0
        self.kv_usage = 0.0

    def text(self):
        lab = 'engine="0",model_name="%s"' % self.model
        with self.lock:
            out = []
            out += ["# HELP vllm:num_requests_running Number of requests "
                    "in model execution batches.",
                    "# TYPE vllm:num_requests_running gauge",
                    "vllm:num_requests_running{%s} %d" % (lab, self.running),
                    "# HELP vllm:num_requests_waiting Number of requests "
                    "waiting to be processed.",
                    "# TYPE vllm:num_requests_waiting gauge",
                    "vllm:num_requests_waiting{%s} %d" % (lab, self.waiting),
                    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means "
                    "100 percent usage.",
                    "# TYPE vllm:kv_cache_usage_perc gauge",
                    "vllm:kv_cache_usage_perc{%s} %r" % (lab, self.kv_usage),
                    "# HELP vllm:prompt_tokens_total Number of prefill "
                    "tokens processed.",
                    "# TYPE vllm:prompt_tokens_total counter",
                    "vllm:prompt_tokens_total{%s} %d" % (lab,
                                                         self.prompt_tokens),
                    "# HELP vllm:generation_tokens_total Number of "
                    "generation tokens processed.",
                    "# TYPE vllm:generation_tokens_total counter",
                    "vllm:generation_tokens_total{%s} %d"
                    % (lab, self.generation_tokens),
                    "# HELP vllm:request_success_total Count of "
                    "successfully processed requests.",
                    "# TYPE vllm:request_success_total counter",
                    'vllm:request_success_total{%s,finished_reason="length"}'
                    ' %d' % (lab, self.success)]
            for h in (self.ttft, self.itl, self.e2e):
                out += h.text(lab)
        return "\n".join(out) + "\n"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # listen() backlog: socketserver's default 5 overflows at concurrency
    # > 5 and the kernel drops SYNs, retried after 1 s, 3 s: seen as 1-2 s
    # TTFT tails on the client that the server's own TTFT cannot see
    request_queue_size = 1024

    def __init__(self, addr, backend, model="strata-fixture"):
        super().__init__(addr, Handler)
        self.backend = backend
        self.model = model
        self.metrics = Metrics(model)
        self.records = {}
        self.rec_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # --- plain replies -----------------------------------------------------
    def reply(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, message, etype="server_error"):
        self.reply(status, json.dumps({"error": {
            "message": message, "type": etype, "param": None,
            "code": status}}))

    def do_GET(self):
        srv = self.server
        # a fixture's timing prefix (/ttft=50,.../metrics) is ignored here
        route = "/" + self.path.rsplit("/", 1)[-1]
        if self.path.endswith("/v1/models"):
            route = "/v1/models"
        elif self.path.endswith("/debug/requests"):
            route = "/debug/requests"
        if route == "/metrics":
            self.reply(200, srv.metrics.text(),
                       "text/plain; version=0.0.4; charset=utf-8")
        elif route == "/v1/models":
            self.reply(200, json.dumps({"object": "list", "data": [
                {"id": srv.model, "object": "model", "owned_by": "strata"}]}))
        elif route == "/health":
            self.reply(200, "")
        elif route == "/debug/requests":
            with srv.rec_lock:
                self.reply(200, json.dumps(srv.records))
        else:
            self.error(404, "no route " + self.path, "not_found")

    # --- streaming ---------------------------------------------------------
    def chunk(self, data):
        b = data.encode() if isinstance(data, str) else data
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def event(self, obj):
        self.chunk("data: " + (obj if isinstance(obj, str)
                               else json.dumps(obj)) + "\n\n")

    def do_POST(self):
        arrival = time.monotonic_ns()
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.error(400, "body is not JSON", "invalid_request_error")
        path = self.path
        prefix, _, tail = path.partition("/v1/")
        if tail not in ("completions", "chat/completions"):
            return self.error(404, "no route " + path, "not_found")
        chat = tail == "chat/completions"
        rid = self.headers.get("x-request-id") or "req-%d" % arrival
        rec = {"arrival_ns": arrival, "sent_ns": [], "path": path}
        with srv.rec_lock:
            srv.records[rid] = rec
        srv.backend.serve(self, req, chat, prefix.strip("/"), rid, rec)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def token(self, rid, chat, text, rec, first=False):
        now = int(time.time())
        if chat:
            delta = {"content": text}
            if first:
                delta = {"role": "assistant", "content": text}
            obj = {"id": "chatcmpl-" + rid, "object": "chat.completion.chunk",
                   "created": now, "model": self.server.model,
                   "choices": [{"index": 0, "delta": delta,
                                "logprobs": None, "finish_reason": None}]}
        else:
            obj = {"id": "cmpl-" + rid, "object": "text_completion",
                   "created": now, "model": self.server.model,
                   "choices": [{"index": 0, "text": text, "logprobs": None,
                                "finish_reason": None}]}
        # serialised first, the time taken just before the write: a client
        # on this host cannot see the token earlier than this
        data = ("data: " + json.dumps(obj) + "\n\n").encode()
        rec["sent_ns"].append(time.monotonic_ns())
        self.chunk(data)

    def finish_stream(self, rid, chat, prompt_tokens, completion_tokens,
                      rec, usage=True):
        now = int(time.time())
        self.account(rec, prompt_tokens, completion_tokens)
        if usage:
            self.event({"id": rid, "object": "chat.completion.chunk" if chat
                        else "text_completion", "created": now,
                        "model": self.server.model, "choices": [],
                        "usage": {"prompt_tokens": prompt_tokens,
                                  "completion_tokens": completion_tokens,
                                  "total_tokens": prompt_tokens
                                  + completion_tokens}})
        self.event("[DONE]")
        self.chunk(b"")   # the zero-length chunk ends the body

    def account(self, rec, prompt_tokens, completion_tokens):
        m = self.server.metrics
        s = rec["sent_ns"]
        with m.lock:
            if s:
                m.ttft.observe((s[0] - rec["arrival_ns"]) / 1e9)
                for a, b in zip(s, s[1:]):
                    m.itl.observe((b - a) / 1e9)
                m.e2e.observe((s[-1] - rec["arrival_ns"]) / 1e9)
            m.success += 1
            m.prompt_tokens += prompt_tokens
            m.generation_tokens += completion_tokens


def serve(backend, port=0, model="strata-fixture", host="127.0.0.1"):
    """Start a server thread; returns the server (server_address[1] is the
    port)."""
    # a thread that took its timestamp waits at most this long for the GIL
    # before its write (the default 5 ms shows in the timings)
    import sys
    sys.setswitchinterval(0.0005)
    srv = Server((host, port), backend, model)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv
