-- strata.units: the one table of units every writer uses.  A spec names
-- its metrics' units (`units = { gbps = "GB/s" }`); this table holds the
-- spellings strata knows, what kind of quantity each is (bandwidth axes
-- start at zero) and how a metric is shown with its unit, so that a name
-- like `gbps` is never read without the unit it holds beside it.
local M = {}

-- unit -> kind.  Bytes are B/KiB/MiB/GiB (binary) or kB/MB/GB (decimal);
-- rates per second ("tok/s" as vLLM's benchmark prints it).  "x" is a
-- ratio, "%" a percentage.
M.KNOWN = {
  ["Gbit/s"] = "bandwidth", ["Mbit/s"] = "bandwidth",
  ["GB/s"] = "bandwidth", ["MB/s"] = "bandwidth", ["kB/s"] = "bandwidth",
  ["GiB/s"] = "bandwidth", ["MiB/s"] = "bandwidth",
  ["B"] = "size", ["KiB"] = "size", ["MiB"] = "size", ["GiB"] = "size",
  ["kB"] = "size", ["MB"] = "size", ["GB"] = "size",
  ["ns"] = "time", ["us"] = "time", ["ms"] = "time", ["s"] = "time",
  ["%"] = "ratio", ["x"] = "ratio",
  ["ops/s"] = "rate", ["req/s"] = "rate", ["tok/s"] = "rate",
  ["Mpps"] = "rate", ["msg/s"] = "rate",
}

-- Other spellings people type, read as the one above.
M.ALIAS = { ["Gb/s"] = "Gbit/s", ["Gbps"] = "Gbit/s", ["Mb/s"] = "Mbit/s",
            ["GBps"] = "GB/s", ["µs"] = "us", ["usec"] = "us",
            ["sec"] = "s", ["pct"] = "%", ["tokens/s"] = "tok/s" }

-- The canonical spelling of u, or nil, why.
function M.canon(u)
  if M.KNOWN[u] then return u end
  if M.ALIAS[u] then return M.ALIAS[u] end
  local names = {}
  for k in pairs(M.KNOWN) do names[#names + 1] = k end
  table.sort(names)
  return nil, ("unknown unit '%s' (known: %s)"):format(tostring(u),
    table.concat(names, " "))
end

-- The unit of metric in a result's (or test's) units table, or nil.
function M.of(units, metric)
  local u = units and units[metric]
  return u and (M.canon(u) or u) or nil
end

-- "gbps (GB/s)": a metric as a column header or label.
function M.label(units, metric)
  local u = M.of(units, metric)
  return u and (metric .. " (" .. u .. ")") or metric
end

-- The kind of quantity a unit is (bandwidth, rate, size, time, ratio), or nil.
function M.kind(u)
  return u and M.KNOWN[M.ALIAS[u] or u] or nil
end

-- Whether an axis of this unit starts at zero (bandwidths and rates do:
-- a 55.317 vs 55.323 GB/s chart on a 55.317..55.323 axis misleads).
function M.zero_based(u)
  local k = u and M.KNOWN[M.canon(u) or ""]
  return k == "bandwidth" or k == "rate" or k == "size"
end

-- The unit a header text names in parentheses or as a word: "GB/s
-- (median)" -> "GB/s", "host Gbit/s" -> "Gbit/s".
function M.in_text(text)
  text = tostring(text or "")
  for word in text:gmatch("[^%s%(%)]+") do
    if M.KNOWN[word] then return word end
    if M.ALIAS[word] then return M.ALIAS[word] end
  end
end

return M
