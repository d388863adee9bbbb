#!/bin/bash
# make_two_rail.sh DEST - write a constructed /proc + /sys tree of an
# 8-GPU, 4-rail node (fixtures/host/two-rail) for the GPU-NIC pairing of
# R4/R5 per rail and `strata site init`: two NUMA nodes (GPU0-3 on node 0,
# GPU4-7 on node 1, the layout the second source document draws for a
# dual-socket 8-GPU node), each behind two PCIe switches that also hold one
# E810 RDMA port (irdma0-3), so each NIC has one GPU on its own switch, one
# on the other switch of its node and four across the socket link.
# Not recorded from a machine: PCI ids from pciutils' pci.ids (10de:2330
# GH100 [H100 SXM5 80GB], 8086:1593 Ethernet Controller E810-C for SFP,
# 1000:c030 PEX890xx PCIe Gen 5 Switch, 8086:2030 Sky Lake-E PCI Express
# Root Port A), sysfs layout as Documentation/ABI/testing/sysfs-bus-pci.
set -eu
D=${1:?usage: make_two_rail.sh DEST}
rm -rf "$D"
mkdir -p "$D"
. "$(dirname "$0")/tree.sh"

two_socket_host two-rail
rdma() {  # path-of-NIC ibdev netdev
  local nic=sys/devices/$1
  w $nic/net/$3/mtu 9000; w $nic/net/$3/speed 100000
  w $nic/net/$3/operstate up; w $nic/net/$3/type 1
  l sys/class/net/$3 ../../devices/$1/net/$3
  w $nic/infiniband/$2/node_type "1: CA"
  w $nic/infiniband/$2/fw_ver 1.71
  w $nic/infiniband/$2/ports/1/state "4: ACTIVE"
  w $nic/infiniband/$2/ports/1/phys_state "5: LinkUp"
  w $nic/infiniband/$2/ports/1/rate "100 Gb/sec (4X EDR)"
  w $nic/infiniband/$2/ports/1/link_layer Ethernet
  l sys/class/infiniband/$2 ../../devices/$1/infiniband/$2
}
# switch NUMA ROOT PORT BUS: root port ROOT:PORT.0, switch upstream BUS,
# downstream BUS+1:00-02, endpoints on BUS+2..BUS+4 (GPU, GPU, NIC).
gpu=0; rail=0
switch() {
  local numa=$1 root=$2 port=$3 bus=$4 dom=0000 rp up dn
  rp=pci$dom:$root/$dom:$root:$port.0
  pci $rp 0x060400 0x8086 0x2030 "$numa" pcieport
  up=$rp/$dom:$(printf %02x $bus):00.0
  pci $up 0x060400 0x1000 0xc030 "$numa" pcieport
  for k in 0 1 2; do
    dn=$up/$dom:$(printf %02x $((bus + 1))):0$k.0
    pci $dn 0x060400 0x1000 0xc030 "$numa" pcieport
    local ep=$dn/$dom:$(printf %02x $((bus + 2 + k))):00.0
    if [ $k -lt 2 ]; then
      pci $ep 0x030200 0x10de 0x2330 "$numa" nvidia; gpu=$((gpu + 1))
    else
      pci $ep 0x020000 0x8086 0x1593 "$numa" ice
      rdma "$ep" irdma$rail ens${rail}f0; rail=$((rail + 1))
    fi
  done
}
switch 0 00 01 0x01
switch 0 00 02 0x06
switch 1 80 01 0x81
switch 1 80 02 0x86
echo "Constructed by tests/host/make_two_rail.sh (not recorded from a machine):
its header says what each value is and where its name comes from." > "$D/README"
