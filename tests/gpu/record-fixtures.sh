#!/bin/sh
# Run on a GPU host: record what nvidia-smi and the host say, next to
# strata's own NVML inventory, into DIR (fixtures/gpu/<machine>/).
# usage: record-fixtures.sh DIR STRATA
set -u
d=$1 strata=$2
mkdir -p "$d"
nvidia-smi -L > "$d/nvidia-smi-L.txt" 2>&1
nvidia-smi topo -m > "$d/nvidia-smi-topo-m.txt" 2>&1
nvidia-smi -q > "$d/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.errors.uncorrected.volatile.total,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$d/nvidia-smi-query.csv" 2>&1
nvidia-smi nvlink -s > "$d/nvidia-smi-nvlink-s.txt" 2>&1
{
  echo "## /sys/bus/pci numa_node of GPUs, NICs, NVMe"
  for c in /sys/bus/pci/devices/*; do
    cls=$(cat "$c/class" 2>/dev/null)
    case $cls in 0x0302*|0x0300*|0x0200*|0x0207*|0x0108*)
      echo "$(basename "$c") class=$cls numa=$(cat "$c/numa_node" 2>/dev/null) driver=$(basename "$(readlink "$c/driver" 2>/dev/null)" 2>/dev/null)";;
    esac
  done
  echo "## /sys/class/net"; ls -l /sys/class/net/
  echo "## /sys/class/nvme"; ls -l /sys/class/nvme/ 2>&1
  echo "## /sys/devices/system/node"; ls /sys/devices/system/node/ 2>&1
  echo "## lscpu"; lscpu 2>&1 | head -30
  echo "## uname"; uname -a; cat /etc/os-release | head -3
} > "$d/host.txt" 2>&1
"$strata" lua "$(dirname "$0")/device_probe.lua" "$d" > "$d/strata-probe.txt" 2>&1
echo "recorded into $d"
