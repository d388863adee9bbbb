-- Prometheus scrape and query against a local HTTP server (label spec;
-- ./build/strata lua tests/host/scrape.lua).  The server is
-- fixtures/host/http_fixture.py; it serves a recorded Ceph mgr exposition.
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local h = require "helpers"
local counters = require "strata.counters"
local sys = require "strata.sys"
local check, raises = h.check, h.raises

local TOKEN = "tok-" .. tostring(os.time()) .. "-s3cr3t"
local base, stop = h.http_fixture { FIXTURE_TOKEN = TOKEN }
local ok, err = xpcall(function()
  -- a real exposition parses
  local s = counters.prometheus_scrape { url = base .. "/metrics", timeout = 5 }
  check(#s == 581, "samples: %d", #s)
  local req
  for _, x in ipairs(s) do if x.name == "ceph_rgw_req" then req = x end end
  check(req and req.value == 1 and req.type == "counter" and
        req.labels.instance_id == "4114" and req.help == "Requests", "ceph_rgw_req")

  -- an endpoint that accepts and never answers fails within the timeout
  local t0 = h.now()
  local msg = raises({ "counters.prometheus_scrape: " .. base .. "/hang: response: " ..
                       "no complete answer within 1 s" },
                     counters.prometheus_scrape, { url = base .. "/hang", timeout = 1 })
  local took = h.now() - t0
  check(took >= 0.9 and took < 2, "hang took %.2f s", took)

  -- garbage, HTTP errors, nothing listening
  raises({ base .. "/garbage: parse: line 1: expected a metric name" },
         counters.prometheus_scrape, { url = base .. "/garbage", timeout = 5 })
  raises({ base .. "/status500: status: HTTP 500: internal error: try later" },
         counters.prometheus_scrape, { url = base .. "/status500", timeout = 5 })
  local dead = sys.run { cmd = { "/usr/bin/python3", "-c",
    "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])" } }
  local port = dead.stdout:match("%d+")
  raises({ "http://127.0.0.1:" .. port .. "/metrics: connect:" },
         counters.prometheus_scrape, { url = "http://127.0.0.1:" .. port .. "/metrics",
                                       timeout = 2 })

  -- bearer from the named variable only; never in messages; URL credentials stripped
  raises({ "bearer_env names 'STRATA_TEST_NO_SUCH_VAR', which is not set" },
         counters.prometheus_scrape, { url = base .. "/auth/metrics",
                                       bearer_env = "STRATA_TEST_NO_SUCH_VAR" })
  local auth_url = base:gsub("//", "//user:pa55word@") .. "/auth/metrics"
  msg = raises({ "//127.0.0.1:", "/auth/metrics: status: HTTP 401" },
               counters.prometheus_scrape, { url = auth_url, bearer_env = "HOME" })
  check(not msg:find("pa55word", 1, true) and not msg:find("user:", 1, true),
        "credentials in the message: %s", msg)
  check(not msg:find(os.getenv("HOME"), 1, true), "token in the message")
  -- the right token works: Lua cannot set this process's environment, so
  -- a strata child gets it (sys.run env) and scrapes with bearer_env
  local child = sys.run { cmd = { "/proc/self/exe", "lua", h.dir .. "/scrape_auth.lua" },
                          env = { STRATA_TEST_TOKEN = TOKEN,
                                  STRATA_TEST_URL = base .. "/auth/metrics" },
                          timeout = 20 }
  check(child.code == 0 and child.stdout == "581\n", "scrape with the token: %s %s",
        child.stdout, child.stderr)
  check(not (child.stdout .. child.stderr):find(TOKEN, 1, true), "token printed")

  -- the HTTP API: instant query
  local v = counters.prometheus_query { url = base, query = 'sum(rate(x[5m])) by (server)',
                                        time = 1700000123.25, timeout = 5 }
  check(#v == 2 and v[1].name == "minio_api_rdma_read_bytes_total" and
        v[1].value == 1048576 and v[1].labels.server == "aistor-1:9000" and
        v[1].labels.query == 'sum(rate(x[5m])) by (server)' and
        math.abs(v[1].timestamp - 1700000123250) < 1, "vector sample")
  check(v[2].value ~= v[2].value and v[2].name == nil, "NaN sample, no name")
  raises({ "counters.prometheus_query: " .. base .. ": query 'bad' failed: bad_data: parse error at char 4 (HTTP 400)" },
         counters.prometheus_query, { url = base, query = "bad" })
  raises({ base .. "/garbage#: parse: not JSON" }, counters.prometheus_query,
         { url = base .. "/garbage#", query = "up" })

  -- the sampler with a Prometheus source: counter deltas, gauges, matching
  local smp = counters.start { interval = 0.1, sources = { "ctxt" }, prom_interval = 0.1,
    prometheus = { { name = "fx", url = base .. "/counter", match = { "strata_fixture_*" },
                     timeout = 2 } } }
  sys.spin(0.5)
  local r = smp:stop()
  local key = 'prom.fx.strata_fixture_requests_total{path="/counter"}'
  check((r.deltas[key] or 0) >= 3, "prometheus counter delta %s", r.deltas[key])
  check(r.rates[key] and r.rates[key] > 0, "prometheus rate")
  check(r.deltas["prom.fx.strata_fixture_level"] == 0 and
        r.rates["prom.fx.strata_fixture_level"] == nil, "gauge: no rate")
  check(#r.errors == 0, "errors: %s", r.errors[1])
  -- scrapes slower than the ticks: a tick between two scrapes carries the
  -- last one's values (folded in once per scrape), the delta is every scrape's
  smp = counters.start { interval = 0.05, sources = { "ctxt" }, prom_interval = 0.25,
    prometheus = { { name = "fx", url = base .. "/counter", match = { "strata_fixture_*" },
                     timeout = 2 } } }
  sys.spin(1.0)
  r = smp:stop()
  check(r.samples >= 15, "ticks: %d", r.samples)
  -- sys.spin(1.0) is a second of CPU: longer on the wall clock when the
  -- host is busy, so the scrapes are bounded by the window's own length
  local most = math.floor(r.duration_s / 0.25) + 3
  check((r.deltas[key] or 0) >= 3 and r.deltas[key] <= most,
        "prometheus counter delta at 4 scrapes a second: %s in %.2f s (<= %d)",
        r.deltas[key], r.duration_s, most)
  check(r.deltas["prom.fx.strata_fixture_level"] == 0, "gauge carried")
  -- a carried counter's rate is 0 between scrapes, never below
  check(r.stats[key] and r.stats[key].min == 0 and r.stats[key].max > 0,
        "counter rate between scrapes: min %s max %s",
        r.stats[key] and r.stats[key].min, r.stats[key] and r.stats[key].max)
  check(#r.errors == 0, "errors: %s", r.errors[1])
  raises({ "counters.start: prometheus fx " .. base .. "/hang: response:" },
         counters.start, { interval = 0.1, prometheus = {
           { name = "fx", url = base .. "/hang", timeout = 0.5 } } })
end, debug.traceback)
stop()
if not ok then
  io.stderr:write(tostring(err), "\n")
  return 1
end
return h.finish("host scrape")
