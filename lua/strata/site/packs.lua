-- strata.site.packs: hardware packs (docs/site.md, "Hardware packs").  A
-- pack is a thresholds profile (the format of specs/thresholds.yaml) kept
-- in specs/packs/, with an entry in specs/packs/index.yaml saying for
-- which hardware it holds:
--
--   gpu-pcie-gen5-x16:
--     file: gpu-pcie-gen5-x16.yaml
--     gpu_model: [H100, H200]     # a detected GPU name has one as a word
--     pci_id: ["10de:2330"]       # or a PCI function has this vendor:device
--   rdma-line-rate:
--     file: rdma-line-rate.yaml
--     rdma: site                  # the site gives rdma.line_rate_gbps
--                                 # (true: an ACTIVE RDMA port was found)
--   rdma-pcie-link:
--     file: rdma-pcie-link.yaml
--     pcie: rdma                  # an RDMA device's PCI function has a
--                                 # PCIe link in sysfs
--
-- The facts come from the site file first (gpu.model, rdma.line_rate_gbps:
-- what `strata site init` wrote), else from the node (NVML's GPU names in
-- a child process, the RDMA ports in sysfs); the PCI functions always come
-- from sysfs (site.host.root: a recorded tree instead of this host).
-- site.site.packs overrides the choice: a list of pack names, or [] for
-- none.  Each choice says why.
local core = require "strata.core"
local yaml = require "strata.yaml"
local spec = require "strata.spec"

local M = {}

