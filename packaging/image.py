#!/usr/bin/python3
"""Make strata's OCI image from the portable bundle, with no registry and
no container tool: the OCI image layout (opencontainers/image-spec
image-layout.md: oci-layout, index.json, blobs/sha256/) written
directly, one gzip layer, saved as one tar archive a site loads into its
private registry (`skopeo copy oci-archive:FILE docker://REG/strata:V`,
or `podman load -i FILE`).  docs/kubernetes.md.

usage: image.py BUNDLE.tar.gz SOURCE_DIR OUT_DIR VERSION
-> OUT_DIR/strata-VERSION-oci.tar (path printed)

The root file system: /strata (the bundle: bin/strata, lib/, lua/,
specs/) plus packaging/grafana, the shared libraries the bundle leaves to
the node (glibc, OpenSSL, rdma-core ... as ldd resolves them here, at
their paths, with the dynamic loader), rdma-core's provider libraries,
libcurl.so.4, libibverbs.so.1 and libcrypto.so.3 with their libraries and
those of the bundle's liburing.so.2, libxlsxwriter.so.4 and libyaml-0.so.2
(strata opens them at run time), /etc/libibverbs.d (verbs devices inside the pod), the CA
bundle, and an empty /tmp.  No shell and no package manager: the
entrypoint is /strata/bin/strata itself.  Reproducible: sorted entries,
mtime SOURCE_DATE_EPOCH (default 0), uid/gid 0.
"""
import glob
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MTIME = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))


def ldd(path, env=None):
    out = subprocess.run(["ldd", path], capture_output=True, text=True, env=env).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            libs.append(parts[2])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])          # the dynamic loader
        if "not found" in line:
            sys.exit("image.py: %s: %s" % (path, line.strip()))
    return libs


