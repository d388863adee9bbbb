#!/bin/bash
# make_two_socket.sh DEST - write a small constructed /proc + /sys tree of
# a two-socket GPU node (fixtures/host/two-socket): 8 CPUs on 2 NUMA nodes,
# GPU0 and an E810 RDMA NIC on node 0, GPU1 and an NVMe on node 1, so that
# H2's pairing logic has something to find (GPU1->NIC and GPU0->NVMe cross).
set -eu
D=${1:?usage: make_two_socket.sh DEST}
rm -rf "$D"
mkdir -p "$D"
. "$(dirname "$0")/tree.sh"

two_socket_host two-socket
for b in pci0000:00/0000:00:01.0 pci0000:00/0000:00:02.0 \
         pci0000:80/0000:80:01.0 pci0000:80/0000:80:02.0; do
  pci $b 0x060400 0x8086 0x2030 "$([[ $b == *80:* ]] && echo 1 || echo 0)" pcieport
done
pci pci0000:00/0000:00:01.0/0000:01:00.0 0x030200 0x10de 0x2901 0 nvidia
pci pci0000:00/0000:00:02.0/0000:02:00.0 0x020000 0x8086 0x1593 0 ice
pci pci0000:80/0000:80:01.0/0000:81:00.0 0x030200 0x10de 0x2901 1 nvidia
pci pci0000:80/0000:80:02.0/0000:82:00.0 0x010802 0x144d 0xa80a 1 nvme

NIC=sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0
w $NIC/net/ens1f0/mtu 9000; w $NIC/net/ens1f0/speed 400000
w $NIC/net/ens1f0/operstate up; w $NIC/net/ens1f0/type 1
l $NIC/net/ens1f0/device ../../../0000:02:00.0
l sys/class/net/ens1f0 ../../devices/pci0000:00/0000:00:02.0/0000:02:00.0/net/ens1f0
w $NIC/infiniband/irdma0/node_type "1: CA"
w $NIC/infiniband/irdma0/fw_ver 1.71
w $NIC/infiniband/irdma0/ports/1/state "4: ACTIVE"
w $NIC/infiniband/irdma0/ports/1/rate "400 Gb/sec (4X NDR)"
w $NIC/infiniband/irdma0/ports/1/link_layer Ethernet
l $NIC/infiniband/irdma0/device ../../../0000:02:00.0
l sys/class/infiniband/irdma0 ../../devices/pci0000:00/0000:00:02.0/0000:02:00.0/infiniband/irdma0
NV=sys/devices/pci0000:80/0000:80:02.0/0000:82:00.0/nvme/nvme0
w $NV/model "Constructed NVMe"; w $NV/numa_node 1
w $NV/nvme0n1/size 7501476528
l $NV/nvme0n1/device ../../nvme0
l sys/block/nvme0n1 ../devices/pci0000:80/0000:80:02.0/0000:82:00.0/nvme/nvme0/nvme0n1
echo "Constructed by tests/host/make_two_socket.sh (not recorded from a machine)." > "$D/README"
