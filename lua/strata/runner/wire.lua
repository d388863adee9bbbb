-- strata.runner.wire: the messages between the runner and a cell's child
-- (through the fork server, core.fork_server, or core.isolate): the
-- request that names a cell, the questions a cell asks of the runner
-- (t.result, t.results: core.ask) and their answers, and the child's
-- answer read back as the raw outcome the journal keeps.
local core = require "strata.core"
local cjson = require "cjson"
local spec = require "strata.spec"
local denull = require("strata.journal").denull
local cell = require "strata.runner.cell"

local M = {}

-- Every JSON text of a run (these messages, the journal) spells NaN and
-- infinities as null and keeps sparse arrays as arrays.
cjson.encode_invalid_numbers("null")
cjson.encode_sparse_array(true)

-- A cell's request: its test's index in the plan, then the positions
-- of its values, as decimal integers ("3 17 2").
function M.request(i, t, c)
  return table.concat({ i, table.unpack(spec.cell_at(t, c)) }, " ")
end

-- A value of an answer to a question, as it was.
local function answered(x)
  if x == cjson.null then return nil end
  return type(x) == "table" and denull(x) or x
end

-- The child's t.result / t.results: questions to the runner (core.ask).
local function child_env(order, site)
  return { site = site,
    lookup = function(id, c)
      local a = cjson.decode(core.ask(cjson.encode { "result", id,
                                                     c or cjson.null }))
      return answered(a[1]), answered(a[2])
    end,
    lookup_all = function(id)
      local out = {}
      for _, x in ipairs(cjson.decode(core.ask(cjson.encode { "results", id }))) do
        out[#out + 1] = { cell = x[2] == cjson.null and {}
                            or spec.cell_from(order[x[1]], x[2]),
                          metrics = answered(x[3]), status = x[4] }
      end
      return out
    end }
end

-- The fork server's handler, in the cell's child: a request -> the cell
-- run (strata.runner.cell), its answer the JSON text of its outcome.
function M.server_handler(order, site)
  local env = child_env(order, site)
  return function(req)
    local at, i = {}, nil
    for n in req:gmatch("%d+") do
      if i then at[#at + 1] = tonumber(n) else i = tonumber(n) end
    end
    return cell.run(order[i], spec.cell_from(order[i], at), env)
  end
end

-- The runner's side of a cell's questions: ask(q) answers one, from
-- results (id -> records) and lookup (id, cell -> metrics or nil, why).
-- A result's cell travels as where its values are in its test's matrix
-- (the child has the same), so a cell comes back the table it was.
function M.answerer(order, results, lookup)
  local index_of = {}     -- test id -> its index in order
  for i, t in ipairs(order) do index_of[t.id] = index_of[t.id] or i end
  return function(q)
    local m = cjson.decode(q)
    if m[1] == "result" then
      local metrics, err = lookup(m[2], m[3] ~= cjson.null and m[3] or nil)
      return cjson.encode { metrics or cjson.null, err or cjson.null }
    end
    local out = {}
    for _, r in ipairs(results[m[2]] or {}) do
      local t = order[index_of[r.id]]
      local gated = r.outcome.kind == "blocked" or r.outcome.kind == "gated_skip"
      out[#out + 1] = { index_of[r.id], gated and cjson.null
                          or spec.cell_at(t, r.cell),
                        r.metrics or cjson.null, r.status }
    end
    return cjson.encode(out)
  end
end

-- What a child answered, checked: anything but the table cell.run
-- encodes (garbage, a plain string, fields of the wrong type) is that
-- cell's error, never the runner's.
local TABLE_FIELDS = { "tables", "notes", "metrics", "counter_errors",
                       "skip_metrics", "explain" }
local TEXT_FIELDS = { "skip", "error", "fail" }
local function answer(payload)
  local ok, out = pcall(cjson.decode, payload)
  if not ok or type(out) ~= "table" then
    return nil, ("the cell's child answered something that is not a "
      .. "result (%d bytes: %q)"):format(#payload, payload:sub(1, 60))
  end
  out = denull(out)
  for _, k in ipairs(TABLE_FIELDS) do
    if out[k] ~= nil and type(out[k]) ~= "table" then
      return nil, ("the cell's child answered a result whose %s is a %s"):format(
        k, type(out[k]))
    end
  end
  for _, k in ipairs(TEXT_FIELDS) do
    if out[k] ~= nil then out[k] = tostring(out[k]) end
  end
  if not (out.skip or out.error or out.metrics) then
    return nil, "the cell's child answered neither metrics nor an error"
  end
  return out
end

-- The child's end (st, payload, limit: core.isolate's or the fork
-- server's) -> the raw outcome the journal keeps (verdict.cell turns it
-- into a status and reason), and the child's answer (tables, notes,
-- metrics, ...; {} when there is none).
function M.outcome(st, payload, t, limit)
  if st == "ok" then
    local out, bad = answer(payload)
    if not out then return { kind = "error", why = bad }, {} end
    local o = { kind = "ok", fail = out.fail,
                counter_errors = out.counter_errors }
    if out.skip then o = { kind = "skip", why = out.skip }
    elseif out.error then
      o = { kind = "error", why = out.error, traceback = out.traceback }
    end
    return o, out
  elseif st == "timeout" then
    return { kind = "timeout", timeout = t.timeout }, {}
  elseif st == "crashed" then
    return { kind = "crashed", why = tostring(payload) }, {}
  elseif st == "interrupted" then
    return { kind = "stopped" }, {}
  end
  return { kind = "error", why = tostring(payload), limit = limit }, {}
end

return M
