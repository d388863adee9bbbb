#!/usr/bin/python3
"""endpoint_kind.py STRATA - issue 27 item 4: E3P asks the endpoint what it
is and defaults the S3-over-RDMA provider to the one it speaks.  No AIStor
can be had here: a stand-in HTTP endpoint answers as MinIO's server does
(the header "Server: MinIO": minio/minio @7aac2a2 cmd/api-headers.go:54,
cmd/build-constants.go:59) and serves the RDMA metrics path
(/minio/metrics/v3/api/rdma, rdma-training metrics.py); the site names no
provider.  E3P's sheet must show provider cuobject "detected", and the
Summary count cuObject's preflight findings; with the header of strata's
own reference server the provider stays rc.  Workbook read back."""
import http.server, os, subprocess, sys, tempfile, threading
import openpyxl

strata = sys.argv[1]
home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tmp = tempfile.mkdtemp(prefix="strata-endpoint.")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()


def serve(server_header):
    class H(http.server.BaseHTTPRequestHandler):
        def version_string(self):
            return server_header
        def answer(self, body):
            code = 200 if self.path in ("/", "/minio/metrics/v3/api/rdma") else 404
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return body
        def do_HEAD(self):
            self.answer(b"")
        def do_GET(self):
            self.wfile.write(self.answer(b"# no samples\n"))
        def log_message(self, *a):
            pass
    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv

def e3p(server_header, tag):
    srv = serve(server_header)
    site = os.path.join(tmp, tag + ".yaml")
    with open(site, "w") as f:
        f.write("site:\n  name: endpoint-kind\ns3rdma:\n"
                "  endpoint: http://127.0.0.1:%d\n  bucket: strata\n"
                "  max_object_mb: 2\n  max_concurrency: 2\n" % srv.server_port)
    out = os.path.join(tmp, tag + ".xlsx")
    env = dict(os.environ, CUFILE_ENV_PATH_JSON=os.path.join(tmp, "absent.json"),
               AWS_ACCESS_KEY_ID="AKIDENDPOINT", AWS_SECRET_ACCESS_KEY="not-a-secret")
    p = subprocess.run([strata, "run", "--site", site, "--only", "E3P", "-o", out,
                        os.path.join(home, "specs")], env=env,
                       capture_output=True, text=True)
    srv.shutdown()
    check(p.returncode != 2, "%s: strata run exits %d" % (tag, p.returncode))
    wb = openpyxl.load_workbook(out)
    rows, reason = {}, None
    for n in wb.sheetnames:
        if n.startswith("E3P"):
            for r in wb[n].iter_rows(values_only=True):
                if r[0] in ("endpoint", "provider", "dc_transport"):
                    rows[r[0]] = r
    head = None
    for r in wb["Summary"].iter_rows(values_only=True):
        if r[0] == "ID":
            head = list(r)
        elif head and r[0] == "E3P":
            reason = dict(zip(head, r)).get("Reason")
    return rows, reason or "", p.stderr

rows, reason, err = e3p("MinIO", "minio")
prov = rows.get("provider") or ()
check(len(prov) > 3 and prov[2] == "cuobject" and "detected: Server: MinIO"
      in (prov[3] or ""), "MinIO: provider cuobject, detected: %r" % (prov,))
if not (os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband")):
    check("findings on the E3P sheet" in reason,
          "MinIO: cuObject's findings counted beside the SKIP: %r" % reason)
rows, reason, err = e3p("strata-s3rdma-ref", "ref")
prov = rows.get("provider") or ()
check(len(prov) > 3 and prov[2] == "rc" and "not MinIO" in (prov[3] or ""),
      "reference server: provider rc, said why: %r" % (prov,))
check("AKIDENDPOINT" not in err and "not-a-secret" not in err, "no secret on stderr")
sys.exit(1 if check.fails else 0)
