-- sys.read, sys.run and sys.inventory/locality on this machine and on the
-- recorded H200 node (label spec; ./build/strata lua tests/host/sysrun.lua).
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local h = require "helpers"
local sys = require "strata.sys"
local check, raises = h.check, h.raises

-- live processes (not zombies) whose argv is exactly argv; SIGKILL acts
-- when the target next runs, so give a loaded machine up to a second
local function alive_now(argv)
  local core = require "strata.core"
  local want, n = table.concat(argv, "\0") .. "\0", 0
  for _, pid in ipairs(core.listdir("/proc")) do
    if pid:match("^%d+$") then
      local ok, cmd = pcall(sys.read, "/proc/" .. pid .. "/cmdline")
      local ok2, st = pcall(sys.read, "/proc/" .. pid .. "/stat")
      if ok and ok2 and cmd == want and st:match("%) (%a)") ~= "Z" then n = n + 1 end
    end
  end
  return n
end

local function alive(argv)
  local n
  for _ = 1, 20 do
    n = alive_now(argv)
    if n == 0 then return 0 end
    sys.run { cmd = { "sleep", "0.05" } }
  end
  return n
end

-- sys.run: a deadline kills the whole group within the deadline.
do
  local t0 = h.now()
  local r = sys.run { cmd = { "sh", "-c", "sleep 31.5; echo never" }, timeout = 1 }
  local took = h.now() - t0
  check(r.timed_out and r.signal == 9 and r.code == 137, "timed out: %s %s",
        tostring(r.timed_out), tostring(r.code))
  check(took >= 1 and took < 2.5, "sleep with timeout 1 took %.2f s", took)
  check(r.stdout == "", "no output")
  check(alive { "sleep", "31.5" } == 0, "the group's sleep survived the deadline")
  -- what a command leaves running in its group goes when it exits
  r = sys.run { cmd = { "sh", "-c", "sleep 32.5 & echo started" }, timeout = 10 }
  check(r.code == 0 and r.stdout == "started\n" and r.duration_s < 2, "background child")
  check(alive { "sleep", "32.5" } == 0, "a background child survived its command")
end

