-- strata.runner.progress: what a run shows while it runs, on stderr: on a
-- terminal a line redrawn every tick (the test, its cell, the seconds in
-- it); without one (CI logs, nohup) a plain line now and then; and one
-- line per test when it is rolled up.
local core = require "strata.core"
local verdict = require "strata.verdict"

local M = {}
local P = {}
P.__index = P

-- A plain progress line for logs (no terminal) this often, in seconds
-- (STRATA_PROGRESS_EVERY changes it: tests, impatient logs).
local PLAIN_EVERY = tonumber(os.getenv("STRATA_PROGRESS_EVERY") or "") or 30

-- tty: stderr is a terminal; total: the tests planned.
function M.new(tty, total)
  local now = core.now()
  return setmetatable({ tty = tty, total = total, run0 = now,
                        last_plain = now }, P)
end

-- The ticks of test t (the i-th of the plan, ncells cells): tick(el) for
-- core.isolate and the fork server, at(ci, cell) to name the cell being
-- run.  One closure per test, not per cell; the label is made only when
-- a line shows it.
function P:ticker(i, t, ncells)
  local cur_ci, cur_cell, cur_label
  local function label()
    cur_label = cur_label or verdict.label(t.params, cur_cell)
    return cur_label
  end
  local function tick(el)
    if self.tty then
      io.stderr:write(("\r\27[K  %s [%d/%d] %s  %.1f s"):format(
        t.id, cur_ci, ncells, label(), el))
    elseif core.now() - self.last_plain >= PLAIN_EVERY then
      -- CI logs and nohup runs: a plain line now and then
      self.last_plain = core.now()
      local l = label()
      io.stderr:write(("strata: test %d/%d %s, cell %d/%d%s, %.0f s in "
        .. "this cell, %.0f s in all\n"):format(i, self.total, t.id, cur_ci,
        ncells, l ~= "" and (" " .. l) or "", el, core.now() - self.run0))
    end
  end
  local function at(ci, cell) cur_ci, cur_cell, cur_label = ci, cell, nil end
  return tick, at
end

-- A cell ended: the redrawn line goes.
function P:cell_done()
  if self.tty then io.stderr:write("\r\27[K") end
end

-- Test t (the i-th, started at t0) rolled up as roll.
function P:test_done(i, t, roll, t0)
  local line = ("[%2d/%d] %-8s %-8s %-40s %-7s %5.1f s"):format(i, self.total,
    t.id, t.layer, t.title:sub(1, 40), roll.status, core.now() - t0)
  if roll.status ~= "PASS" and roll.reason then
    line = line .. "  " .. roll.reason
  end
  io.stderr:write(line, "\n")
  self.last_plain = core.now()
end

return M
