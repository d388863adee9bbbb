-- strata.fleet.sheets.s3: the fleet workbook's S3 sheet: S3 from every
-- storage client at once, the aggregate and merged percentiles per row and
-- op, then each client (report_diag's stragglers).
local sheet = require "strata.report.sheet"
local diag = require "strata.fleet.report_diag"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "S3", { 8, 26, 9, 8, 12, 12, 8, 12, 12, 40 })
  if not fm.s3 then
    ws:write(0, 0, "No S3 row ran in this fleet run.", F.note)
    return
  end
  ws:write(0, 0, "S3 from every storage client at once: aggregate = all clients' bytes "
    .. "over the longest client's window (they ran concurrently)", F.note)
  local cols = { "Test", "Cell", "Status", "Op", "Clients", "Aggregate Gbit/s", "Bytes",
                 "Window s", "Samples" }
  for _, pc in ipairs(require("strata.fleet.model").PERCENTILES) do
    cols[#cols + 1] = "merged " .. pc[1] .. " ms"
  end
  cols[#cols + 1] = "Per client (node: status)"
  sheet.header(ws, F, 2, cols)
  local r = 3
  for _, row in ipairs(fm.s3) do
    for _, op in ipairs { "get", "put" } do
      local x = row[op]
      if x then
        ws:write(r, 0, row.id, F.text)
        ws:write(r, 1, row.cell, F.text)
        ws:write(r, 2, row.status, F.for_status(row.status))
        ws:write(r, 3, op:upper(), F.text)
        ws:write(r, 4, x.clients, F.num)
        ws:write(r, 5, x.gbps, F.num)
        ws:write(r, 6, x.bytes, F.num)
        ws:write(r, 7, x.window_s, F.num)
        ws:write(r, 8, x.samples, F.num)
        for i, pc in ipairs(require("strata.fleet.model").PERCENTILES) do
          ws:write(r, 8 + i, x["lat_" .. pc[1] .. "_ms"], F.num)
        end
        local per = {}
        for _, c in ipairs(row.clients) do per[#per + 1] = c.node .. ": " .. c.status end
        ws:write(r, 9 + #require("strata.fleet.model").PERCENTILES, table.concat(per, ", "), F.wrap)
        r = r + 1
      end
    end
  end
  ws:write(r + 1, 0, "Merged percentiles: every client's request latencies pooled, then "
    .. "nearest rank (as engine/core/stats.c does for one client); never an average of "
    .. "per-client percentiles", F.note)
  diag.write_s3_clients(ws, F, r + 3, fm, sheet.header)
end

return M