-- What the node shows: NVML's GPU names and the first ACTIVE RDMA port.
-- Called in a child process only (M.choose): neither the driver's library
-- nor the libraries sys.inventory names (libcurl's version) may be mapped
-- in the runner (docs/internals.md, "How a test runs").
local function node_facts(want_gpu, want_rdma, root)
    local r = { gpus = {}, pci = {} }
    if want_gpu and not root then
      local ok, inv = pcall(function() return require("strata.cuda").nvml() end)
      for _, g in ipairs(ok and inv.gpus or {}) do r.gpus[#r.gpus + 1] = g.name end
    end
    local ok, inv = pcall(function()
      return require("strata.sys").inventory { root = root }
    end)
    if not ok then return r end
    -- every GPU and RDMA PCI function, RDMA ones named by their device
    local pcie = require "strata.lib.pcie"
    local rdma_of = {}
    for _, f in ipairs(pcie.rdma_functions(inv)) do rdma_of[f.address] = f.rdma end
    for _, d in ipairs(inv.pci or {}) do
      if d.kind == "gpu" or rdma_of[d.address] then
        r.pci[#r.pci + 1] = { address = d.address, kind = d.kind,
          id = ("%s:%s"):format(d.vendor_id or "?", d.device_id or "?"),
          name = d.name, rdma = rdma_of[d.address], link = pcie.link(d.link),
          where = (root or "") .. "/sys/bus/pci/devices/" .. d.address }
      end
    end
    if want_rdma then
      for _, d in ipairs(inv.rdma or {}) do
        for _, p in ipairs(d.ports or {}) do
          if not r.rdma and tostring(p.state or ""):match("ACTIVE") then
            r.rdma = { device = d.name, port = p.port, rate = p.rate }
          end
        end
      end
    end
    return r
end

-- What the packs are chosen by: { gpu_models = {...}, gpu_from, rdma =
-- {device, rate} or nil, rdma_from, pci = { {address, kind, id, name,
-- rdma, link, where} } }.
function M.facts(site)
  local f = { gpu_models = {} }
  local g = type(site.gpu) == "table" and site.gpu or {}
  local r = type(site.rdma) == "table" and site.rdma or {}
  local h = type(site.host) == "table" and site.host or {}
  local model = type(g.model) == "string" and g.model
  local rate = type(r.line_rate_gbps) == "number" and r.line_rate_gbps
  local node = node_facts(not model, not rate, type(h.root) == "string" and h.root or nil)
  f.pci = node.pci or {}
  if model then
    f.gpu_models, f.gpu_from = { model }, "site.gpu.model"
  elseif node.gpus and #node.gpus > 0 then
    f.gpu_models, f.gpu_from = node.gpus, "NVML"
  end
  if rate then
    f.rdma = { rate = rate, device = r.device }
    f.rdma_from = "site.rdma.line_rate_gbps"
  elseif type(node.rdma) == "table" then
    local n = node.rdma
    f.rdma = { device = n.device, port = n.port,
               rate = require("strata.site.discover").rate_gbps(n.rate) }
    f.rdma_from = ("%s/sys/class/infiniband/%s/ports/%s/rate: %s")
      :format(type(h.root) == "string" and h.root or "", n.device,
              tostring(n.port), tostring(n.rate))
  end
  return f
end

-- The index: name -> { file, gpu_model = {...}, rdma = bool, where }.
function M.index(dir)
  local path = dir .. "/index.yaml"
  if core.stat(path) ~= "file" then return {} end
  local doc, lines = spec.protect(yaml.load_file, path)
  local out = {}
  for name, e in pairs(doc or {}) do
    local where = ("%s:%d"):format(path, (lines[doc] or {})[name] or 1)
    if type(e) ~= "table" or type(e.file) ~= "string" then
      spec.error(where, "pack %s: expected { file: NAME.yaml, ... }",
                 tostring(name))
    end
    out[name] = { name = name, file = dir .. "/" .. e.file, where = where,
                  gpu_model = e.gpu_model, pci_id = e.pci_id, rdma = e.rdma,
                  pcie = e.pcie }
  end
  return out
end

-- Does name hold want as a word of its own: "NVIDIA B200" holds B200,
-- "NVIDIA GB200" and "NVIDIA GH200 480GB" hold neither B200 nor H200.
local function has_word(name, want)
  local i = 1
  while true do
    local a, b = name:find(want, i, true)
    if not a then return false end
    if not name:sub(a - 1, a - 1):match("%w") then return true end
    i = b + 1
  end
end

-- Why pack p holds for facts f by a GPU name or a PCI id, or nil.
local function why_device(p, f)
  for _, m in ipairs(p.gpu_model and f.gpu_models or {}) do
    for _, want in ipairs(p.gpu_model) do
      if has_word(m, want) then
        return ("%s %q contains %s"):format(f.gpu_from, m, want)
      end
    end
  end
  for _, d in ipairs(p.pci_id and f.pci or {}) do
    for _, want in ipairs(p.pci_id) do
      if d.id == want then
        return ("%s%s is PCI %s%s (%s/device)"):format(d.rdma and (d.rdma .. " at ")
          or "", d.address, d.id, d.name and (" " .. d.name) or "", d.where)
      end
    end
  end
end

-- Why pack p holds for facts f, or nil.
local function why(p, f)
  if p.gpu_model or p.pci_id then return why_device(p, f) end
  if p.pcie == "rdma" then
    for _, d in ipairs(f.pci) do
      if d.rdma and d.link then
        return ("%s at %s: PCIe %s (%s/current_link_speed)"):format(d.rdma,
          d.address, require("strata.lib.pcie").link_text(d.link), d.where)
      end
    end
    return nil
  end
  if p.rdma then
    if not f.rdma then return nil end
    -- rdma: site - the pack's limits name site.rdma.line_rate_gbps: it
    -- holds only where the site file gives it (check would refuse it else)
    if p.rdma == "site" and f.rdma_from ~= "site.rdma.line_rate_gbps" then
      return nil
    end
    return ("RDMA port %s at %s Gb/s (%s)"):format(tostring(f.rdma.device),
      tostring(f.rdma.rate or "?"), f.rdma_from)
  end
end

-- The packs for this site: a list of { name, file, why } in name order.
-- site_where: the site file (for an override's error).
function M.select(index, site, facts, site_where)
  local names = {}
  for n in pairs(index) do names[#names + 1] = n end
  table.sort(names)
  local s = type(site.site) == "table" and site.site or {}
  local out = {}
  if s.packs ~= nil then
    if type(s.packs) ~= "table" then
      spec.error(site_where or "site", "site.packs: expected a list of pack "
                 .. "names (specs/packs/index.yaml), or [] for none")
    end
    for _, n in ipairs(s.packs) do
      local p = index[n]
      if not p then
        spec.error(site_where or "site", "site.packs: no pack %q (known: %s)",
                   tostring(n), table.concat(names, ", "))
      end
      out[#out + 1] = { name = n, file = p.file, why = "site.packs names it" }
    end
    return out
  end
  for _, n in ipairs(names) do
    local w = why(index[n], facts)
    if w then out[#out + 1] = { name = n, file = index[n].file, why = w } end
  end
  return out
end

-- The packs that hold for this site and their criteria, found in a child
-- process (the index is YAML: a run that reads none must not map libyaml,
-- and the facts come from NVML and sysfs).  Returns the chosen list and,
-- per pack, its thresholds (thresholds.load's shape); raises the child's
-- spec error (a bad site.packs) here.  A pack naming a test this run did
-- not load is no mistake (a GPU pack on `strata check specs/host`).
function M.choose(dir, site, site_where)
  local cjson = require "cjson"
  local st, out = core.isolate(function()
    local ok, res = pcall(function()
      local index = M.index(dir)
      if next(index) == nil then return { packs = {}, crits = {} } end
      local chosen = M.select(index, site, M.facts(site), site_where)
      local crits = {}
      for i, p in ipairs(chosen) do
        crits[i] = require("strata.thresholds").load(p.file)
      end
      return { packs = chosen, crits = crits }
    end)
    if not ok then return cjson.encode { error = tostring(res) } end
    return cjson.encode(res)
  end, { timeout = 120 })
  local ok, r = pcall(cjson.decode, st == "ok" and out or "")
  if not ok or type(r) ~= "table" then
    error(("hardware packs: the child choosing them answered %s"):format(
      st == "ok" and "no list" or tostring(st)), 0)
  end
  if r.error then
    -- already "file:line: what" (a SpecError's text): exit 2 as it is
    spec.protect(error, r.error, 0)
  end
  return r.packs, r.crits
end

return M
