-- The runner's bookkeeping case (issue 19): 10 000 trivial cells, a 200 x 50
-- matrix whose run() only multiplies its two parameters, so that what a run
-- costs is the runner's own cost per cell.  Copied from /tmp/bk/triv10k.lua,
-- the case measured in the session of 2026-12-01 that filed the issue.
local xs, ys = {}, {}
for i = 1, 200 do xs[i] = i end
for i = 1, 50 do ys[i] = i end
test {
  id = "T1", layer = "host", title = "trivial cells",
  matrix = { x = xs, y = ys, order = { "x", "y" } },
  headline = "v",
  criteria = { v = { min = 0 } },
  run = function(t) return { v = t.cell.x * t.cell.y } end,
}
