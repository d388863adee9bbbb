-- core.fork_server's two-step cells (server:send, cell:wait, cell:drop)
-- and a cell's questions (core.ask): what the runner starts a cell with
-- before it has journaled the last one.  Run: strata lua tests/lib/fork_server.lua
package.path = arg[0]:gsub("[^/]*$", "") .. "../host/?.lua;" .. package.path
local h = require "helpers"
local core = require "strata.core"
local check = h.check

local state = "at start"
local function cell(req)
  if req == "sleep" then core.sleep(5) end
  if req == "nap" then core.sleep(1.5) end
  if req == "ask" then return "asked: " .. core.ask("what") end
  return "echo " .. req
end
local server = core.fork_server(nil, cell)
local ask = function(q) return q .. " = " .. state end

-- send, then the parent works, then wait: the answer, and the question
-- answered with what the parent holds when it waits
local c = server:send("ask", { ask = ask })
state = "after send"
local st, out = c:wait({ ask = ask })
check(st == "ok" and out == "asked: what = after send", "%s %s", st, tostring(out))
h.raises({ "already waited for" }, c.wait, c)

-- the deadline counts from send, not from wait (from wait: 2 s more;
-- the margins are wide for a loaded CI host)
c = server:send("sleep", { timeout = 2 })
core.sleep(1.5)
local t0 = core.now()
st = c:wait({ timeout = 2 })
check(st == "timeout", "%s", st)
check(core.now() - t0 < 1.5, "waited %.2f s after the send's 1.5 s", core.now() - t0)

-- sent while another runs: queued at the server, started as that one
-- exits, its deadline counted from its start (from send, b's 1 s would
-- end inside a's 1.5 s nap)
local a = server:send("nap")
local b = server:send("b", { timeout = 1 })
check(a:times() == nil, "started before its wait")
st, out = a:wait()
check(st == "ok" and out == "echo nap", "%s %s", st, tostring(out))
st, out = b:wait({ timeout = 1 })
check(st == "ok" and out == "echo b", "%s %s", st, tostring(out))
local a0, a1 = a:times()
local b0, b1 = b:times()
check(b0 >= a0 + 1.45 and b0 >= a1 and b1 >= b0, "a %.3f-%.3f, b %.3f-%.3f", a0, a1, b0, b1)
check(a1 - a0 >= 1.49 and a1 - a0 < 4, "a ran %.3f s", a1 - a0)

-- the server killed with one cell running and one queued: the running
-- one's end is not known, the queued one runs forked from here
local s3 = core.fork_server(nil, cell)
a = s3:send("nap")
b = s3:send("k")
core.sleep(0.05)
os.execute("kill -9 " .. s3:pid())
st, out = a:wait()
check(st == "crashed" and tostring(out):find("fork server died", 1, true), "%s %s", st, tostring(out))
st, out = b:wait()
check(st == "ok" and out == "echo k", "%s %s", st, tostring(out))
s3:close()

-- drop: the cell killed unread, the server goes on
c = server:send("sleep")
t0 = core.now()
c:drop()
check(core.now() - t0 < 2, "drop took %.2f s", core.now() - t0)
st, out = server:run("x")
check(st == "ok" and out == "echo x", "%s %s", st, tostring(out))

-- a question without an ask function: the cell's error says so
st, out = server:run("ask")
check(st == "error" and tostring(out):find("no ask function", 1, true), "%s %s", st, tostring(out))

-- the server gone before send: the cell runs forked from here
check(core.sleep ~= nil and server:pid() ~= nil, "server pid")
os.execute("kill -9 " .. server:pid())
core.sleep(0.2)
c = server:send("y")
st, out = c:wait()
check(st == "ok" and out == "echo y", "%s %s", st, tostring(out))

-- closed with a cell outstanding: wait says so, drop lets go
local s2 = core.fork_server(nil, function() core.sleep(5) return "" end)
c = s2:send("z")
s2:close()
h.raises({ "server was closed" }, c.wait, c)
local c2 = core.fork_server(nil, function() return "" end)
local d = c2:send("w")
c2:close()
d:drop()

os.exit(h.finish("fork_server"))