-- exit codes, stdout/stderr, stdin, env
do
  local r = sys.run { cmd = { "sh", "-c", "echo out; echo err >&2; exit 7" } }
  check(r.code == 7 and r.stdout == "out\n" and r.stderr == "err\n" and not r.timed_out,
        "code/out/err")
  local big = string.rep("0123456789abcdef", 65536)  -- 1 MiB
  r = sys.run { cmd = { "cat" }, stdin = big }
  check(r.code == 0 and r.stdout == big, "1 MiB stdin round trip (%d bytes back)", #r.stdout)
  r = sys.run { cmd = { "sh", "-c", "echo $STRATA_T ${HOME-unset}" },
                env = { STRATA_T = "bar", HOME = false } }
  check(r.stdout == "bar unset\n", "env: %q", r.stdout)
  r = sys.run { cmd = { "head", "-c", 100000, "/dev/zero" }, max_output = 1000 }
  check(#r.stdout == 1000 and r.truncated, "bounded output")
  -- a program that exits without reading its stdin: no SIGPIPE for us
  r = sys.run { cmd = { "true" }, stdin = string.rep("x", 4 << 20) }
  check(r.code == 0, "stdin to a program that does not read it")
  r = sys.run { cmd = { "pwd" }, cwd = "/tmp" }
  check(r.stdout == "/tmp\n", "cwd")
end

-- a missing program: code 127 and a clear stderr; need = true -> SKIP
do
  local r = sys.run { cmd = { "strata-no-such-tool", "-L" } }
  check(r.code == 127 and r.stderr:find("cannot execute 'strata-no-such-tool'", 1, true),
        "missing program: %s %q", r.code, r.stderr)
  local ok, e = pcall(sys.run, { cmd = { "strata-no-such-tool" }, need = true })
  check(not ok and type(e) == "table" and e.skip and
        e.skip:find("'strata-no-such-tool' is not installed", 1, true), "need -> skip")
  raises({ "sys.run: 'false' failed with exit code 1" }, sys.run,
         { cmd = { "false" }, check = true })
  raises({ "sys.run: 'sleep' timed out" }, sys.run,
         { cmd = { "sleep", "5" }, timeout = 0.2, check = true })
  raises({ "option 'cmd' must be a list" }, sys.run, { cmd = "ls -l" })
  raises({ "sys.run: unknown option 'shell'" }, sys.run, { cmd = { "ls" }, shell = true })
end

-- sys.read
do
  check(sys.read("/proc/self/stat"):match("^%d+ "), "read /proc/self/stat")
  raises({ "sys.read: /nonexistent/x: No such file or directory (2)" }, sys.read,
         "/nonexistent/x")
  raises({ "longer than 10 bytes" }, sys.read, "/proc/cpuinfo", 10)
  local none, why = sys.try_read("/nonexistent/x")
  check(none == nil and why == "/nonexistent/x: No such file or directory (2)", "try_read of a missing file: nil, why (%s)", why)
  check(sys.try_read("/proc/self/stat"):match("^%d+ "), "try_read a file")
end

-- inventory on this machine
do
  local inv = sys.inventory()
  check(type(inv.hostname) == "string" and #inv.hostname > 0, "hostname")
  check(inv.kernel and inv.kernel.release and inv.os and inv.os.id, "kernel, os")
  check(inv.cpu.threads >= 1 and inv.cpu.online_count == inv.cpu.threads,
        "cpus %s/%s", inv.cpu.online_count, inv.cpu.threads)
  check(inv.memory.total_bytes > 1e8, "memory")
  check(#inv.numa >= 1 and inv.numa[1].cpu_count >= 1, "numa")
  local lo
  for _, n in ipairs(inv.nics) do if n.name == "lo" then lo = n end end
  check(lo and lo.virtual and lo.mtu >= 1500, "lo listed as virtual")
  check(inv.libraries.lua:match("^Lua 5%.4") and inv.libraries.libcurl, "libraries")
  check(type(inv.pci) == "table" and type(inv.rdma) == "table", "lists present")
end

-- inventory and locality of the recorded H200 node
do
  local root = h.fixtures .. "/gpu-node"
  local inv = sys.inventory { root = root }
  check(inv.hostname == "recorded-host" and inv.os.id == "ubuntu", "recorded host")
  check(inv.cpu.sockets == 1 and inv.cpu.cores == 16 and inv.cpu.threads == 16, "topology")
  local gpu
  for _, d in ipairs(inv.pci) do if d.kind == "gpu" then gpu = d end end
  check(gpu and gpu.vendor == "NVIDIA" and gpu.device_id == "2335" and
        gpu.driver == "nvidia" and gpu.class == "0x030200", "the H200")
  check(gpu and gpu.link.current_width == 16 and
        gpu.link.max_speed == "32.0 GT/s PCIe", "link")
  check(#inv.block == 0 and #inv.rdma == 0, "no nvme, no rdma there")
  local loc = sys.locality { root = root }
  check(#loc.nodes == 1 and loc.nodes[1].cpus == "0-15", "nodes")
  check(loc.devices[1] and loc.devices[1].kind == "gpu" and
        loc.devices[1].numa_node == -1 and loc.devices[1].path[1] == "pci0000:00" and
        loc.devices[1].path[2] == "0000:00:06.0", "GPU locality")
  local empty = sys.inventory { root = "/nonexistent" }
  check(#empty.pci == 0 and #empty.nics == 0 and empty.cpu.threads == nil,
        "absent tree: empty, not an error")
  raises({ "sys.inventory: unknown option 'rot'" }, sys.inventory, { rot = "/" })
end

-- known load generators
do
  local r = sys.tcp_loopback { bytes = 4 << 20 }
  check(r.bytes == 4 << 20 and r.corrupt == 0 and r.gbps > 0, "loopback")
end

return h.finish("host sys")
