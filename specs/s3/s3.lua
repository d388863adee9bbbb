-- RUNBOOK rung (4): S3 over TCP.  E1 (object size sweep x concurrency
-- ladder, GET and PUT), the benchmark-matrix rows B01/B03/B05 (TCP parts),
-- B10, B12, B14 (multipart) and the mixed 70/30 workload, all measured by
-- strata's own S3 engine (engine/s3, docs/s3.md) against the endpoint the
-- site file names (site.s3).  No endpoint configured: every test SKIPs.
local s3site = require "strata.lib.s3site"

local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024

-- One client from site.s3 (lua/strata/lib/s3site.lua: credentials from
-- the environment or the site's credentials file, never from here).
local function client(t)
  return s3site.client(t, t.site.s3), t.site.s3
end

local function metrics_opts(s)
  local m = s.metrics
  if type(m) ~= "table" or not m.url then return nil end
  return { url = m.url, bearer_env = m.bearer_env, ca_bundle = m.ca_bundle,
           prefix = m.prefix, settle = m.settle }
end

-- The bytes the server should have counted for a GET-only or PUT-only
-- phase: recorded and warm-up traffic alike.
local function wire_bytes(r)
  return r.bytes + (r.warmup_bytes or 0)
end

-- Run one phase; its metrics land under prefix ("get.", "put." ...).
-- 503 SlowDown is saturation, counted apart from hard errors.
local function phase(t, cl, s, opts, prefix, out, server_metric)
  opts.bucket = s.bucket
  -- the RUNBOOK's figures, cut where the site's scale: block says
  opts.size = t.scale.bytes(opts.size, "object size")
  opts.concurrency = t.scale.streams(opts.concurrency, "concurrency")
  if opts.part_size and opts.part_size > opts.size then
    opts.part_size = opts.size
  end
  opts.warmup = t.scale.seconds(opts.warmup or s.warmup or 5, "warm-up (s)")
  -- a window (site.s3.duration, default 30 s) or a count of operations
  -- per phase (site.s3.count)
  if not opts.count then
    opts.count = s.count
    if not opts.count then
      opts.duration = t.scale.seconds(opts.duration or s.duration or 30,
                                      "window (s)")
    end
  end
  if opts.count then opts.count = t.scale.count(opts.count, "operations") end
  opts.metrics = metrics_opts(s)
  -- site.s3.key_prefix: clients loading one bucket at once (a fleet
  -- run gives each node its own) must not read or delete each other's keys
  opts.prefix = opts.prefix or ((s.key_prefix or "strata/") .. t.id .. "/")
  -- a fleet run merges the clients' latencies (docs/fleet.md): every
  -- request's latency as a table, not a metric
  if s.keep_samples then opts.samples = true end
  local r = cl:run(opts)
  if r.lat_samples_ms then
    local rows = {}
    for i, v in ipairs(r.lat_samples_ms) do rows[i] = { v } end
    t.table(prefix .. "lat_samples_ms", { "ms" }, rows)
    r.lat_samples_ms = nil
  end
  local slow = 0
  for k, v in pairs(r.errors_by) do
    if k:find("^503 ") then slow = slow + v end
  end
  r.slowdown = slow
  r.hard_errors = r.errors - slow
  r.error_rate = r.errors / math.max(1, r.ops + r.errors)
  if r.first_error then t.note(prefix .. " first error: " .. r.first_error) end
  -- nothing got through: say what the server did, not only which count
  -- missed its bound (a 503 storm is throttling; a stall is a server
  -- that accepts and never answers; curl 18 a body shorter than told)
  if r.ops == 0 and r.errors > 0 then
    t.fail(slow == r.errors
      and ("%s every one of %d requests answered 503 SlowDown: the server "
           .. "throttled the whole phase"):format(prefix, slow)
      or ("%s no request succeeded (%d failed): %s"):format(prefix, r.errors,
           r.first_error or "no error text"))
  end
  -- the server's own count of the bytes (site.s3.metrics.<op>_bytes)
  local name = server_metric and s.metrics and s.metrics[server_metric]
  if name and r.server then
    local d = r.server[name]
    if d then r.server_bytes_ratio = d / math.max(1, wire_bytes(r)) end
  elseif name and r.server_error then
    t.note("metrics: " .. r.server_error)
  end
  for k, v in pairs(r) do out[prefix .. k] = v end
  return r
end

-- PUT a set of objects, then GET them back verified: one cell of E1/B*.
local function put_then_get(t, size, conc, memory)
  local cl <close>, s = client(t)
  local out = {}
  local objects = math.max(conc, 4)
  local put = phase(t, cl, s, { op = "put", size = size, concurrency = conc,
                                objects = objects, memory = memory,
                                cleanup = false }, "put.", out, "put_bytes")
  -- GET reads the PUT phase's objects; any it did not write (a short
  -- window, a failure) are written first
  local covered = put.errors == 0 and put.ops + put.warmup_ops >= objects
  phase(t, cl, s, { op = "get", size = size, concurrency = conc,
                    objects = objects, memory = memory,
                    prepare = not covered,
                    verify = s.verify ~= false }, "get.", out, "get_bytes")
  return out
