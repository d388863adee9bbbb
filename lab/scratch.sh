#!/bin/sh
# scratch.sh LAYOUT OUT - runs INSIDE a lab guest (busybox sh): assembles
# the guest's emulated NVMe drives (lab/qemu.sh lab_nvme) into the scratch
# tier of the second source document with the real mdadm and mkfs.xfs, and
# mounts it noatime (docs/lab.md, docs/storage.md):
#   numa-local   one RAID0 per NUMA node of that node's drives, at
#                /scratch<node> (the document's 4+4 on two sockets)
#   one-array    one RAID0 of every drive at /scratch (its 8-way)
#   stop         unmount, stop every array, wipe the members' md
#                superblocks (the drives are free for another layout)
# Drives are grouped by their PCI function's numa_node and taken in serial
# order, never by kernel name (nvme0n1 is whichever controller probed
# first).  Writes OUT/scratch: one "path numa_node" line per array
# (-1: the array spans nodes).  Exit 1 with the step on failure.
set -u
layout=$1 out=$2
say() { echo "scratch: $*"; }
# serial node dev, sorted by serial
drives() {
  for b in /sys/block/nvme*n1; do
    [ -e "$b" ] || continue
    echo "$(tr -d ' ' < "$b/device/serial") $(cat "$b/device/device/numa_node") /dev/${b##*/}"
  done | sort
}
mkarr() {  # md mountpoint members...
  md=$1 mnt=$2; shift 2
  # --run: no "continue creating?" prompt; 512 KiB chunk (mdadm's default)
  mdadm --create "$md" --run --level=0 --chunk=512 --raid-devices=$# "$@" \
    > /tmp/mdadm.log 2>&1 || { say "mdadm --create $md failed: $(tail -n 1 /tmp/mdadm.log)"; exit 1; }
  mkfs.xfs -q -f "$md" > /tmp/mkfs.log 2>&1 ||
    { say "mkfs.xfs $md failed: $(tail -n 1 /tmp/mkfs.log)"; exit 1; }
  mkdir -p "$mnt"
  mount -t xfs -o noatime "$md" "$mnt" || { say "mount $md failed"; exit 1; }
  say "$md ($*) XFS on $mnt"
}
if [ "$layout" = stop ]; then
  for m in /scratch /scratch[0-9]*; do
    grep -q " $m " /proc/mounts && { umount "$m" || { say "umount $m failed"; exit 1; }; }
  done
  for m in /dev/md[0-9]*; do [ -b "$m" ] && mdadm --stop "$m" > /dev/null 2>&1; done
  for d in $(drives | awk '{print $3}'); do mdadm --zero-superblock "$d" 2> /dev/null; done
  rm -f "$out/scratch"
  exit 0
fi
[ -n "$(drives)" ] || { say "no NVMe drive in this guest"; exit 1; }
: > "$out/scratch.tmp"
case $layout in
  numa-local)
    for node in $(drives | awk '{print $2}' | sort -u); do
      n=$node; [ "$n" -lt 0 ] && n=0
      mkarr "/dev/md$n" "/scratch$n" $(drives | awk -v n="$node" '$2 == n {print $3}')
      echo "/scratch$n $node" >> "$out/scratch.tmp"
    done ;;
  one-array)
    mkarr /dev/md0 /scratch $(drives | awk '{print $3}')
    nodes=$(drives | awk '{print $2}' | sort -u | wc -l)
    node=-1; [ "$nodes" = 1 ] && node=$(drives | awk 'NR == 1 {print $2}')
    echo "/scratch $node" >> "$out/scratch.tmp" ;;
  *) say "unknown layout '$layout' (numa-local, one-array)"; exit 1 ;;
esac
mv "$out/scratch.tmp" "$out/scratch"
