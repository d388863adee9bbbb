-- strata.lib.perftest: read what perftest's tools print (ib_write_bw,
-- ib_read_bw, ib_send_bw, ib_*_lat) and what ibv_devinfo prints: for the
-- specs that run them where strata itself cannot go (inside a Kubernetes
-- pod, R8) and for the side-by-side benches.
local M = {}

local function words(line)
  local w = {}
  for x in line:gmatch("%S+") do w[#w + 1] = x end
  return w
end

-- The result rows of a bandwidth run:
-- { {bytes=, iterations=, bw_peak=, bw_avg=, msg_rate_mpps=, unit="Gb/sec"|"MB/sec"} }
function M.parse_bw(text)
  local rows, unit = {}, nil
  for line in text:gmatch("[^\n]+") do
    local u = line:match("BW average%[([^%]]+)%]")
    if u then unit = u end
    local w = words(line)
    if unit and #w >= 5 and tonumber(w[1]) and tonumber(w[2]) and tonumber(w[4]) then
      rows[#rows + 1] = { bytes = tonumber(w[1]), iterations = tonumber(w[2]),
                          bw_peak = tonumber(w[3]), bw_avg = tonumber(w[4]),
                          msg_rate_mpps = tonumber(w[5]), unit = unit }
    end
  end
  if #rows == 0 then error("no bandwidth result line in the perftest output", 0) end
  return rows
end

-- Gbit/s of a parsed row whatever unit perftest printed it in.
function M.gbps(row)
  if row.unit == "Gb/sec" then return row.bw_avg end
  if row.unit == "MB/sec" then return row.bw_avg * 8 * 1048576 / 1e9 end
  error("unknown perftest bandwidth unit " .. tostring(row.unit), 0)
end

-- The result rows of a latency run (microseconds):
-- { {bytes=, iterations=, min=, max=, typical=, avg=, stdev=, p99=, p999=} }
function M.parse_lat(text)
  local rows, seen = {}, false
  for line in text:gmatch("[^\n]+") do
    if line:find("t_typical", 1, true) or line:find("t_avg", 1, true) then seen = true end
    local w = words(line)
    if seen and #w >= 7 and tonumber(w[1]) and tonumber(w[3]) then
      rows[#rows + 1] = { bytes = tonumber(w[1]), iterations = tonumber(w[2]),
        min = tonumber(w[3]), max = tonumber(w[4]), typical = tonumber(w[5]),
        avg = tonumber(w[6]), stdev = tonumber(w[7]), p99 = tonumber(w[8]),
        p999 = tonumber(w[9]) }
    end
  end
  if #rows == 0 then error("no latency result line in the perftest output", 0) end
  return rows
end

-- ibv_devinfo: { {hca_id=, transport=, fw_ver=, ports = { {port=, state=,
-- active_mtu=, link_layer=} } } }
function M.parse_devinfo(text)
  local devs, dev, port = {}, nil, nil
  for line in text:gmatch("[^\n]+") do
    local hca = line:match("^hca_id:%s*(%S+)")
    if hca then
      dev = { hca_id = hca, ports = {} }
      devs[#devs + 1] = dev
      port = nil
    elseif dev then
      local k, v = line:match("^%s*([%w_]+):%s*(.-)%s*$")
      local pn = line:match("^%s*port:%s*(%d+)")
      if pn then
        port = { port = tonumber(pn) }
        dev.ports[#dev.ports + 1] = port
      elseif k and port then
        if k == "state" then port.state = v:match("^(%S+)")
        elseif k == "active_mtu" then port.active_mtu = tonumber(v:match("^(%d+)"))
        elseif k == "link_layer" then port.link_layer = v
        elseif k == "phys_state" then port.phys_state = v:match("^(%S+)") end
      elseif k then
        dev[k] = v
      end
    end
  end
  return devs
end

return M
