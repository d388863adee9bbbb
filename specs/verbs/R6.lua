-- RUNBOOK R6: RDMA error counters do not increase over the R2 and R3 runs
-- (rnr_nak_retry_err, packet_seq_err, local_ack_timeout_err,
-- out_of_sequence ... whatever the device exposes: every port counter
-- whose name says error, sequence, timeout, retry, duplicate, discard).
-- Sums the deltas R2 and R3 recorded around each of their cells.
local vs = require "strata.lib.verbsite"

test {
  id = "R6", layer = "verbs", title = "RDMA error counters over the R2/R3 runs",
  needs = { "R1" },
  tags = { "rdma", "errors" },
  timeout = 30,
  headline = "error_total",
  run = function(t)
    local sums, cells, seen = {}, 0, {}
    for _, id in ipairs { "R2", "R3" } do
      for _, c in ipairs(t.results(id) or {}) do
        local m = c.metrics or {}
        local any = false
        for k, v in pairs(m) do
          local name = k:match("^counters%.(.+)$")
          if name and type(v) == "number" then
            any = true
            if vs.is_error_counter(name) then
              sums[name] = (sums[name] or 0) + math.floor(v)
            end
          end
        end
        if any then
          cells = cells + 1
          seen[id] = true
        end
      end
    end
    if cells == 0 then
      t.skip("R2 and R3 measured nothing (no counter deltas to judge)")
    end
    local m, rows, total = { cells = cells }, {}, 0
    local names = {}
    for k in pairs(sums) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do
      m["delta." .. k] = sums[k]
      total = total + sums[k]
      rows[#rows + 1] = { k, sums[k] }
      if sums[k] > 0 then t.note(("%s rose by %d"):format(k, sums[k])) end
    end
    if #names == 0 then
      t.fail("the device exposes no error counters (hw_counters/counters)")
    end
    m.error_total = total
    t.table("Error counter deltas", { "counter", "delta over R2+R3" }, rows)
    t.note(("over %d cells of %s"):format(cells,
      (seen.R2 and "R2" or "") .. (seen.R2 and seen.R3 and " and " or "")
      .. (seen.R3 and "R3" or "")))
    return m
  end,
}
