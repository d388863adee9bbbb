-- strata lua tests/k8s/yamlout.lua: strata.k8s.yamlout's YAML reads back
-- (strata.yaml, libyaml) as the very table it was written from, for the
-- strings YAML likes to reinterpret.
local yamlout = require "strata.k8s.yamlout"
local yaml = require "strata.yaml"
local cjson = require "cjson"
local fails = 0
local function canon(v)
  if type(v) ~= "table" then return v end
  local ks = {}
  for k in pairs(v) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  local out = {}
  for _, k in ipairs(ks) do out[#out + 1] = cjson.encode(tostring(k)) .. ":" .. cjson.encode(canon(v[k])) end
  return "{" .. table.concat(out, ",") .. "}"
end
local doc = {
  plain = "abc", slash = "rdma/rdma_shared_device_a", yes = "yes", no = "No", null = "null",
  tilde = "~", num = "18515", float = "1e3", hex = "0x10", colon = "a: b", colon_end = "a:",
  hash = "a #b", dash = "- x", quote = 'say "hi"', backslash = "a\\b", tab = "a\tb",
  empty = "", space = " lead", at = "@x", star = "*x", amp = "&x", bang = "!x",
  block = "line 1\n  indented\n\nlast\n", block_keep = "x\n\n\n", block_strip = "no newline\nat end",
  block_lead = "  leading spaces\nsecond\n",
  int = 42, neg = -7, real = 0.25, big = 2 ^ 40, t = true, f = false,
  list = { "a", "b", { k = "v", n = 1 }, { "nested", "list" } },
  empty_list = yamlout.list {}, empty_map = {},
  ["k8s.v1.cni.cncf.io/networks"] = "ns/net", ["key with space"] = "v", ["true"] = "key",
}
local text = yamlout.dump(doc)
local back = yaml.load(text)
for k, v in pairs(doc) do
  local a, b = canon(v), canon(back[k])
  if type(v) == "table" and next(v) == nil then
    if type(back[k]) ~= "table" or next(back[k]) ~= nil then
      fails = fails + 1
      io.stderr:write("FAIL: ", k, " empty table\n")
    end
  elseif a ~= b and not (type(v) == "number" and back[k] == v) then
    fails = fails + 1
    io.stderr:write(("FAIL: %s: wrote %s, read %s\n"):format(k, tostring(a), tostring(b)))
  end
end
if arg[1] then   -- for a second reader (PyYAML, YAML 1.1): the text and the JSON
  local f = assert(io.open(arg[1] .. ".yaml", "w")) f:write(text) f:close()
  f = assert(io.open(arg[1] .. ".json", "w"))
  local j = {}
  for k, v in pairs(doc) do if type(v) ~= "table" or next(v) ~= nil then j[k] = v end end
  f:write(cjson.encode(j)) f:close()
end
if fails > 0 then io.stderr:write(text) end
io.stderr:write(fails == 0 and "yamlout: ok\n" or "")
os.exit(fails == 0 and 0 or 1)
