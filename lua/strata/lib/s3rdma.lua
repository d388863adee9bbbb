-- strata.lib.s3rdma: what the S3-over-RDMA specs (layer s3rdma) share:
-- the client and counter source from the site file, scaling a RUNBOOK row
-- to what the site allows, and one measured phase with its proof.
--
-- site.s3rdma (keys absent here fall back to site.s3):
--   endpoint, region, bucket, create_bucket, addressing,
--   credentials_file, profile, access_key_env, secret_key_env
--   metrics_url        exposition endpoint with minio_api_rdma_*_total
--                      (AIStor: http://<host>:9000/minio/metrics/v3/api/rdma)
--   prometheus_url     or an existing Prometheus server (instant queries)
--   metrics_bearer_env variable holding the metrics JWT (a secret)
--   provider           "rc" (hipobj-rc-v2) or "cuobject" (NVIDIA cuObject /
--                      DC: what AIStor speaks; SKIPs without
--                      libcuobjclient.so); unset: the one the endpoint
--                      speaks (lib/s3preflight.provider), else "rc"
--   device, port, gid_index   the local RDMA device (default: first)
--   requests           requests per phase (default 2 x concurrency)
--   max_object_mb, max_concurrency   scale RUNBOOK rows down (a note says)
--   sizes, concurrency lists that restrict E3's matrix (others SKIP)
--   http_fallback      retry DECLINED requests over HTTP (counted apart)
--   landing_grace_s    wait for the data after the reply (default 2)
--   put_grace_ms       hipobj-rc-v2 PUT: READY sent -> WRITE posted
--                      (default 100, as hipObject's client)
--   control_host_port  hipobj-rc-v2 control path: send and sign host:port
--                      (default false: host without port, S3RDMA-WIRE)
--   token_contract     cuObject token form AIStor takes: "current" (the
--                      81-char descriptor verbatim, AIStor >= 2026-08-07,
--                      default) or "suffix" (older: + ":<addr>:<size>")
local s3site = require "strata.lib.s3site"
local s3rdma = require "strata.s3rdma"
local prom_client = require "strata.prom"
local core = require "strata.core"
local nic = require "strata.lib.s3nic"

local M = {}
local MiB = 1048576

-- site.s3rdma merged over site.s3.
function M.site(t)
  local a, b = t.site.s3rdma, t.site.s3
  local s = {}
  for k, v in pairs(type(b) == "table" and b or {}) do s[k] = v end
  for k, v in pairs(type(a) == "table" and a or {}) do s[k] = v end
  return s
end

-- An s3.client for the endpoint; SKIP when the site names none.
function M.client(t)
  local s = M.site(t)
  return s3site.client(t, s, "site.s3rdma (or site.s3)"), s
end

-- AIStor's S3-over-RDMA counters: a GET moves read_*, a PUT or UploadPart
-- write_* (docs/s3-rdma.md "Counters"; names in docs/provenance.md).  The
-- byte counters must be there; the ops counters are optional.
local COUNTERS = {
  { "read_bytes", "minio_api_rdma_read_bytes_total", true },
  { "write_bytes", "minio_api_rdma_write_bytes_total", true },
  { "read_ops", "minio_api_rdma_read_ops_total" },
  { "write_ops", "minio_api_rdma_write_ops_total" },
}

local function missing(src, name)
  error(("s3rdma.counters: %s has no %s (not an S3-over-RDMA build, or the "
         .. "wrong endpoint)"):format(src, name), 0)
end

-- M.counters{url = exposition page | prometheus = server, bearer_env,
-- timeout} -> {read_bytes, write_bytes, read_ops, write_ops, source}, or
-- {absent = why, source} when the page answers 404.  Neither source: SKIP.
function M.counters(o)
  local url, prom = o.url ~= "" and o.url, o.prometheus ~= "" and o.prometheus
  if not url and not prom then
    core.skip("no RDMA counter source (site s3rdma.metrics_url or "
              .. "s3rdma.prometheus_url)")
  end
  if o.bearer_env and not os.getenv(o.bearer_env) then
    core.skip("the metrics token variable " .. o.bearer_env .. " is not set")
  end
  local out = { source = url or prom }
  local opt = { bearer_env = o.bearer_env, timeout = o.timeout or 10 }
  if url then
    opt.url, opt.absent_ok = url, true
    local samples, why = prom_client.scrape(opt)
    if not samples then return { absent = why, source = url } end
    for _, c in ipairs(COUNTERS) do
      for _, x in ipairs(samples) do
        if x.name == c[2] then out[c[1]] = (out[c[1]] or 0) + x.value end
      end
      if c[3] and not out[c[1]] then missing(url, c[2]) end
    end
    return out
  end
  opt.url = prom
  for _, c in ipairs(COUNTERS) do
    opt.query = "sum(" .. c[2] .. ")"
    local v = prom_client.query(opt)[1]
    if v then out[c[1]] = v.value
    elseif c[3] then missing("Prometheus " .. prom, c[2]) end
  end
  return out
end

-- The counter source, or nil (then the counter witness is "absent").
local function counters(s)
  if not s.metrics_url and not s.prometheus_url then return nil end
  return M.counters { url = s.metrics_url, prometheus = s.prometheus_url,
                      bearer_env = s.metrics_bearer_env }
end

-- Scale a RUNBOOK row (size, concurrency) to the site's limits.
function M.scale(t, s, size, conc)
  -- the site's scale: block first (strata.scale), then s3rdma's own keys
  local sz = t.scale and t.scale.bytes(size, "object size") or size
  local cc = t.scale and t.scale.streams(conc, "concurrency") or conc
  size, conc = sz, cc
  if s.max_object_mb and sz > s.max_object_mb * MiB then
    sz = math.floor(s.max_object_mb * MiB)
  end
  if s.max_concurrency and cc > s.max_concurrency then cc = s.max_concurrency end
  if sz ~= size or cc ~= conc then
    -- worded as strata.scale's notes: the Summary marks the row scaled
    t.note(("scaled by the site (s3rdma.max_object_mb / max_concurrency): "
            .. "%d MiB x %d -> %.3f MiB x %d"):format(size // MiB, conc,
                                                   sz / MiB, cc))
  end
  return sz, cc
end

-- The local RDMA port: device, port, netdev, driver family, active MTU
-- (the first device when the site names none), or nil.
local function local_port(s)
  local ok, verbs = pcall(require, "strata.verbs")
  if not ok then return nil end
  local ok2, inv = pcall(verbs.inventory, s.device)
  if not ok2 or type(inv) ~= "table" or not inv[1] then return nil end
  local d = inv[1]
  local p = (d.ports or {})[s.port or 1] or {}
  return { device = d.name, port = s.port or 1, netdev = p.netdev,
           mtu = p.active_mtu, family = nic.family(d.name, d.driver) }
end

-- The fourth witness's figures (lib/s3nic.lua measure) as metrics: per
-- phase, and folded over the row's phases (what the criterion "nic" in
-- specs/thresholds.yaml judges): nic_witness "read" once a phase read the
-- RDMA byte counters, else "absent"; the lowest RDMA-counter share of the
-- bytes moved; nic_netdev "read" / "n/a" (rxe) / "absent", and the
-- largest netdev share and bytes of the phases whose netdev was read.
function M.nic_metrics(out, prefix, nw)
  out[prefix .. "witness.nic"] = nw.witness
  out[prefix .. "nic_rdma_bytes"] = nw.rdma_bytes
  out[prefix .. "nic_rdma_ratio"] = nw.rdma_ratio
  out[prefix .. "nic_netdev_bytes"] = nw.netdev_bytes
  out[prefix .. "nic_netdev_share"] = nw.netdev_share
  if out.nic_witness ~= "read" then out.nic_witness = nw.witness end
  if nw.witness ~= "read" then return end
  out.nic_rdma_ratio_min = math.min(out.nic_rdma_ratio_min or math.huge,
                                    nw.rdma_ratio)
  if out.nic_netdev ~= "read" then out.nic_netdev = nw.netdev end
  if nw.netdev == "read" and nw.netdev_share then
    out.nic_netdev_share_max = math.max(out.nic_netdev_share_max or 0,
                                        nw.netdev_share)
    out.nic_netdev_bytes_max = math.max(out.nic_netdev_bytes_max or 0,
                                        nw.netdev_bytes)
  end
end

-- What an error counter is: strata.lib.rdma_errors, as for every reader.
local is_error = require("strata.lib.rdma_errors").is_error

-- One measured phase over RDMA (mode "rc") or HTTP ("tcp"): the server's
-- counters before and after, the three witnesses judged, metrics under
-- prefix.  Returns the run's result and the proof.
function M.phase(t, cl, s, w, prefix, out)
  w.client = cl
  w.bucket = s.bucket
  if w.mode == "rc" and not s.provider then
    -- none in the site: the one the preflight chose (the endpoint's own,
    -- lib/s3preflight.provider), as every row here needs E3P or E4P
    for _, id in ipairs { "E3P", "E4P" } do
      local m = t.result(id)
      if m and m.provider then s.provider = m.provider break end
    end
  end
  if w.mode == "rc" and s.provider then w.mode = s.provider end
  w.device, w.port = s.device, s.port
  if s.gid_index ~= "auto" then w.gid_index = s.gid_index end
  w.http_fallback = s.http_fallback
  w.landing_grace = s.landing_grace_s
  if s.put_grace_ms then w.put_grace = s.put_grace_ms / 1000 end
  if w.mode == "rc" then w.control_host_port = s.control_host_port end
  if w.mode == "cuobject" then w.token_contract = s.token_contract end
  w.requests = w.requests or s.requests or math.max(2, 2 * (w.concurrency or 1))
  w.prefix = w.prefix or ("strata-" .. t.id .. "-")
  local lp = w.mode ~= "tcp" and local_port(s) or nil
  local n0 = lp and nic.read(lp.device, lp.port, lp.netdev)
  local c0 = w.mode ~= "tcp" and counters(s) or nil
  local r = s3rdma.run(w)
  local c1 = c0 and counters(s) or nil
  local n1 = n0 and nic.read(lp.device, lp.port, lp.netdev)
  local pc0, pc1 = n0 and n0.hw, n1 and n1.hw
  for _, k in ipairs { "gbps", "mibps", "cpu_util_pct", "cpu_core_pct",
                       "lat_p50_ms", "lat_p95_ms", "lat_p99_ms", "ok",
                       "failed", "declined", "fallback_requests",
                       "fallback_bytes", "bytes", "requests",
                       "verify_errors", "readback_errors" } do
    local v = r[k == "gbps" and "throughput_gbps" or
                k == "mibps" and "throughput_mibps" or k]
    if v ~= nil then out[prefix .. k] = v end
  end
  out[prefix .. "size"] = w.size
  out[prefix .. "concurrency"] = w.concurrency
  if r.first_error then t.note(prefix .. " first error: " .. r.first_error) end
  if w.mode == "tcp" then return r end
  local nw = n0 and n1 and nic.measure(lp.family, n0, n1, r.bytes or 0, lp.mtu)
             or { witness = "absent", netdev = "absent",
                  why = "no local RDMA port to read" }
  local p = s3rdma.prove(r, c0, c1)
  out[prefix .. "verdict"] = p.verdict
  out[prefix .. "proven"] = p.verdict == "PROVEN"
  out[prefix .. "witness.reply"] = p.reply
  out[prefix .. "witness.landed"] = p.landed
  out[prefix .. "witness.counters"] = p.counters
  M.nic_metrics(out, prefix, nw)
  out[prefix .. "witnesses"] = p.witnesses .. ", NIC counters " .. nw.witness
  t.note(prefix .. " NIC counters " .. nw.witness .. ": " .. nw.why)
  out[prefix .. "counter_read_delta"] = p.delta_read
  out[prefix .. "counter_write_delta"] = p.delta_write
  -- how far the server's counters are from the bytes moved; judged by
  -- the criterion "<phase>.counter_gap" (specs/thresholds.yaml)
  out[prefix .. "counter_gap"] = p.counter_gap
  if p.counters_absent then
    t.note(prefix .. " counter witness absent: " .. p.counters_absent)
  end
  if r.token_decoded then out[prefix .. "token"] = r.token_decoded end
  if pc0 and pc1 then
    for k, v in pairs(pc1) do
      if is_error(k) and pc0[k] then
        local key = "rdma_err." .. k
        out[key] = (out[key] or 0) + (v - pc0[k])
      end
    end
  end
  -- the verdict is the criteria's ("<phase>.proven"): the reason is shown
  if p.verdict == "DECLINED" then
    t.note(prefix .. " DECLINED: " .. p.reason)
  elseif p.verdict ~= "PROVEN" then
    t.note(prefix .. " " .. p.reason)
  end
  return r, p
end

-- PUT a set of objects then GET them back, both over RDMA (read-back of
-- the PUT and every GET byte checked).
function M.put_then_get(t, size, conc, memory)
  local cl <close>, s = M.client(t)
  local sz, cc = M.scale(t, s, size, conc)
  local out = {}
  local objects = math.max(cc, 2)
  M.phase(t, cl, s, { mode = "rc", op = "put", size = sz, concurrency = cc,
                      objects = objects, requests = objects, readback = true,
                      memory = memory }, "put.", out)
  M.phase(t, cl, s, { mode = "rc", op = "get", size = sz, concurrency = cc,
                      objects = objects, memory = memory }, "get.", out)
  return out
end

M.UNITS = { ["get.gbps"] = "Gbit/s", ["put.gbps"] = "Gbit/s",
            ["mp.gbps"] = "Gbit/s", ["get.lat_p99_ms"] = "ms",
            ["put.lat_p99_ms"] = "ms", ["get.cpu_util_pct"] = "%",
            ["put.cpu_util_pct"] = "%" }

return M
