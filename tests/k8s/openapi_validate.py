#!/usr/bin/python3
"""Validate Kubernetes objects (YAML or JSON files, several documents
each) against the Kubernetes OpenAPI v2 definitions offline, strictly
(an unknown field is an error, as `kubectl apply --validate=strict`).

usage: openapi_validate.py SCHEMA.json FILE...
Exit 0 all valid, 1 with one line per problem: file: doc N: path: what.

Python 3 standard library plus python3-yaml (Debian) for YAML: the
stdlib has no YAML parser, and reading the manifests with an
independent parser (not strata's own libyaml binding) is the point.
The rules follow the OpenAPI v2 subset the Kubernetes document uses:
$ref, type object/array/string/integer/number/boolean, properties,
required, additionalProperties, items, format int32/int64 and
int-or-string, enum; a definition without a type (RawExtension, JSON)
takes anything.  JSON null is accepted where a field is optional (the
API server decodes it as unset).
"""
import json
import re
import sys

import yaml

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class Checker:
    def __init__(self, schema):
        self.defs = schema["definitions"]
        self.gvk = {}
        for name, d in self.defs.items():
            for g in d.get("x-kubernetes-group-version-kind", []):
                api = g["version"] if not g["group"] else g["group"] + "/" + g["version"]
                self.gvk[(api, g["kind"])] = name
        self.errors = []

    def err(self, path, msg):
        self.errors.append("%s: %s" % (path or "(top)", msg))

    def resolve(self, s):
        while "$ref" in s:
            s = self.defs[s["$ref"].rsplit("/", 1)[1]]
        return s

    def check(self, v, s, path):
        s = self.resolve(s)
        if v is None:
            return
        t = s.get("type")
        fmt = s.get("format")
        if "enum" in s and v not in s["enum"]:
            self.err(path, "%r is not one of %s" % (v, s["enum"]))
        if t is None:
            return
        if t == "object":
            if not isinstance(v, dict):
                return self.err(path, "expected an object, got %s" % type(v).__name__)
            props = s.get("properties", {})
            addl = s.get("additionalProperties")
            for r in s.get("required", []):
                if r not in v:
                    self.err(path, "required field '%s' is missing" % r)
            for k, x in v.items():
                sub = "%s.%s" % (path, k) if path else k
                if k in props:
                    self.check(x, props[k], sub)
                elif addl is not None:
                    if isinstance(addl, dict):
                        self.check(x, addl, sub)
                else:
                    self.err(sub, "unknown field")
        elif t == "array":
            if not isinstance(v, list):
                return self.err(path, "expected an array, got %s" % type(v).__name__)
            for i, x in enumerate(v):
                self.check(x, s.get("items", {}), "%s[%d]" % (path, i))
        elif t == "string":
            if fmt == "int-or-string":
                if not isinstance(v, (str, int)) or isinstance(v, bool):
                    self.err(path, "expected an integer or a string")
            elif not isinstance(v, str):
                self.err(path, "expected a string, got %s %r" % (type(v).__name__, v))
        elif t == "integer":
            if not isinstance(v, int) or isinstance(v, bool):
                return self.err(path, "expected an integer, got %r" % (v,))
            if fmt == "int32" and not -2**31 <= v < 2**31:
                self.err(path, "%d does not fit int32" % v)
        elif t == "number":
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                self.err(path, "expected a number, got %r" % (v,))
        elif t == "boolean":
            if not isinstance(v, bool):
                self.err(path, "expected a boolean, got %r" % (v,))

    def object(self, obj):
        if not isinstance(obj, dict):
            return self.err("", "a document must be an object")
        key = (obj.get("apiVersion"), obj.get("kind"))
        name = self.gvk.get(key)
        if not name:
            return self.err("", "no definition for apiVersion %s kind %s" % key)
        self.check(obj, {"$ref": "#/definitions/" + name}, "")
        meta = obj.get("metadata") or {}
        n = meta.get("name")
        if obj["kind"].endswith("List") or obj["kind"] == "Status":
            return
        if not isinstance(n, str) or len(n) > 253 or not DNS1123_SUBDOMAIN.match(n):
            self.err("metadata.name", "%r is not a DNS-1123 subdomain" % (n,))


def load(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".json"):
        return [json.loads(text)]
    return [d for d in yaml.safe_load_all(text) if d is not None]


def main(argv):
    schema = json.load(open(argv[1]))
    bad = 0
    for path in argv[2:]:
        for i, doc in enumerate(load(path), 1):
            c = Checker(schema)
            c.object(doc)
            for e in c.errors:
                print("%s: doc %d: %s" % (path, i, e))
                bad += 1
    print("%d problem(s) in %d file(s)" % (bad, len(argv) - 2), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
