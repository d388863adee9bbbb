-- cufile_absent.lua: cuda.cufile where there is no GPU and no libcufile
-- (CI): a SKIP naming what is missing, and option errors raised first.
local cuda = require "strata.cuda"
local bad = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then bad = bad + 1 end
end
local ok, e = pcall(cuda.cufile, { path = "/etc/hostname", size = 4096 })
check(not ok and type(e) == "table" and (tostring(e.skip):find("libcufile", 1, true)
      or tostring(e.skip):find("CUDA", 1, true)),
      "no GDS here: SKIP with the reason (" .. tostring(e) .. ")")
ok, e = pcall(cuda.cufile, { size = 4096 })
check(not ok and tostring(e):find("'path' is required", 1, true), "path required")
ok, e = pcall(cuda.cufile, { path = "/x", size = 0 })
check(not ok and tostring(e):find("'size' must be > 0", 1, true), "size > 0")
ok, e = pcall(cuda.cufile, { path = "/x", size = 1, dir = "sideways" })
check(not ok and tostring(e):find("'dir' must be", 1, true), "dir read|write")
ok, e = pcall(cuda.cufile, { path = "/x", size = 1, colour = 1 })
check(not ok and tostring(e):find("colour", 1, true), "unknown option named")
os.exit(bad == 0 and 0 or 1)