def main():
    bundle, src, out, ver = sys.argv[1:5]
    files = {}   # path in the image -> ("file", host path) | ("dir",) | ("link", target)

    def add_host(path):
        """A host file at its own path; symlinks become links to what they name."""
        real = os.path.realpath(path)
        if os.path.islink(path) and os.path.dirname(real) == os.path.dirname(os.path.abspath(path)):
            files[path.lstrip("/")] = ("link", os.path.basename(real))
            files[real.lstrip("/")] = ("file", real)
        else:
            files[path.lstrip("/")] = ("file", real)

    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(bundle) as t:
            t.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(tmp)
        top = glob.glob(tmp + "/strata-*")[0]
        for root, dirs, names in os.walk(top):
            dirs.sort()
            rel = os.path.relpath(root, top)
            files[os.path.normpath("strata/" + rel)] = ("dir",)
            for n in sorted(names):
                files[os.path.normpath("strata/%s/%s" % (rel, n))] = ("file", os.path.join(root, n))
        if "strata/packaging/grafana/strata-rdma.json" not in files:   # older bundles
            files["strata/packaging/grafana/strata-rdma.json"] = (
                "file", os.path.join(src, "packaging/grafana/strata-rdma.json"))
        bundled = set(os.listdir(top + "/lib"))
        need = ldd(top + "/bin/strata")
        providers = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libibverbs/*.so"))
        # opened at run time (engine/core/lazylib.h), not in ldd: libcurl,
        # libibverbs (also the providers' own dependency, with libnl),
        # liburing, libcrypto, libxlsxwriter (with libminizip, libz and
        # libcrypto), libyaml; the bundle's copy where it has one
        for lazy in ("libcurl.so.4", "libibverbs.so.1", "liburing.so.2", "libcrypto.so.3",
                     "libxlsxwriter.so.4", "libyaml-0.so.2"):
            providers.append(top + "/lib/" + lazy if lazy in bundled
                             else "/usr/lib/x86_64-linux-gnu/" + lazy)
        for p in providers:
            need.append(p)
            need.extend(ldd(p))
        for lib in need:
            # a bundled library serves from strata/lib/ (the binary's
            # DT_RPATH serves the libraries it opens too)
            if os.path.basename(lib) in bundled:
                continue
            if lib.startswith(tmp):
                continue
            add_host(lib)
        # the ELF interpreter at the path the binary names
        add_host("/lib64/ld-linux-x86-64.so.2")
        for d in sorted(glob.glob("/etc/libibverbs.d/*.driver")):
            files[d.lstrip("/")] = ("file", d)
        if os.path.exists("/etc/ssl/certs/ca-certificates.crt"):
            files["etc/ssl/certs/ca-certificates.crt"] = ("file", "/etc/ssl/certs/ca-certificates.crt")
        files["tmp"] = ("dir", 0o1777)
        files["results"] = ("dir", 0o777)

        # parents of everything, as directories
        for p in list(files):
            d = os.path.dirname(p)
            while d and d not in files:
                files[d] = ("dir",)
                d = os.path.dirname(d)

        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as lt:
            for p in sorted(files):
                e = files[p]
                ti = tarfile.TarInfo(p)
                ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = MTIME, 0, 0, "", ""
                if e[0] == "dir":
                    ti.type, ti.mode = tarfile.DIRTYPE, e[1] if len(e) > 1 else 0o755
                    lt.addfile(ti)
                elif e[0] == "link":
                    ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, e[1], 0o777
                    lt.addfile(ti)
                else:
                    st = os.stat(e[1])
                    ti.size, ti.mode = st.st_size, st.st_mode & 0o755 | 0o444
                    with open(e[1], "rb") as f:
                        lt.addfile(ti, f)
        layer_tar = raw.getvalue()
        gz = io.BytesIO()
        with gzip.GzipFile(fileobj=gz, mode="wb", mtime=MTIME, compresslevel=9) as g:
            g.write(layer_tar)
        layer = gz.getvalue()

    def digest(b):
        return "sha256:" + hashlib.sha256(b).hexdigest()

    created = "1970-01-01T00:00:00Z" if MTIME == 0 else \
        __import__("datetime").datetime.utcfromtimestamp(MTIME).strftime("%Y-%m-%dT%H:%M:%SZ")
    config = {
        "created": created, "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": ["/strata/bin/strata"], "Cmd": ["list"],
                   # $ORIGIN (the bundle's rpath) needs /proc/self/exe;
                   # a runtime mounts /proc, a bare chroot does not
                   "Env": ["PATH=/strata/bin", "STRATA_HOME=/strata",
                           "LD_LIBRARY_PATH=/strata/lib"],
                   "WorkingDir": "/strata",
                   "Labels": {"org.opencontainers.image.title": "strata",
                              "org.opencontainers.image.version": ver}},
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
        "history": [{"created": created, "created_by": "packaging/image.py (strata bundle)"}],
    }
    cfg = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    manifest = {
        "schemaVersion": 2, "mediaType": MT_MANIFEST,
        "config": {"mediaType": MT_CONFIG, "digest": digest(cfg), "size": len(cfg)},
        "layers": [{"mediaType": MT_LAYER, "digest": digest(layer), "size": len(layer)}],
        "annotations": {"org.opencontainers.image.version": ver},
    }
    man = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [{
        "mediaType": MT_MANIFEST, "digest": digest(man), "size": len(man),
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"org.opencontainers.image.ref.name": ver}}]}
    idx = json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "strata-%s-oci.tar" % ver)
    with tarfile.open(path + ".tmp", "w", format=tarfile.PAX_FORMAT) as a:
        def put(name, data, kind=tarfile.REGTYPE):
            ti = tarfile.TarInfo(name)
            ti.mtime, ti.type = MTIME, kind
            if kind == tarfile.DIRTYPE:
                ti.mode = 0o755
                a.addfile(ti)
            else:
                ti.size, ti.mode = len(data), 0o644
                a.addfile(ti, io.BytesIO(data))
        put("blobs", None, tarfile.DIRTYPE)
        put("blobs/sha256", None, tarfile.DIRTYPE)
        for b in sorted([cfg, man, layer], key=digest):
            put("blobs/sha256/" + digest(b)[7:], b)
        put("index.json", idx)
        put("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    os.replace(path + ".tmp", path)
    print(path)


if __name__ == "__main__":
    main()
