-- Parsers of the tool-driving specs (R9, R10, B16/B17/E5) on recorded
-- and constructed inputs.  Run: strata lua tests/lib/parsers.lua FIXTURES
local fix = arg[1]
local fails = 0
local function check(cond, what)
  if not cond then
    fails = fails + 1
    io.stderr:write("FAIL: ", what, "\n")
  end
end
local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- nccl-tests
local nccl = require "strata.lib.nccl"
local p = nccl.parse(slurp(fix .. "/all_reduce_perf.txt"))
check(#p.rows == 4, "nccl rows")
check(p.rows[4].size == 8589934592, "nccl size")
check(p.rows[4].oop.busbw == 642.13 and p.rows[4].ip.busbw == 643.02, "nccl busbw")
local s = nccl.summary(p)
check(s.busbw_gbs == 643.02, "nccl summary busbw")
check(s.wrong == 0 and s.avg_busbw_gbs == 167.0987, "nccl wrong/avg")
local bad = slurp(fix .. "/all_reduce_perf.txt"):gsub("642.13      0", "642.13      3")
check(nccl.summary(nccl.parse(bad)).wrong == 3, "nccl wrong counted")
local ok, err = pcall(nccl.parse, "  1024 256 float sum -1 44.9 garbage\n")
check(not ok and err:find("line 1: expected 13 columns"), "nccl short line raises: " .. tostring(err))
ok, err = pcall(nccl.parse, "# only comments\n")
check(not ok and err:find("no result rows"), "nccl empty raises")

-- vllm bench serve
local vllm = require "strata.lib.vllm"
local a = vllm.parse(slurp(fix .. "/vllm_bench_serve.txt"))
check(a.completed == 200 and a.failed == 0, "vllm completed")
check(a.ttft_mean_ms == 412.77 and a.itl_p99_ms == 97.31, "vllm latencies")
check(a.out_tok_per_s == 618.36, "vllm throughput")
local b = {}
for k, v in pairs(a) do b[k] = v end
b.ttft_mean_ms, b.out_tok_per_s = 330.2, 640
local g = vllm.gains(a, b)
check(math.abs(g.ttft_gain_pct - 20.0) < 0.01, "vllm ttft gain " .. tostring(g.ttft_gain_pct))
check(math.abs(g.best_kpi_gain_pct - g.ttft_gain_pct) < 1e-9, "vllm best gain")
ok = pcall(vllm.parse, "Traceback (most recent call last):\n  boom\n")
check(not ok, "vllm without summary raises")

-- PCIe ACS from a constructed config space: AER at 0x100 -> ACS at 0x148
local pcie = require "strata.lib.pcie"
local cfg = string.rep("\0", 0x100)
  .. string.pack("<I4", 0x0001 | (1 << 16) | (0x148 << 20))      -- AER, next 0x148
  .. string.rep("\0", 0x148 - 0x104)
  .. string.pack("<I4", 0x000D | (1 << 16))                      -- ACS, last
  .. string.pack("<I2I2", 0x005f, 0x001d)   -- cap; ctl = SrcValid ReqRedir CmpltRedir UpstreamFwd
cfg = cfg .. string.rep("\0", 4096 - #cfg)
local acs = pcie.acs(cfg)
check(acs and acs.ReqRedir and acs.CmpltRedir and acs.SrcValid, "acs bits set")
check(acs and not acs.TransBlk and not acs.EgressCtrl, "acs bits clear")
check(pcie.acs_text(acs) == "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-",
      "acs text: " .. pcie.acs_text(acs))
check(pcie.acs(string.rep("\0", 256)) == nil, "no ext space, no ACS")
local loop = string.rep("\0", 0x100) .. string.pack("<I4", 0x0001 | (0x100 << 20))
check(#pcie.ext_caps(loop .. string.rep("\0", 64)) == 1, "cap list loop stops")

-- perftest and ibv_devinfo, recorded in the Soft-RoCE guest (perftest 4.5)
local perftest = require "strata.lib.perftest"
local bw = perftest.parse_bw(slurp(fix .. "/ib_write_bw_rxe.txt"))
check(#bw == 1 and bw[1].bytes == 65536 and bw[1].iterations == 200, "perftest bw row")
check(bw[1].bw_avg == 0.53 and bw[1].unit == "Gb/sec", "perftest bw avg")
check(perftest.gbps(bw[1]) == 0.53, "perftest gbps")
check(math.abs(perftest.gbps({ unit = "MB/sec", bw_avg = 1000 }) - 8.388608) < 1e-9, "MB/sec")
-- under TCG perftest's cycle clock is uncalibrated: it prints inf, no row
ok, err = pcall(perftest.parse_lat, slurp(fix .. "/ib_write_lat_rxe_tcg.txt"))
check(not ok and err:find("no latency result"), "perftest inf latency refused")
local lat = perftest.parse_lat(slurp(fix .. "/ib_write_lat_rxe_tcg.txt")
  :gsub(" 2       300 [^\n]+", " 2       300          10.53          120.44       11.35    \t       12.06       \t3.86   \t\t24.47   \t\t120.44 "))
check(lat[1].typical == 11.35 and lat[1].p99 == 24.47 and lat[1].p999 == 120.44, "perftest lat row")
local devs = perftest.parse_devinfo(slurp(fix .. "/ibv_devinfo_rxe.txt"))
check(#devs == 1 and devs[1].hca_id == "rxe0", "devinfo hca")
check(devs[1].ports[1].state == "PORT_ACTIVE" and devs[1].ports[1].active_mtu == 4096, "devinfo port")
check(devs[1].ports[1].link_layer == "Ethernet", "devinfo link layer")

if fails > 0 then return 1 end
print("parsers: ok")
return 0
