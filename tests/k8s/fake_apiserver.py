#!/usr/bin/python3
"""A stand-in for the Kubernetes API server over HTTPS: answers the
requests strata's client makes with the recorded answers in
fixtures/k8s (their README names where each shape comes from).
Checks what the real server checks first: the bearer token (401
otherwise, as a metav1.Status).  Prints the port it listens on.
usage: fake_apiserver.py FIXTURES CERT KEY TOKEN [forbid]
"""
import http.server
import json
import os
import ssl
import sys
import urllib.parse

FIX, CERT, KEY, TOKEN = sys.argv[1:5]
FORBID = len(sys.argv) > 5 and sys.argv[5] == "forbid"
SELECTOR = "app.kubernetes.io/name=strata,app.kubernetes.io/component=agent"


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, code, name):
        body = open(os.path.join(FIX, name), "rb").read()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Failure", "message": "Unauthorized",
                               "reason": "Unauthorized", "code": 401}).encode()
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path == "/api/v1/namespaces/rdma-test/pods" and q.get("labelSelector") == [SELECTOR]:
            return self.send(403 if FORBID else 200,
                             "status-forbidden.json" if FORBID else "pods-agents.json")
        if u.path == "/api/v1/nodes/gpu-node-1":
            return self.send(200, "node-gpu-node-1.json")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
