#!/bin/bash
# record_host.sh DEST - copy the /proc, /sys and /etc files that
# sys.inventory(), sys.locality() and the counters parsers read into DEST
# (same relative layout, sysfs symlinks kept), so that a real machine's view
# becomes a test fixture: ./build/strata lua with sys.inventory{root=DEST}.
# Hostname is replaced, MAC addresses and serial numbers are not copied.
set -u
D=${1:?usage: record_host.sh DEST}
mkdir -p "$D"

cpf() {  # copy readable regular files
  local f
  for f in "$@"; do
    [ -f "$f" ] && [ -r "$f" ] || continue
    mkdir -p "$D$(dirname "$f")"
    cat "$f" > "$D$f" 2>/dev/null || rm -f "$D$f"
  done
}
lnk() {  # recreate symlinks with their (relative) targets
  local l
  for l in "$@"; do
    [ -L "$l" ] || continue
    mkdir -p "$D$(dirname "$l")"
    ln -sfn "$(readlink "$l")" "$D$l"
  done
}
pci_chain() {  # a PCI function and every bridge above it
  local p=$1
  while [[ $p == /sys/devices/pci* && $p != /sys/devices ]]; do
    cpf "$p"/{vendor,device,class,subsystem_vendor,subsystem_device} \
        "$p"/{numa_node,local_cpulist,revision} \
        "$p"/{current_link_speed,current_link_width} \
        "$p"/{max_link_speed,max_link_width}
    lnk "$p/driver"
    p=$(dirname "$p")
  done
}

cpf /proc/{cpuinfo,meminfo,stat,interrupts,softirqs,loadavg,uptime} \
    /proc/net/{dev,snmp} /proc/sys/kernel/{osrelease,ostype} /etc/os-release
mkdir -p "$D/proc/sys/kernel"
echo recorded-host > "$D/proc/sys/kernel/hostname"
C=/sys/devices/system/cpu
cpf $C/{online,offline,present,possible} \
    $C/cpu[0-9]*/online $C/cpu[0-9]*/topology/{physical_package_id,core_id,die_id}
N=/sys/devices/system/node
cpf $N/{online,possible} $N/node[0-9]*/{cpulist,meminfo,distance}

for dev in /sys/bus/pci/devices/*; do
  lnk "$dev"
  pci_chain "$(readlink -f "$dev")"
done
for n in /sys/class/net/*; do
  lnk "$n"
  r=$(readlink -f "$n")
  cpf "$r"/{mtu,speed,operstate,type,ifindex,duplex} "$r"/statistics/*
  lnk "$r/device"
done
for b in /sys/block/nvme*; do
  [ -e "$b" ] || continue
  lnk "$b"
  r=$(readlink -f "$b")
  cpf "$r/size" "$r/queue/rotational"
  lnk "$r/device"
  c=$(readlink -f "$r/device")
  cpf "$c"/{model,firmware_rev,numa_node,transport}
  lnk "$c/device"
done
for i in /sys/class/infiniband/*; do
  [ -e "$i" ] || continue
  lnk "$i"
  r=$(readlink -f "$i")
  cpf "$r"/{node_type,fw_ver,hca_type,board_id} \
      "$r"/ports/*/{state,phys_state,rate,link_layer} \
      "$r"/ports/*/counters/* "$r"/ports/*/hw_counters/*
  lnk "$r/device"
done
exit 0
