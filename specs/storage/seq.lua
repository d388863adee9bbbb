-- S2-S4: scratch bandwidth and IOPS per NUMA node, measured by strata's
-- own io_uring engine (engine/storage) the way fio measures: O_DIRECT,
-- the fio job parameters the document's advice implies (seq 1 MiB QD32,
-- 4 KiB random read QD32), jobs pinned to the target's node
-- (numa_cpu_nodes = site.storage.scratch[i].numa_node), one target after
-- another; the slowest target is the headline.  The disk counters of the
-- array and its members (/proc/diskstats) ride along.
local lib = require "strata.lib.storage"

local function rung(id, title, rw, bs, headline, unit, expect_key)
  test {
    id = id, layer = "storage", title = title,
    tags = { "storage", rw }, timeout = 600,
    needs = { "S1" },
    sample = { interval = 0.5, sources = { "cpu", "disk" } },
    headline = headline, units = { [headline] = unit, lat_p99_us = "us" },
    run = function(t)
      local st = t.site.storage
      local qd, nj = st.iodepth or 32, st.numjobs or 1
      local rows, worst, m = {}, nil, { verify_errors = 0 }
      for _, sc in ipairs(lib.targets(t)) do
        -- one file for S2-S4: writes put down strata's pattern, so the
        -- reads of the others still verify, and the space is used once
        local r = lib.job(t, sc, { name = "scratch", rw = rw, bs = bs, iodepth = qd,
                                   numjobs = nj,
                                   verify = rw:find("read") ~= nil })
        rows[#rows + 1] = { sc.path, sc.numa_node, r.bw_mibps, r.iops,
                            r.lat_p50_us, r.lat_p99_us, r.lat_p999_us,
                            r.usr_cpu, r.sys_cpu, r.verify_errors }
        m.verify_errors = m.verify_errors + r.verify_errors
        if not worst or r[headline] < worst[headline] then worst = r end
        for dev, f in pairs(r.disk) do
          m["disk." .. dev .. ".util_pct"] = f.util_pct
          m["disk." .. dev .. ".aqu_sz"] = f.aqu_sz
          m["disk." .. dev .. ".await_ms"] = f.await_ms
        end
      end
      t.table("Per target (" .. rw .. " bs=" .. bs .. " iodepth=" .. qd
              .. " numjobs=" .. nj .. ")", { "target", "NUMA node", "MiB/s",
              "IOPS", "lat p50 us", "lat p99 us", "lat p99.9 us", "usr %",
              "sys %", "verify errors" }, rows)
      for _, k in ipairs { "bw_mibps", "iops", "io_bytes", "runtime_s",
                           "lat_p50_us", "lat_p99_us", "lat_p999_us",
                           "clat_p99_us", "slat_p99_us", "usr_cpu",
                           "sys_cpu", "cpu_us_per_io" } do
        m[k] = worst[k]
      end
      m.targets = #rows
      m.expected = st[expect_key]
      return m
    end,
  }
end

rung("S2", "Scratch sequential read 1 MiB QD32", "read", "1M", "bw_mibps",
     "MiB/s", "seq_read_mibps")
rung("S3", "Scratch sequential write 1 MiB QD32", "write", "1M", "bw_mibps",
     "MiB/s", "seq_write_mibps")
rung("S4", "Scratch 4 KiB random read QD32", "randread", "4k", "iops",
     "ops/s", "randread_iops")
