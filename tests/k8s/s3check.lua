-- strata lua tests/k8s/s3check.lua ENDPOINT BUCKET mkbucket|check PREFIX:
-- make the bucket the runner uploads into, or check what it uploaded
-- (every file the run wrote, read back by key: non-empty, the workbook a
-- zip).  usage: ... check PREFIX KEY...
local s3 = require "strata.s3"
local cl <close> = s3.client { endpoint = arg[1], region = "us-east-1",
  access_key_env = "AWS_ACCESS_KEY_ID", secret_key_env = "AWS_SECRET_ACCESS_KEY" }
if arg[3] == "mkbucket" then
  cl:create_bucket(arg[2])
  os.exit(0)
end
-- the keys the runner said it uploaded (arg[5..])
local keys = {}
for i = 5, #arg do keys[#keys + 1] = arg[i] end
local want = { ".xlsx", ".jsonl", ".json" }
local fails = 0
for _, ext in ipairs(want) do
  local found
  for _, k in ipairs(keys) do
    if k:sub(1, #arg[4]) == arg[4] and k:sub(-#ext) == ext then found = k end
  end
  if not found then
    fails = fails + 1
    io.stderr:write("FAIL: no ", ext, " under ", arg[4], " (", table.concat(keys, " "), ")\n")
  else
    local g = cl:request { method = "GET", bucket = arg[2], key = found }
    if g.status ~= 200 or #g.body == 0 or (ext == ".xlsx" and g.body:sub(1, 2) ~= "PK") then
      fails = fails + 1
      io.stderr:write("FAIL: ", found, " HTTP ", g.status, " ", #g.body, " bytes\n")
    end
  end
end
io.stderr:write(fails == 0 and "upload: ok\n" or "")
os.exit(fails == 0 and 0 or 1)
