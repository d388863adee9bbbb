-- peer_dies_check.lua JOURNAL: PK1 is an ERROR naming the peer, well
-- inside its timeout; PK2 PASSed; the run ended (an "end" record).
local journal = require "strata.journal"
local recs = journal.read(assert(arg[1]))
local by, last = {}, recs[#recs]
for _, r in ipairs(recs) do if r.type == "result" then by[r.id] = r end end
local pk1, pk2 = by.PK1 or {}, by.PK2 or {}
print(("PK1 %s %.1f s: %s"):format(tostring(pk1.status), pk1.duration_s or -1,
                                   tostring(pk1.reason)))
print(("PK2 %s"):format(tostring(pk2.status)))
-- killed mid-transfer: not "cannot connect" (the agent was up and serving)
local ok = pk1.status == "ERROR" and tostring(pk1.reason):find("peer ", 1, true)
           and not tostring(pk1.reason):find("cannot connect", 1, true)
           and (pk1.duration_s or 99) < 40 and pk2.status == "PASS"
           and last and last.type == "end"
return ok and 0 or 1
