-- RUNBOOK E2: AIStor's own inter-node RDMA.  An S3 PUT load makes the
-- servers move erasure shards between nodes; AIStor's counters tell how
-- much of that went over RDMA, how much fell back to TCP (the pool
-- fallback counter may rise without a fault: pool exhausted, a shard
-- larger than a slab), and whether the NICs pushed back.  RDMA bytes,
-- TCP fallbacks and errors are reported together, as the RUNBOOK asks.
--
-- site.aistor.internode_metrics_url   the v3 exposition holding the
--   minio_system_network_internode_rdma_* series (metrics JWT in the
--   variable site.aistor.metrics_bearer_env: a secret, never printed)
-- site.aistor.s3   E2's own S3 target (endpoint, bucket, credentials...,
--   the shape of site.s3, merged over it); absent: site.s3 (on a real
--   site AIStor is site.s3)
-- site.aistor.{object_mb, concurrency, duration}   the load (64 MiB x 16, 30 s)
-- site.aistor.witness_metrics_url   optional: the receiving node's
--   exposition; its minio_system_network_internode_recv_bytes_total must
--   have grown by at least the RDMA bytes the sender counts (measured as
--   witness_shortfall_bytes, judged by E2.witness_received; the lab's
--   reference peer counts exactly the shard bytes it received and
--   verified; a real AIStor counts all its inter-node bytes there, so
--   on a real site this is only a lower bound)
local s3 = require "strata.s3"
local s3site = require "strata.lib.s3site"

local PREFIX = "minio_system_network_internode_rdma_"
local NAMES = {
  rdma_write_bytes = "write_bytes_total", rdma_errors = "errors_total",
  pool_fallbacks = "pool_fallbacks_total", nic_inflight_writes = "nic_inflight_writes",
  nic_credit_waits = "nic_credit_waits_total", nic_writes_throttled = "nic_writes_throttled_total",
}

test {
  id = "E2", layer = "s3", title = "AIStor inter-node RDMA under PUT load",
  tags = { "aistor", "rdma", "s3" }, timeout = 600,
  headline = "rdma_write_gbps",
  units = { rdma_write_gbps = "Gbit/s", put_gbps = "Gbit/s" },
  run = function(t)
    local a = t.site.aistor
    if type(a) ~= "table" or not a.internode_metrics_url then
      -- inter-node RDMA exists only between AIStor nodes moving erasure
      -- shards: an RGW, a single S3 server (the lab's reference
      -- S3-over-RDMA server, whose minio_api_rdma_* series are client
      -- traffic, E3's) has no such traffic and no such series
      t.skip("site.aistor.internode_metrics_url is not set: no multi-node AIStor "
             .. "cluster to read minio_system_network_internode_rdma_* from "
             .. "(inter-node RDMA moves erasure shards between AIStor nodes)")
    end
    local s, what = t.site.s3, "site.s3"
    if type(a.s3) == "table" then
      s, what = {}, "site.aistor.s3 (or site.s3)"
      for k, v in pairs(type(t.site.s3) == "table" and t.site.s3 or {}) do s[k] = v end
      for k, v in pairs(a.s3) do s[k] = v end
    end
    local cl = s3site.client(t, s, what)
    local WITNESS = "minio_system_network_internode_recv_bytes_total"
    local wopt = { bearer_env = a.metrics_bearer_env }
    local function witness()          -- -> bytes, or nil and why
      local ok, _, sums = pcall(s3.scrape, a.witness_metrics_url, wopt)
      if not ok then return nil, tostring(_) end
      if not sums[WITNESS] then return nil, "no " .. WITNESS end
      return sums[WITNESS]
    end
    local w0, werr
    if a.witness_metrics_url then w0, werr = witness() end
    local r = cl:run {
      op = "put", bucket = s.bucket,
      size = t.scale.bytes((a.object_mb or 64) << 20, "object size"),
      concurrency = t.scale.streams(a.concurrency or 16, "concurrency"),
      duration = t.scale.seconds(a.duration or 30, "window (s)"),
      warmup = t.scale.seconds(a.warmup or 5, "warm-up (s)"),
      prefix = "strata/E2/",
      metrics = { url = a.internode_metrics_url, bearer_env = a.metrics_bearer_env,
                  prefix = PREFIX, settle = a.settle or 0 },
    }
    if not r.server then
      error("AIStor metrics could not be read: " .. tostring(r.server_error), 0)
    end
    local m = { put_gbps = r.gbps, put_ops = r.ops, hard_errors = r.errors,
                put_bytes = r.bytes + (r.warmup_bytes or 0) }
    local rows = {}
    for metric, suffix in pairs(NAMES) do
      local d = r.server[PREFIX .. suffix]
      if d == nil then
        t.note(("%s%s is absent: not an RDMA-enabled AIStor build?"):format(PREFIX, suffix))
      end
      m[metric] = d
      rows[#rows + 1] = { PREFIX .. suffix, d }
    end
    local w1
    if w0 then w1, werr = witness() end
    if werr then
      -- no witness, no proof: a peer that died cannot vouch for anything
      -- (witness "unreadable": E2.witness_received fails on it)
      t.note(("the witness %s could not be read: %s"):format(
        a.witness_metrics_url, werr))
    elseif w1 then
      -- the receiving node's own count: the sender's word is not enough;
      -- the criterion E2.witness_received (specs/thresholds.yaml) judges
      -- the shortfall (bytes the sender counts that the witness did not)
      m.witness_recv_bytes = w1 - w0
      rows[#rows + 1] = { WITNESS .. " (witness: the peer)", m.witness_recv_bytes }
      if m.rdma_write_bytes then
        m.witness_shortfall_bytes = math.max(0, m.rdma_write_bytes - m.witness_recv_bytes)
      end
    end
    m.witness = not a.witness_metrics_url and "n/a" or werr and "unreadable"
                or "read"
    table.sort(rows, function(x, y) return x[1] < y[1] end)
    t.table("AIStor inter-node RDMA counters (delta over the load)",
            { "metric", "delta" }, rows)
    if m.rdma_write_bytes and r.elapsed_s and r.elapsed_s > 0 then
      m.rdma_write_gbps = m.rdma_write_bytes * 8 / r.elapsed_s / 1e9
      -- inter-node RDMA bytes per client byte: erasure coding sends shards
      m.rdma_bytes_per_put_byte = m.rdma_write_bytes / math.max(1, m.put_bytes)
    end
    return m
  end,
}
