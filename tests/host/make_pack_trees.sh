#!/bin/bash
# make_pack_trees.sh DEST - write the small /sys trees the hardware-pack
# tests choose packs from (fixtures/host/packs): an Intel E810 RDMA NIC, a
# ConnectX-7, a ConnectX-8 and a B300 GPU, each one PCI function with the files
# sys.inventory reads.  No whole recorded tree of such machines was found
# in public sources; every value here is one a public source shows for
# that device, named in DEST/<tree>/README (and docs/provenance.md,
# "Hardware packs").  Run it again to regenerate; the trees are committed.
set -eu
D=${1:?usage: make_pack_trees.sh DEST}
rm -rf "$D/e810" "$D/connectx7" "$D/connectx8" "$D/b300"
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" > "$1"; }
l() { mkdir -p "$(dirname "$1")"; ln -s "$2" "$1"; }

# tree bdf class vendor device speed width driver
pci() {
  local t=$D/$1 p=sys/devices/pci0000:00/0000:00:02.0/$2
  w "$t/$p/class" "$3"; w "$t/$p/vendor" "$4"; w "$t/$p/device" "$5"
  w "$t/$p/numa_node" 0
  w "$t/$p/current_link_speed" "$6"; w "$t/$p/current_link_width" "$7"
  w "$t/$p/max_link_speed" "$6"; w "$t/$p/max_link_width" "$7"
  l "$t/$p/driver" "../../../../bus/pci/drivers/$8"
  l "$t/sys/bus/pci/devices/$2" "../../../devices/pci0000:00/0000:00:02.0/$2"
  w "$t/proc/sys/kernel/hostname" "$1"
}
# tree bdf rdma-device rate [link-layer]
rdma() {
  local t=$D/$1 p=sys/devices/pci0000:00/0000:00:02.0/$2/infiniband/$3
  w "$t/$p/node_type" "1: CA"
  w "$t/$p/ports/1/state" "4: ACTIVE"
  w "$t/$p/ports/1/rate" "$4"
  w "$t/$p/ports/1/link_layer" "${5:-Ethernet}"
  l "$t/$p/device" ../../../$2
  l "$t/sys/class/infiniband/$3" "../../devices/pci0000:00/0000:00:02.0/$2/infiniband/$3"
}

pci e810 0000:3b:00.0 0x020000 0x8086 0x1592 "16.0 GT/s PCIe" 16 ice
rdma e810 0000:3b:00.0 irdma0 "100 Gb/sec (4X EDR)"
cat > "$D/e810/README" <<'T'
An Intel E810-C QSFP with its irdma port (tests/host/make_pack_trees.sh;
assembled from public sources, not recorded from one machine):
- device 0x1592, vendor 0x8086, driver ice behind /sys/class/infiniband/irdma0:
  ofiwg/libfabric prov/psm3/psm3/psm2.h (PSM2_INFO_QUERY_UNIT_DEVICE_ID:
  "the device id: "0x1592" cat /sys/class/infiniband/irdma0/device/device",
  vendor "0x8086", driver "ice"); Linux ice_devids.h ICE_DEV_ID_E810C_QSFP.
- class 0x020000: PCI class 02 (network) subclass 00 (Ethernet), pci.ids.
- "16.0 GT/s PCIe" x16: the E810-CQDA2 is "a PCIe Gen4 x16 card"
  (ServeTheHome E810-CQDA2 review; a review, not Intel's datasheet);
  the text is Linux pci_speed_string (drivers/pci/probe.c).
- rate "100 Gb/sec (4X EDR)": irdma maps a link above 40 Gb/s to
  IB_WIDTH_4X / IB_SPEED_EDR (drivers/infiniband/hw/irdma/verbs.c,
  irdma_get_eth_speed_and_width), printed by the RDMA core's rate_show.
T

pci connectx7 0000:17:00.0 0x020700 0x15b3 0x1021 "32.0 GT/s PCIe" 16 mlx5_core
rdma connectx7 0000:17:00.0 mlx5_0 "400 Gb/sec (4X NDR)"
cat > "$D/connectx7/README" <<'T'
A ConnectX-7 port (tests/host/make_pack_trees.sh; assembled from public
sources, not recorded from one machine):
- vendor 0x15b3, device 0x1021: Linux mlx5_core_pci_table
  (drivers/net/ethernet/mellanox/mlx5/core/main.c: /* ConnectX-7 */).
- class 0x020700: PCI class 02 subclass 07 (InfiniBand), pci.ids.
- "32.0 GT/s PCIe" x16: "PCIe Gen 5.0 through x16 edge connector"
  (NVIDIA ConnectX-7 Cards for OCP Spec 3.0 User Manual, Supported
  Interfaces); text as Linux pci_speed_string prints it.
- rate "400 Gb/sec (4X NDR)": ConnectX-7 at NDR 400 Gb/s ("8x ConnectX-7
  IB NDR 400Gb/s", MLCommons inference_results_v6.0 Nebius B200 system
  description), as the RDMA core's rate_show prints 4X NDR
  (drivers/infiniband/core/sysfs.c).
T

pci connectx8 0000:18:00.0 0x020700 0x15b3 0x1023 "64.0 GT/s PCIe" 16 mlx5_core
rdma connectx8 0000:18:00.0 mlx5_0 "800 Gb/sec (4X XDR)" InfiniBand
cat > "$D/connectx8/README" <<'T'
A ConnectX-8 SuperNIC port (tests/host/make_pack_trees.sh; assembled from
public sources, not recorded from one machine):
- vendor 0x15b3, device 0x1023: Linux mlx5_core_pci_table
  (drivers/net/ethernet/mellanox/mlx5/core/main.c: /* ConnectX-8 */).
- class 0x020700: PCI class 02 subclass 07 (InfiniBand), pci.ids.
- "64.0 GT/s PCIe" x16: "supports PCI Express Gen6 (5.0 and 4.0
  compatible) through an x16 edge connector" (NVIDIA ConnectX-8 SuperNIC
  User Manual, Supported Interfaces); text as Linux pci_speed_string
  prints it.
- rate "800 Gb/sec (4X XDR)", link layer InfiniBand: "supports 800Gb/s or
  XDR IB or 2 x 400GbE link speeds" (ConnectX-8 SuperNIC firmware release
  notes v40.44.0208); the RDMA core's rate_show prints IB_SPEED_XDR as
  " XDR", 200 Gb/s a lane, times the 4X width
  (drivers/infiniband/core/sysfs.c).
T

pci b300 0000:19:00.0 0x030200 0x10de 0x3182 "32.0 GT/s PCIe" 16 nvidia
cat > "$D/b300/README" <<'T'
One B300 GPU (tests/host/make_pack_trees.sh; assembled from public
sources, not recorded from one machine):
- vendor 0x10de, device 0x3182: pciutils/pciids pci.ids
  ("3182  GB110 [B300 SXM6 AC]"); NVML names it "NVIDIA B300 SXM6 AC".
- class 0x030200 (3D controller), pci.ids.
- "32.0 GT/s PCIe" x16: "accelerator_host_interconnect": "PCIe Gen5 x16"
  in NVIDIA's MLPerf Inference v6.1 system description
  closed/NVIDIA/systems/B300-SXM-270GBx8_TRT.json (NVIDIA DGX B300).
T
