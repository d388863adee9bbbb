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
local slurp = require("strata.sys").read

-- nccl-tests 2.19.6 outputs captured on one H200 (fixtures/lib/README.md)
local nccl = require "strata.lib.nccl"
local p = nccl.parse(slurp(fix .. "/nccl_all_reduce_perf.txt"))
check(#p.rows == 31, "nccl rows " .. #p.rows)
check(p.version == "2.19.6" and p.nccl_library == 22803 and p.nccl_headers == 22803,
      "nccl version line")
check(p.test == "all_reduce_perf" and p.concluded, "nccl starting/concluded")
check(#p.devices == 1 and p.devices[1].pci == "0000:00:06" and
      p.devices[1].name == "NVIDIA H200", "nccl device line [%04x:%02x:%02x]")
local last = p.rows[31]
check(last.size == 8589934592 and last.count == 2147483648 and last.type == "float"
      and last.redop == "sum" and last.root == -1, "nccl leading columns")
check(last.oop.time_us == 4021.55 and last.oop.algbw == 2136.0 and last.oop.busbw == 0
      and last.oop.wrong == 0, "nccl out-of-place")
-- %g-style cells nccl-tests prints when a value is wider than its column
check(last.ip.algbw == 2e+07 and p.rows[30].ip.algbw == 3e+06, "nccl 2e+07 cells")
check(p.rows[19].size == 2097152 and p.rows[19].ip.algbw == 4360.4, "nccl 4360.4 cell")
check(p.out_of_bounds == 0 and p.avg_busbw == 0, "nccl footer")
local s = nccl.summary(p)
check(s.wrong == 0 and s.max_size == 8589934592, "nccl summary")
-- the headline is out-of-place: one rank's in-place "2e+07 GB/s" is no figure
check(s.algbw_gbs == 2136.0 and s.busbw_gbs == 0 and s.busbw_inplace_gbs == 0,
      "nccl summary takes out-of-place, in-place apart")
local bad = slurp(fix .. "/nccl_all_reduce_perf.txt")
  :gsub("(4021%.55  2136%.0    0%.00)       0", "%1       3")
check(nccl.summary(nccl.parse(bad)).wrong == 3, "nccl wrong counted")
-- every collective R9 runs, the same layout; sendrecv's in-place #wrong is N/A
for _, op in ipairs { "all_gather", "broadcast", "reduce_scatter", "sendrecv" } do
  local q = nccl.parse(slurp(fix .. "/nccl_" .. op .. "_perf.txt"))
  check(q.test == op .. "_perf" and #q.rows == 31 and q.rows[31].oop.busbw ~= nil
        and q.rows[31].oop.algbw > 1000, "nccl " .. op .. " rows / bandwidth")
end
local sr = nccl.parse(slurp(fix .. "/nccl_sendrecv_perf.txt"))
check(sr.rows[1].ip.wrong == nil and sr.rows[1].oop.wrong == 0, "nccl N/A wrong")
-- -I 1 adds four columns to each half: read by name (the old positional
-- parser took i_min for the in-place time)
local pi = nccl.parse(slurp(fix .. "/nccl_all_reduce_perf_per_iter.txt"))
local r1 = pi.rows[1]
check(#pi.rows == 12 and r1.size == 8, "nccl per-iter rows")
check(r1.oop.time_us == 9.69 and r1.oop.min_us == 7.55 and r1.oop.max_us == 13.09
      and r1.oop.p99_us == 13.09 and r1.oop.cv_pct == 14.73, "nccl per-iter oop")
check(r1.ip.time_us == 2.56 and r1.ip.wrong == 0 and r1.ip.min_us == 1.57
      and r1.ip.cv_pct == 23.79, "nccl per-iter ip: " .. tostring(r1.ip.time_us))
-- -S 1 -C 1: "cputime" columns and a timestamp holding a space
local tc = nccl.parse(slurp(fix .. "/nccl_all_reduce_perf_timestamps_cputime.txt"))
check(tc.rows[1].oop.time_us == 7.56 and tc.rows[1].ip.time_us == 0.40, "nccl cputime")
check(tc.rows[1].timestamp == "2026-12-01 08:18:30", "nccl timestamp: "
      .. tostring(tc.rows[1].timestamp))
-- the -J report of the same kind of run
local j = nccl.parse_json(slurp(fix .. "/nccl_all_reduce_perf.json"))
check(#j.rows == 12 and j.rows[1].size == 8 and j.rows[1].root == -1, "nccl json rows")
check(j.rows[1].oop.time_us == 7.48415 and j.rows[1].oop.wrong == 0, "nccl json oop")
check(j.nccl_library == 22803 and j.out_of_bounds == 0 and j.avg_busbw == 0, "nccl json footer")
check(j.devices[1].pci == "0000:00:06", "nccl json device")
local jp = nccl.parse_json(slurp(fix .. "/nccl_all_reduce_perf_per_iter.json"))
check(jp.rows[1].oop.min_us == 6.912 and jp.rows[1].oop.max_us == 29.312, "nccl json per-iter")
local ok, err = pcall(nccl.parse_json, "{}")
check(not ok and err:find("no results"), "nccl json without results raises")
-- damaged input is named by line
local hdr = slurp(fix .. "/nccl_all_reduce_perf.txt"):match("^(.-#%s+%(B%)[^\n]*\n)")
ok, err = pcall(nccl.parse, hdr .. "  1024 256 float sum -1 44.9 garbage\n")
check(not ok and err:find("line 11: expected 13 columns"), "nccl short line raises: " .. tostring(err))
ok, err = pcall(nccl.parse, hdr .. "  1024 256 float sum -1 44.9 x 1 0 1 1 1 0\n")
check(not ok and err:find("line 11: column algbw is not a number"), "nccl bad cell: " .. tostring(err))
ok, err = pcall(nccl.parse, "  1024 256 float sum -1 1 1 1 0 1 1 1 0\n")
check(not ok and err:find("line 1: a result row before the column header"), "nccl no header: " .. tostring(err))
ok, err = pcall(nccl.parse, "# only comments\n")
check(not ok and err:find("no result rows"), "nccl empty raises")

-- vllm bench serve: built from vllm/benchmarks/serve.py's print
-- statements at def9ce85 (fixtures/lib/vllm_bench_serve.py)
local vllm = require "strata.lib.vllm"
local a = vllm.parse(slurp(fix .. "/vllm_bench_serve.txt"))
check(a.completed == 200 and a.failed == 0, "vllm completed")
check(a.ttft_mean_ms == 412.77 and a.ttft_p50_ms == 398.10 and a.itl_p99_ms == 97.31,
      "vllm latencies")
check(a.out_tok_per_s == 618.36, "vllm throughput")
-- the current label is "Total token throughput" (the old parser knew only
-- "Total Token"); both are read
check(a.total_tok_per_s == 5565.22, "vllm total token throughput: " .. tostring(a.total_tok_per_s))
check(vllm.parse(slurp(fix .. "/vllm_bench_serve.txt"):gsub("Total token", "Total Token"))
      .total_tok_per_s == 5565.22, "vllm old 'Total Token' label")
check(a.peak_out_tok_per_s == 1024 and a.peak_concurrent == 32 and a.max_concurrency == 32,
      "vllm peak throughput / concurrency")
local failed = vllm.parse(slurp(fix .. "/vllm_bench_serve.txt")
  :gsub("Failed requests:( +)0 ", "Failed requests:%13 "))
check(failed.failed == 3, "vllm failed requests read: " .. tostring(failed.failed))
local e = vllm.parse(slurp(fix .. "/vllm_bench_serve_e2el_p90.txt"))
check(e.ttft_p90_ms == 610.2 and e.e2el_mean_ms == 6396 and e.e2el_p99_ms == 7300.8,
      "vllm P90 and E2EL blocks")
local js = vllm.parse_json(slurp(fix .. "/vllm_bench_serve.json"))
check(js.completed == 200 and js.failed == 0 and js.duration_s == 41.4, "vllm json counts")
check(js.ttft_mean_ms == 412.77 and js.ttft_p50_ms == 398.1 and js.ttft_std_ms == 101.5
      and js.ttft_p99_ms == 901.55, "vllm json ttft")
check(js.tpot_p99_ms == 58.03 and js.itl_std_ms == 12.7, "vllm json tpot/itl")
check(js.total_tok_per_s == 5565.217391 and js.peak_out_tok_per_s == 1024, "vllm json throughput")
check(not pcall(vllm.parse_json, "{}"), "vllm json without counts raises")
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
