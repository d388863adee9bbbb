#!/usr/bin/python3
"""The OCI image archive is a valid image layout and its strata runs.
usage: image-test.py OCI.tar
Checks, as a registry or runtime would: oci-layout version, index ->
manifest -> config and layer by digest and size, media types, the
config's diff_id = sha256 of the uncompressed layer; then unpacks the
layer into a root file system (the runtime's job) and runs the image's
entrypoint with its Cmd there under chroot: `strata list` (and
--version), with the config's Env only.  No /bin/sh in the image.
chroot needs root; else `unshare -r` gives a user namespace's root.
"""
import gzip
import hashlib
import json
import re
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

fails = []


def check(c, what):
    if not c:
        fails.append(what)


arc = tarfile.open(sys.argv[1])
blob = {}
for m in arc.getmembers():
    if m.isfile():
        blob[m.name] = arc.extractfile(m).read()
check(json.loads(blob["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}, "oci-layout")
index = json.loads(blob["index.json"])
check(index["schemaVersion"] == 2 and index["mediaType"] == "application/vnd.oci.image.index.v1+json",
      "index")


def get(desc):
    b = blob["blobs/sha256/" + desc["digest"].split(":", 1)[1]]
    check(len(b) == desc["size"], "size of " + desc["digest"])
    check("sha256:" + hashlib.sha256(b).hexdigest() == desc["digest"], "digest " + desc["digest"])
    return b


md = index["manifests"][0]
check(md["annotations"]["org.opencontainers.image.ref.name"], "ref name")
man = json.loads(get(md))
check(man["mediaType"] == "application/vnd.oci.image.manifest.v1+json", "manifest type")
cfg = json.loads(get(man["config"]))
check(man["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json", "config type")
check(cfg["os"] == "linux" and cfg["architecture"] == "amd64", "platform")
layer = get(man["layers"][0])
check(man["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip", "layer type")
raw = gzip.decompress(layer)
check(cfg["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(raw).hexdigest()], "diff_id")
print("image: %d bytes archive, layer %d bytes gz (%d raw)" % (
    os.path.getsize(sys.argv[1]), len(layer), len(raw)))

with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "rootfs")
    os.mkdir(root)
    import io
    with tarfile.open(fileobj=io.BytesIO(raw)) as lt:
        names = lt.getnames()
        check(not any(n in ("bin/sh", "usr/bin/sh", "bin/bash") for n in names), "no shell")
        lt.extractall(root)
    argv = cfg["config"]["Entrypoint"] + cfg["config"]["Cmd"]
    env = dict(e.split("=", 1) for e in cfg["config"]["Env"])
    ch = shutil.which("chroot") or "/usr/sbin/chroot"
    pre = [ch, root] if os.geteuid() == 0 else [shutil.which("unshare") or "unshare", "-r", ch, root]
    if os.geteuid() != 0 and subprocess.run(pre + ["/strata/bin/strata", "--version"],
                                            capture_output=True).returncode != 0 \
            and subprocess.run(["unshare", "-r", "true"], capture_output=True).returncode != 0:
        print("SKIP: not root and no user namespaces (unshare -r): cannot chroot into the image")
        sys.exit(77)
    r = subprocess.run(pre + argv, env=env, capture_output=True, text=True, cwd="/")
    check(r.returncode == 0, "strata list in the image: rc %d %s" % (r.returncode, r.stderr[-2000:]))
    check("R8" in r.stdout and "H1" in r.stdout, "list shows the shipped runbook:\n" + r.stdout[:500])
    r = subprocess.run(pre + [argv[0], "--version"], env=env, capture_output=True, text=True)
    check(r.stdout.startswith("strata ") and cfg["config"]["Labels"][
        "org.opencontainers.image.version"] in r.stdout, "version: " + r.stdout + r.stderr)
    # libcurl is opened at run time (not in strata's ldd): the image holds it
    with open(os.path.join(root, "tmp/curl.lua"), "w") as f:
        f.write('print("libcurl " .. tostring(require("strata.sys").inventory().libraries.libcurl))\n')
    r = subprocess.run(pre + [argv[0], "lua", "/tmp/curl.lua"], env=env, capture_output=True, text=True)
    check(re.match(r"libcurl \d+\.\d+", r.stdout) is not None,
          "libcurl loads inside the image: " + r.stdout + r.stderr[-1000:])
    # libxlsxwriter and libyaml are opened at run time too: a workbook is
    # written and YAML read inside the image, where only the bundle's
    # copies are (strata/lib/, with libxlsxwriter's libminizip)
    with open(os.path.join(root, "tmp/xlsx.lua"), "w") as f:
        f.write('local wb = require("strata.report").workbook("/tmp/x.xlsx")\n'
                'wb:worksheet("x"):write(0, 0, "x") wb:close()\n'
                'print(require("strata.yaml").load("a: 1\\n").a)\n')
    r = subprocess.run(pre + [argv[0], "lua", "/tmp/xlsx.lua"], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout == "1\n" and os.path.getsize(root + "/tmp/x.xlsx") > 0,
          "a workbook written and YAML read inside the image: " + r.stdout + r.stderr[-1000:])
    for lib in ("libxlsxwriter.so", "libminizip.so", "libyaml-0.so"):
        where = sorted(n for n in names if os.path.basename(n).startswith(lib))
        check(where and all(n.startswith("strata/lib/") for n in where),
              "%s only in the bundle's lib/: %s" % (lib, where))
    r = subprocess.run(pre + [argv[0], "k8s", "render", "--site", "/strata/specs/site.example.yaml",
                              "-o", "/tmp/k8s"], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and os.path.exists(root + "/tmp/k8s/10-configmap-grafana.yaml"),
          "render inside the image: " + r.stderr)
# an independent reader of the archive: skopeo (containers/image, what a
# site uses to push it: skopeo copy oci-archive:... docker://...) reads
# the layout and copies every blob, checking each digest
sk = shutil.which("skopeo")
if sk:
    r = subprocess.run([sk, "inspect", "oci-archive:" + sys.argv[1]], capture_output=True, text=True)
    check(r.returncode == 0, "skopeo inspect: " + r.stderr)
    if r.returncode == 0:
        info = json.loads(r.stdout)
        check(info["Digest"] == md["digest"] and info["Os"] == "linux", "skopeo: digest and os")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sk, "copy", "-q", "oci-archive:" + sys.argv[1], "dir:" + d + "/x"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "skopeo copy (digests verified): " + r.stderr)
else:
    print("NOTE: skopeo is not installed (.ci/packages has it): the independent reader did not run")
for f in fails:
    print("FAIL:", f)
print("image-test: %s" % ("ok" if not fails else "%d failure(s)" % len(fails)))
sys.exit(1 if fails else 0)
