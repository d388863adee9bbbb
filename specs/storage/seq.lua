-- S2-S4: scratch bandwidth and IOPS per NUMA node, measured by strata's
-- own io_uring engine (engine/storage) the way fio measures: O_DIRECT,
-- the fio job parameters the document's advice implies (seq 1 MiB QD32,
-- 4 KiB random read QD32), jobs pinned to the target's node
-- (numa_cpu_nodes = site.storage.scratch[i].numa_node), one target after
-- another; the slowest target is the headline.  Each job submits as a
-- default fio job does unless the site batches (BATCH below); the
-- verified pass is its own figure beside the headline.  The disk
-- counters of the array and its members (/proc/diskstats) ride along.
local lib = require "strata.lib.storage"

-- How the jobs submit: fio's own options with fio's defaults
-- (iodepth_batch_submit=1, iodepth_batch_complete_min=1, _max=1: one
-- io_uring_enter per I/O), so a site's default fio job is the comparison;
-- site.storage.iodepth_batch_* (say 32, 1, 32) batch as fio then does.
local BATCH = { "iodepth_batch_submit", "iodepth_batch_complete_min",
                "iodepth_batch_complete_max" }

local function rung(id, title, rw, bs, headline, unit, expect_key)
  local verified = headline .. "_verified"
  test {
    id = id, layer = "storage", title = title,
    tags = { "storage", rw }, timeout = 600,
    needs = { "S1" },
    sample = { interval = 0.5, sources = { "cpu", "disk" } },
    headline = headline, units = { [headline] = unit, [verified] = unit,
                                   lat_p99_us = "us" },
    criteria = {
      -- the slowest target against the site's figure per array
      -- (an array's figure the site file does not give: not judged)
      [headline] = { min = "0.9 * site.storage." .. expect_key },
      verify_errors = { max = 0 },
    },
    run = function(t)
      local st = t.site.storage
      local qd, nj = st.iodepth or 32, st.numjobs or 1
      local rows, worst, m = {}, nil, { verify_errors = 0, verify_bytes = 0 }
      for _, sc in ipairs(lib.targets(t)) do
        -- one file for S2-S4: writes put down strata's pattern, so the
        -- reads of the others still verify, and the space is used once.
        -- The headline pass does not verify (fio's default, verify=0);
        -- a second pass checks every sector (reads) or reads every block
        -- back (writes) and is its own figure, never the headline.
        local r = lib.job(t, sc, { name = "scratch", rw = rw, bs = bs,
                                   iodepth = qd, numjobs = nj })
        local v = lib.job(t, sc, { name = "scratch", rw = rw, bs = bs,
                                   iodepth = qd, numjobs = nj,
                                   verify = true })
        rows[#rows + 1] = { sc.path, sc.numa_node, r.bw_mibps, r.iops,
                            r.lat_p50_us, r.lat_p99_us, r.lat_p999_us,
                            r.usr_cpu, r.sys_cpu, r.ios_per_submit,
                            v[headline], v.verify_bytes, v.verify_errors }
        m.verify_errors = m.verify_errors + v.verify_errors
        m.verify_bytes = m.verify_bytes + v.verify_bytes
        r.verified = v[headline]
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
              "sys %", "I/Os per submit", "verified " .. unit,
              "verified bytes", "verify errors" }, rows)
      for _, k in ipairs { "bw_mibps", "iops", "io_bytes", "runtime_s",
                           "lat_p50_us", "lat_p99_us", "lat_p999_us",
                           "clat_p99_us", "slat_p99_us", "usr_cpu",
                           "sys_cpu", "cpu_us_per_io", "ios_per_submit",
                           "io_uring_enter_submit", "io_uring_enter_wait",
                           table.unpack(BATCH) } do
        m[k] = worst[k]
      end
      m[verified] = worst.verified
      local default = worst.iodepth_batch_submit == 1
        and worst.iodepth_batch_complete_min == 1
        and worst.iodepth_batch_complete_max == 1
      t.note(("submission: iodepth_batch_submit=%d iodepth_batch_complete_min=%d "
              .. "iodepth_batch_complete_max=%d (%s); %.2f I/Os per "
              .. "io_uring_enter that submitted"):format(
              worst.iodepth_batch_submit, worst.iodepth_batch_complete_min,
              worst.iodepth_batch_complete_max,
              default and "fio's defaults: compare with a default fio job"
                or "batched: compare with fio given the same options",
              worst.ios_per_submit))
      t.note(("verification: %s is measured without it (fio's default "
              .. "verify=0); %s = %.6g %s from a second pass that checked "
              .. "%d bytes, %d errors"):format(headline, verified,
              worst.verified, unit, m.verify_bytes, m.verify_errors))
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