end

local UNITS = { ["get.gbps"] = "Gbit/s", ["put.gbps"] = "Gbit/s",
                ["get.mbps"] = "MB/s", ["put.mbps"] = "MB/s",
                ["get.lat_p99_ms"] = "ms", ["put.lat_p99_ms"] = "ms" }

test {
  id = "E1", layer = "s3", title = "S3/TCP baseline: size sweep x concurrency",
  description = "PUT then verified GET of each object size at each "
             .. "concurrency (T1: TCP + host memory); warm-up, then a "
             .. "timed window (site.s3.warmup/duration).",
  tags = { "s3", "tcp", "baseline", "T1" }, timeout = 900,
  matrix = {
    size = { 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB,
             4 * GiB },
    concurrency = { 1, 4, 16, 64, 256 },
    order = { "size", "concurrency" },
    -- 4 GiB x 64+ and 1 GiB x 256 would hold >= 256 GiB in flight
    exclude = { { size = 4 * GiB, concurrency = 64 },
                { size = 4 * GiB, concurrency = 256 },
                { size = 1 * GiB, concurrency = 256 } },
  },
  headline = "get.gbps", units = UNITS,
  run = function(t) return put_then_get(t, t.cell.size, t.cell.concurrency) end,
}

-- E1's cells as GET and PUT tables (size down, concurrency across), charted.
test {
  id = "E1T", layer = "s3", title = "S3/TCP baseline: GET and PUT tables",
  needs = { "E1" }, tags = { "s3", "tcp", "baseline" },
  run = function(t)
    local cells = t.results("E1")
    local sizes, concs, val = {}, {}, {}
    for _, c in ipairs(cells) do
      local sz, cc = c.cell.size, c.cell.concurrency
      if not val[sz] then val[sz] = {}; sizes[#sizes + 1] = sz end
      concs[cc] = true
      val[sz][cc] = c.metrics or {}
    end
    table.sort(sizes)
    local cl = {}
    for k in pairs(concs) do cl[#cl + 1] = k end
    table.sort(cl)
    for _, op in ipairs{ "get", "put" } do
      for _, what in ipairs{ { "gbps", "Gbit/s" }, { "lat_p99_ms", "p99 ms" } } do
        local cols, rows = { "size (MiB)" }, {}
        for _, c in ipairs(cl) do cols[#cols + 1] = "c=" .. c end
        for _, sz in ipairs(sizes) do
          local row = { sz / MiB }
          for _, c in ipairs(cl) do
            local m = val[sz][c]
            row[#row + 1] = m and m[op .. "." .. what[1]] or ""
          end
          rows[#rows + 1] = row
        end
        local ys = {}
        for i = 2, #cols do ys[#ys + 1] = i end
        t.table(("%s %s"):format(op:upper(), what[2]), cols, rows,
                { x = 1, y = ys, title = ("E1 %s %s by object size")
                    :format(op:upper(), what[2]),
                  x_title = "object size (MiB)", y_title = what[2] })
      end
    end
    return { cells = #cells }
  end,
}

-- The benchmark matrix rows over TCP (RUNBOOK section 31).
local function bench_row(id, title, size, conc, memory, tags)
  test {
    id = id, layer = "s3", title = title, tags = tags, timeout = 900,
    headline = "get.gbps", units = UNITS,
    run = function(t) return put_then_get(t, size, conc, memory) end,
  }
end
bench_row("B01", "Host TCP, 64 MiB objects, 1 stream", 64 * MiB, 1, "host",
          { "s3", "tcp", "bench", "T1" })
bench_row("B03", "Host TCP, 256 MiB objects, 16 streams", 256 * MiB, 16,
          "host", { "s3", "tcp", "bench", "T1" })
-- T3: GET lands in host memory then is copied to the GPU, timed as part
-- of the operation; SKIPs with the reason until the CUDA copy path exists
bench_row("B05", "GPU TCP, 256 MiB objects, 16 streams", 256 * MiB, 16,
          "cuda", { "s3", "tcp", "bench", "gpu", "T3" })

test {
  id = "B10", layer = "s3", title = "S3 TCP GET, 256 MiB x 64",
  tags = { "s3", "tcp", "bench" }, timeout = 900,
  headline = "get.gbps", units = UNITS,
  run = function(t)
    local cl <close>, s = client(t)
    local out = {}
    phase(t, cl, s, { op = "get", size = 256 * MiB, concurrency = 64,
                      objects = 64, verify = s.verify ~= false },
          "get.", out, "get_bytes")
    return out
  end,
}

test {
  id = "B12", layer = "s3", title = "S3 TCP PUT, 256 MiB x 64",
  tags = { "s3", "tcp", "bench" }, timeout = 900,
  headline = "put.gbps", units = UNITS,
  run = function(t)
    local cl <close>, s = client(t)
    local out = {}
    phase(t, cl, s, { op = "put", size = 256 * MiB, concurrency = 64,
                      objects = 64 }, "put.", out, "put_bytes")
    return out
  end,
}

test {
  id = "B14", layer = "s3", title = "Multipart TCP, 4 GiB objects",
  description = "4 GiB uploads in parts of 64-512 MiB with 1-64 parts in "
             .. "flight (RUNBOOK: 4 GB, 64M/128M/256M/512M x concurrency).",
  tags = { "s3", "tcp", "bench", "multipart" }, timeout = 1200,
  matrix = { part_size = { 64 * MiB, 128 * MiB, 256 * MiB, 512 * MiB },
             concurrency = { 1, 4, 16, 64 },
             order = { "part_size", "concurrency" } },
  headline = "mp.gbps", units = { ["mp.gbps"] = "Gbit/s" },
  run = function(t)
    local cl <close>, s = client(t)
    local out = {}
    phase(t, cl, s, { op = "multipart", size = 4 * GiB,
                      part_size = t.cell.part_size,
                      concurrency = t.cell.concurrency, objects = 1,
                      count = s.multipart_count or 2, warmup = 0 },
          "mp.", out, "put_bytes")
    return out
  end,
}

test {
  id = "MIX", layer = "s3", title = "Mixed 70% GET / 30% PUT",
  tags = { "s3", "tcp", "mixed" }, timeout = 900,
  description = "GETs and PUTs drawn at random in the ratio "
             .. "site.s3.get_ratio (default 0.7) over one set of 64 MiB "
             .. "objects (site.s3.mixed_size), GETs verified.",
  matrix = { concurrency = { 1, 4, 16, 64, 256 } },
  headline = "mix.gbps",
  units = { ["mix.gbps"] = "Gbit/s", ["mix.get_lat_p99_ms"] = "ms",
            ["mix.put_lat_p99_ms"] = "ms" },
  run = function(t)
    local cl <close>, s = client(t)
    local out = {}
    local ratio = s.get_ratio or 0.7
    local r = phase(t, cl, s, { op = "mixed", size = s.mixed_size or 64 * MiB,
                                concurrency = t.cell.concurrency,
                                objects = math.max(4, t.cell.concurrency),
                                get_ratio = ratio,
                                verify = s.verify ~= false }, "mix.", out)
    out["mix.get_share"] = r.get_ops / math.max(1, r.get_ops + r.put_ops)
    out["mix.ratio_error"] = math.abs(out["mix.get_share"] - ratio)
    return out
  end,
}
