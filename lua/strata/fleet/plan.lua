-- strata.fleet.plan: who runs what in a fleet run.  The site file names
-- roles by Slurm node name or feature (site.fleet.roles); the selected
-- tests fall into phases by rung:
--   node    every node, in parallel: host, GPU (GPU nodes), verbs with
--           no peer (R1, R6, loopback R2/R3), GPU-memory RDMA, NCCL
--   pair    R2/R3 between node pairs (a ring, or all pairs up to a limit),
--           in rounds of disjoint pairs; the far end is the peer's agent
--   incast  R7 on one receiver, senders drawn from the allocation
--   s3      the S3 rows on every storage-client node at once
--   once    Kubernetes and vLLM rows, on the first node only
local glob = require "strata.glob"

local M = {}

local PHASE_OF_LAYER = {
  host = "node", gpu = "node", verbs = "node", ["gpu-rdma"] = "node",
  nccl = "node", roce = "incast", s3 = "s3", s3rdma = "s3",
  k8s = "once", vllm = "once",
}
M.GPU_LAYERS = { gpu = true, ["gpu-rdma"] = true, nccl = true }
M.PAIR_TESTS = { "R2", "R3" }

-- Does node (from slurm.allocation) match a role's selector?
--   { nodes = ["gpu*", "n1"], features = ["gpu"] }: a name glob or a
--   feature (either matches); a bare string or list means nodes.
local function matches(node, sel)
  if type(sel) == "string" then sel = { nodes = { sel } } end
  if sel[1] then sel = { nodes = sel } end
  local nodes = type(sel.nodes) == "string" and { sel.nodes } or sel.nodes or {}
  local feats = type(sel.features) == "string" and { sel.features } or sel.features or {}
  for _, p in ipairs(nodes) do
    if glob.match(p, node.name) then return true end
  end
  for _, f in ipairs(feats) do
    if node.features[f] then return true end
  end
  return false
end
M.matches = matches

-- roles: name -> { node name -> true }.  Without site.fleet.roles every
-- node is a GPU node and a storage client; the aistor role (endpoint
-- nodes in the allocation) takes a node out of both.
function M.roles(fleet, nodes)
  local spec = (fleet and fleet.roles) or {}
  local roles = { gpu = {}, storage_client = {}, aistor = {} }
  for _, n in ipairs(nodes) do
    local ais = spec.aistor and matches(n, spec.aistor)
    if ais then roles.aistor[n.name] = true end
    if not ais and (not spec.gpu or matches(n, spec.gpu)) then
      roles.gpu[n.name] = true
    end
    if not ais and (not spec.storage_client or matches(n, spec.storage_client)) then
      roles.storage_client[n.name] = true
    end
  end
  return roles
end

-- The tests measured between node pairs: site.fleet.pairs.tests (e.g.
-- add R4, R5 for GPU memory between nodes), default R2 and R3.
function M.pair_tests(fleet)
  local t = fleet and fleet.pairs and fleet.pairs.tests
  if t == nil then return M.PAIR_TESTS end
  if type(t) ~= "table" then
    error(require("strata.args").usage_error(
      "site.fleet.pairs.tests: expected a list of test IDs"), 0)
  end
  return t
end

-- The phase of each selected test: { node = {tests}, pair = {tests}, ... }.
-- A pair test also runs in the node phase (loopback on the node's device).
function M.phases(order, pair_ids)
  local out = { node = {}, pair = {}, incast = {}, s3 = {}, once = {} }
  local pair = {}
  for _, id in ipairs(pair_ids or M.PAIR_TESTS) do pair[id] = true end
  for _, t in ipairs(order) do
    local ph = PHASE_OF_LAYER[t.layer] or "node"
    table.insert(out[ph], t)
    if pair[t.id] then table.insert(out.pair, t) end
  end
  return out
end

-- The pairs to measure, as {a, b} (a drives, b runs the agent):
-- "ring" (default) i -> i+1, or "all" ordered-once pairs, at most max.
function M.pairs(names, how, max)
  local out = {}
  local n = #names
  if n < 2 then return out end
  if (how or "ring") == "ring" then
    for i = 1, n do
      if n == 2 and i == 2 then break end
      out[#out + 1] = { names[i], names[i % n + 1] }
    end
  elseif how == "all" then
    for i = 1, n do
      for j = i + 1, n do out[#out + 1] = { names[i], names[j] } end
    end
  else
    error(require("strata.args").usage_error(
      ("site.fleet.pairs.mode: '%s' is not ring or all"):format(tostring(how))), 0)
  end
  if max and #out > max then
    for i = #out, max + 1, -1 do out[i] = nil end
  end
  return out
end

-- The rails: the device names of site.rdma.devices when it lists two or
-- more (one site file for the fleet, so every node is taken to have the
-- same devices), else nil and pairs run node to node on site.rdma.device
-- as before.  Device i of one node and device i of another share rail i.
function M.rails(rdma)
  local devs, seen = {}, {}
  for _, d in ipairs((rdma or {}).devices or {}) do
    local name = type(d) == "table" and d.device or d
    if type(name) == "string" and not seen[name] then
      seen[name] = true
      devs[#devs + 1] = name
    end
  end
  return #devs > 1 and devs or nil
end

-- Each node pair {a, b} as per-device pairs {a, b, dev = {da, db},
-- rail = "same"|"cross"}: device i to device i (same rail), and with
-- cross every i -> j too (site.fleet.pairs.cross_rail).  Without rails,
-- or a pair that already names its devices (a confirmation), unchanged.
function M.rail_pairs(list, devs, cross)
  if not devs then return list end
  local out = {}
  for _, p in ipairs(list) do
    if p.dev then
      out[#out + 1] = p
    else
      for i, da in ipairs(devs) do
        for j, db in ipairs(devs) do
          if i == j or cross then
            out[#out + 1] = { p[1], p[2], dev = { da, db }, rail = i == j and "same" or "cross" }
          end
        end
      end
    end
  end
  return out
end

-- The name of one end of a pair: the node, or "node:device" on a rail.
function M.endpoint(node, dev)
  return dev and (node .. ":" .. dev) or node
end

-- A pair record's pair as text, "g1->g2" or on rails "g1:rxe1->g2:rxe1"
-- (nil for a record of no pair).
function M.pair_label(r)
  if not (r.pair and r.pair[1]) then return nil end
  local d = r.pair_devices or {}
  return M.endpoint(r.pair[1], d[1]) .. "->" .. M.endpoint(r.pair[2] or "?", d[2])
end

-- The pair modes: ring, all (strata.fleet.plan.pairs) and phased
-- (strata.fleet.phased).  A mode that is none of them is a usage error
-- naming where it came from.
M.MODES = { ring = true, all = true, phased = true }
function M.check_mode(mode, from)
  if mode ~= nil and not M.MODES[mode] then
    error(require("strata.args").usage_error(("%s: '%s' is not ring, all or phased")
      :format(from or "site.fleet.pairs.mode", tostring(mode))), 0)
  end
end

-- Rounds of disjoint pairs (no node in two pairs of one round): a node's
-- NIC carries one measurement at a time.
function M.rounds(pairs)
  local left, rounds = {}, {}
  for i, p in ipairs(pairs) do left[i] = p end
  while #left > 0 do
    local busy, round, rest = {}, {}, {}
    for _, p in ipairs(left) do
      if not busy[p[1]] and not busy[p[2]] then
        busy[p[1]], busy[p[2]] = true, true
        round[#round + 1] = p
      else
        rest[#rest + 1] = p
      end
    end
    rounds[#rounds + 1] = round
    left = rest
  end
  return rounds
end

return M
