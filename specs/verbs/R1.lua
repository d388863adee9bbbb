-- RUNBOOK R1: the RDMA devices are there and every expected port is
-- PORT_ACTIVE (ibv_devices / ibv_devinfo / rdma link, from libibverbs and
-- sysfs).  Expected ports: site.rdma.devices ([{device:, port:}]); without
-- it, every port of site.rdma.device, else every port found.
local verbs = require "strata.verbs"
local pcie = require "strata.lib.pcie"

-- The PCIe link behind each expected device (lib/pcie.lua
-- rdma_link_metrics: what the hardware packs judge), and its table.
local function pcie_metrics(t, m, expected, rates)
  local ok, inv = pcall(function() return require("strata.sys").inventory() end)
  if not ok then return end
  local rows = pcie.rdma_link_metrics(inv, expected, rates, m)
  if #rows > 0 then
    t.table("PCIe links", { "device", "PCI address", "vendor:device", "name",
      "link", "Gb/s (after encoding)", "capable Gb/s" }, rows)
  end
end

test {
  id = "R1", layer = "verbs", title = "RDMA devices: every expected port PORT_ACTIVE",
  tags = { "rdma", "inventory" },
  timeout = 30,
  headline = "ports_active",
  run = function(t)
    local r = t.site.rdma or {}
    local inv = verbs.inventory()
    if #inv == 0 and not r.devices and not r.device then
      t.skip("no RDMA device on this host (libibverbs lists none) and the "
             .. "site file expects none (site.rdma.devices)")
    end
    local by = {}
    for _, d in ipairs(inv) do by[d.name] = d end

    local expected = {}
    if r.devices then
      for _, e in ipairs(r.devices) do
        expected[#expected + 1] = { device = e.device, port = e.port or 1 }
      end
    else
      for _, d in ipairs(inv) do
        if not r.device or r.device == d.name then
          for i = 1, #(d.ports or {}) do
            expected[#expected + 1] = { device = d.name, port = i }
          end
        end
      end
      if r.device and not by[r.device] then
        expected[#expected + 1] = { device = r.device, port = r.port or 1 }
      end
    end

    local rows, gids, rates, m = {}, {}, {}, { devices = #inv, ports_expected = #expected,
      ports_active = 0, ports_not_active = 0, ports_missing = 0 }
    for _, e in ipairs(expected) do
      local d = by[e.device]
      local p = d and d.ports and d.ports[e.port]
      local key = ("port.%s.%d"):format(e.device, e.port)
      if not p then
        m.ports_missing = m.ports_missing + 1
        m[key .. ".state"] = "MISSING"
        rows[#rows + 1] = { e.device, e.port, "MISSING" }
        t.note(("%s port %d: not found"):format(e.device, e.port))
      else
        m[key .. ".state"] = p.state
        m[key .. ".rate_gbps"] = p.rate_gbps
        rates[("%s.%d"):format(e.device, e.port)] = p.rate_gbps
        m[key .. ".active_mtu"] = p.active_mtu
        if p.state == "PORT_ACTIVE" then
          m.ports_active = m.ports_active + 1
        else
          m.ports_not_active = m.ports_not_active + 1
          t.note(("%s port %d is %s (%s)"):format(e.device, e.port, p.state,
                                                 p.phys_state))
        end
        local sel
        for _, g in ipairs(p.gids or {}) do
          if g.index == p.gid_index_auto then sel = g end
          gids[#gids + 1] = { e.device, e.port, g.index, g.gid, g.type,
                              g.ipv4 or "", g.netdev or "" }
        end
        rows[#rows + 1] = { e.device, e.port, p.state, p.phys_state,
          p.link_layer, p.active_mtu, p.rate or "", p.rate_gbps,
          p.netdev or d.parent or "", p.gid_index_auto or "",
          sel and sel.gid or "", sel and sel.type or "", d.driver or "",
          d.fw_ver or "", d.numa_node }
      end
    end
    t.table("Ports", { "device", "port", "state", "physical state",
      "link layer", "active MTU", "rate", "line rate Gbit/s", "netdev",
      "GID index (auto)", "GID", "GID type", "driver", "firmware",
      "NUMA node" }, rows)
    pcie_metrics(t, m, expected, rates)
    t.table("GID table", { "device", "port", "index", "GID", "type", "IPv4",
      "netdev" }, gids)
    return m
  end,
}
