# tree.sh - what the constructed host trees share (sourced by
# make_two_socket.sh and make_two_rail.sh; D is the tree's folder):
# w FILE TEXT and l LINK TARGET write into $D, pci adds a PCI function
# under sys/devices with its sys/bus/pci/devices link, and two_socket_host
# NAME writes an 8-CPU host on two NUMA nodes (CPUs 0-3 and 4-7).
w() { mkdir -p "$(dirname "$D/$1")"; printf '%s\n' "$2" > "$D/$1"; }
l() { mkdir -p "$(dirname "$D/$1")"; ln -s "$2" "$D/$1"; }

pci() {  # path class vendor device numa [driver]
  local p=sys/devices/$1
  w $p/class "$2"; w $p/vendor "$3"; w $p/device "$4"; w $p/numa_node "$5"
  w $p/current_link_speed "32.0 GT/s PCIe"; w $p/current_link_width 16
  w $p/max_link_speed "32.0 GT/s PCIe"; w $p/max_link_width 16
  if [ -n "${6:-}" ]; then l $p/driver "../../../../bus/pci/drivers/$6"; fi
  l "sys/bus/pci/devices/$(basename "$1")" "../../../devices/$1"
}

two_socket_host() {  # hostname
  w proc/sys/kernel/hostname "$1"
  w proc/sys/kernel/osrelease 6.12.0-constructed
  w proc/sys/kernel/ostype Linux
  w proc/loadavg "0.50 0.40 0.30 1/500 1234"
  w proc/meminfo "MemTotal:        2097152 kB"
  w etc/os-release "ID=\"rhel\"
VERSION_ID=\"10.2\"
PRETTY_NAME=\"Constructed $1 node\""
  for c in 0 1 2 3 4 5 6 7; do
    w sys/devices/system/cpu/cpu$c/topology/physical_package_id $((c / 4))
    w sys/devices/system/cpu/cpu$c/topology/core_id $((c % 4))
  done
  w proc/cpuinfo "model name	: Constructed CPU @ 2.0GHz"
  local C=sys/devices/system/cpu N=sys/devices/system/node
  w $C/online 0-7; w $C/present 0-7; w $C/possible 0-7; w $C/offline ""
  w $N/online 0-1
  w $N/node0/cpulist 0-3
  w $N/node0/meminfo "Node 0 MemTotal:        1048576 kB"
  w $N/node0/distance "10 21"
  w $N/node1/cpulist 4-7
  w $N/node1/meminfo "Node 1 MemTotal:        1048576 kB"
  w $N/node1/distance "21 10"
}
