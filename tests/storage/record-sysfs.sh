#!/bin/bash
# record-sysfs.sh - record the sysfs/procfs trees the storage layout check
# reads, from a real qemu guest (Debian's kernel, TCG) with 8 emulated NVMe
# drives (qemu -device nvme) on two emulated NUMA nodes (pxb expander
# bridges with numa_node=0/1, one virtio NIC on each), assembled by the real
# mdadm and mkfs.xfs:
#   raid0-8       one RAID0 of all 8 + XFS (noatime) on /scratch
#   numa-4p4      two NUMA-local RAID0 of 4 (md0 node 0, md1 node 1) + XFS
#   crossed-4p4   4+4 with one member of each array on the far node
#   uniform-8     (second boot) all 8 drives on node 0, one RAID0 of 8
# The trees land in fixtures/storage/<layout>/ with a SOURCE file saying
# how and when.  Reuses the lab's guest (lab/mkinitramfs, lab/guest-init); only the qemu
# command line is this script's own, because the devices differ.
#
# usage: tests/storage/record-sysfs.sh [--build DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$src/build
[ "${1:-}" = --build ] && build=$(readlink -f "$2")
for b in mdadm mkfs.xfs; do
  command -v $b >/dev/null || { echo "record-sysfs: no $b (mdadm, xfsprogs)" >&2; exit 3; }
done
vmlinuz=$(ls /boot/vmlinuz-* | sort -V | tail -1)
kver=${vmlinuz#/boot/vmlinuz-}
base=$("$src/lab/mkinitramfs" --strata "$build/strata")
work=$(mktemp -d "$build/storage-rec.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The extra modules and tools, appended as a second cpio archive (the
# kernel unpacks concatenated archives; modules are insmod'ed by path).
extra=$work/extra
mkdir -p "$extra/usr/sbin"
mods=$(for m in nvme raid0 xfs; do modprobe -S "$kver" --show-depends $m; done |
       awk '$1 == "insmod" {print $2}' | awk '!s[$0]++')
for m in $mods; do mkdir -p "$extra$(dirname "$m")"; cp "$m" "$extra$m"; done
echo "$mods" > "$extra/storage-modules"
bins="/usr/sbin/mdadm /usr/sbin/mkfs.xfs"
for b in $bins; do cp "$b" "$extra$b"; done
for l in $(for b in $bins; do ldd "$b"; done |
           awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u); do
  mkdir -p "$extra$(dirname "$l")"; cp -L "$l" "$extra$l"
done
(cd "$extra" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/extra.gz"
cat "$base" "$work/extra.gz" > "$work/initrd"
for i in 0 1; do
  truncate -s 320M "$work/xfs$i.img"
  mkfs.xfs -q -f "$work/xfs$i.img"
done

# The guest side: load modules, build each layout, record it.
cat > "$work/guest.sh" <<'EOF'
for m in $(cat /storage-modules); do insmod "$m" 2>/dev/null; done
sleep 1
R=""
rf() { [ -f "$1" ] || return 0; mkdir -p "$R$(dirname "$1")"
       cat "$1" > "$R$1" 2>/dev/null || rm -f "$R$1"; }
rl() { [ -L "$1" ] || return 0; mkdir -p "$R$(dirname "$1")"
       ln -sfn "$(readlink "$1")" "$R$1"; }
rdir() {  # a device directory: its plain attribute files and its links
  local d=$1; shift
  for f in "$@"; do rf "$d/$f"; done
  for l in "$d"/*; do [ -L "$l" ] && rl "$l"; done
}
record() {
  R=$STRATA_RXE_OUT/$1
  rm -rf "$R"; mkdir -p "$R/proc/self"
  for n in /sys/devices/system/node/node*; do rf "$n/cpulist"; done
  for d in /sys/bus/pci/devices/*; do
    rl "$d"; rdir "$(readlink -f "$d")" class vendor device numa_node \
      local_cpulist
  done
  for c in /sys/class/nvme/* /sys/class/nvme-subsystem/*; do
    [ -e "$c" ] || continue
    rl "$c"; r=$(readlink -f "$c")
    rdir "$r" serial model firmware_rev address transport numa_node \
      subsysnqn cntlid
    for ns in "$r"/nvme*n*; do
      [ -d "$ns" ] && rdir "$ns" wwid nsid size dev
    done
  done
  for b in /sys/block/*; do
    case ${b##*/} in loop*|ram*|zram*) continue ;; esac
    rl "$b"; r=$(readlink -f "$b")
    rdir "$r" dev size wwid queue/logical_block_size queue/rotational
    if [ -d "$r/md" ]; then
      for f in level chunk_size raid_disks array_state metadata_version; do
        rf "$r/md/$f"
      done
    fi
    for s in "$r"/slaves/*; do rl "$s"; done
    for h in "$r"/holders/*; do rl "$h"; done
  done
  for n in /sys/class/net/*; do
    rl "$n"; r=$(readlink -f "$n"); rl "$r/device"
  done
  cat /proc/self/mountinfo > "$R/proc/self/mountinfo"
  cat /proc/diskstats > "$R/proc/diskstats"
  cat /proc/mdstat > "$R/proc/mdstat"
  echo "recorded $1"
}
stopall() {
  umount /scratch /scratch0 /scratch1 2>/dev/null
  for m in /dev/md*; do [ -b "$m" ] && mdadm --stop "$m" >/dev/null 2>&1; done
  for d in /dev/nvme*n1; do mdadm --zero-superblock "$d" 2>/dev/null; done
}
mkarr() {  # md mount members...
  local md=$1 mnt=$2; shift 2
  yes | mdadm --create "$md" --run --level=0 --chunk=512 \
    --raid-devices=$# "$@" >/dev/null 2>&1 || { echo "mdadm $md failed"; exit 1; }
  # mkfs.xfs inside the guest hung under multi-threaded TCG (lost NVMe
  # completions, see thread=single below; not retried since): the
  # filesystem is made on the host with the same mkfs.xfs into a 320 MiB
  # image and written onto the array here; mount, fstype and options are
  # the guest's.
  img=$XFS_IMG; [ "$md" = /dev/md1 ] && img=$XFS_IMG1  # two UUIDs
  dd if="$img" of="$md" bs=1M oflag=direct 2>/dev/null || exit 1
  mkdir -p "$mnt"
  mount -t xfs -o noatime "$md" "$mnt" & mp=$!
  i=0; while kill -0 $mp 2>/dev/null && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done
  if kill -0 $mp 2>/dev/null; then
    echo "mount $md hangs: blocked tasks follow"
    timeout 10 dd if=/dev/md0 of=/dev/null bs=4k count=1 iflag=direct 2>&1 | tail -1
    echo w > /proc/sysrq-trigger; sleep 2; dmesg | tail -60; exit 1
  fi
  wait $mp || exit 1
}
# drives by serial, never by name: the kernel numbers them as it probes
dev_of() {
  for b in /sys/block/nvme*n1; do
    [ "$(tr -d ' ' < "$b/device/serial")" = "$1" ] && echo "/dev/${b##*/}"
  done
}
echo "probe: $(timeout 60 dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=4 oflag=direct 2>&1 | tail -1)"
dmesg | grep -i -E "nvme|timeout" | tail -5
for s in 1 2 3 4 5 6 7 8; do echo "S$s -> $(dev_of STRATA-NVME-$s)"; done
case $STRATA_LAYOUTS in
  split)
    all=""; for s in 1 2 3 4 5 6 7 8; do all="$all $(dev_of STRATA-NVME-$s)"; done
    mkarr /dev/md0 /scratch $all; record raid0-8; stopall
    n0=""; n1=""
    for s in 1 2 3 4; do n0="$n0 $(dev_of STRATA-NVME-$s)"; done
    for s in 5 6 7 8; do n1="$n1 $(dev_of STRATA-NVME-$s)"; done
    mkarr /dev/md0 /scratch0 $n0; mkarr /dev/md1 /scratch1 $n1
    record numa-4p4; stopall
    a=""; b=""
    for s in 1 2 3 5; do a="$a $(dev_of STRATA-NVME-$s)"; done
    for s in 4 6 7 8; do b="$b $(dev_of STRATA-NVME-$s)"; done
    mkarr /dev/md0 /scratch0 $a; mkarr /dev/md1 /scratch1 $b
    record crossed-4p4; stopall ;;
  uniform)
    all=""; for s in 1 2 3 4 5 6 7 8; do all="$all $(dev_of STRATA-NVME-$s)"; done
    mkarr /dev/md0 /scratch $all; record uniform-8; stopall ;;
esac
EOF

boot() {  # layouts qemu-args...
  local lay=$1; shift
  local o="$work/out-$lay"; mkdir -p "$o"
  sed "1i export STRATA_LAYOUTS=$lay XFS_IMG=$work/xfs0.img XFS_IMG1=$work/xfs1.img" "$work/guest.sh" > "$o/script.sh"
  # thread=single: with multi-threaded TCG, I/O completions on the
  # emulated NVMe behind pxb were lost (a 320 MiB dd never returned)
  timeout 600 qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp 4 -m 1024 \
    -object memory-backend-ram,id=m0,size=512M \
    -object memory-backend-ram,id=m1,size=512M \
    -numa node,nodeid=0,cpus=0-1,memdev=m0 \
    -numa node,nodeid=1,cpus=2-3,memdev=m1 \
    -display none -monitor none -serial stdio -no-reboot -nic none \
    -kernel "$vmlinuz" -initrd "$work/initrd" \
    -virtfs "local,path=$src,mount_tag=src,security_model=none" \
    -virtfs "local,path=$o,mount_tag=out,security_model=none" \
    -device pxb,id=px0,bus_nr=16,numa_node=0,bus=pci.0 \
    -device pci-bridge,id=br0,bus=px0,chassis_nr=1 \
    -device pxb,id=px1,bus_nr=64,numa_node=1,bus=pci.0 \
    -device pci-bridge,id=br1,bus=px1,chassis_nr=2 \
    "$@" \
    -append "console=ttyS0 quiet panic=-1 strata.role=single strata.net=dummy \
strata.ip=10.77.0.1 strata.src=$src strata.out=$o strata.script=$o/script.sh" \
    </dev/null | sed -u "s/^/[$lay] /"
  [ "$(cat "$o/rc" 2>/dev/null)" = 0 ] || { echo "record-sysfs: $lay failed" >&2; exit 1; }
}
drives() {  # bus-of-drive-1..4 bus-of-drive-5..8
  local a=()
  for s in 1 2 3 4 5 6 7 8; do
    truncate -s 256M "$work/d$s.img"
    local bus=$1; [ $s -gt 4 ] && bus=$2
    a+=(-drive "file=$work/d$s.img,if=none,id=d$s,format=raw"
        -device "nvme,drive=d$s,serial=STRATA-NVME-$s,bus=$bus,addr=$s")
  done
  echo "${a[@]}"
}
nics="-netdev hubport,id=e0,hubid=0 -device virtio-net-pci,netdev=e0,bus=br0,addr=16 \
-netdev hubport,id=e1,hubid=0 -device virtio-net-pci,netdev=e1,bus=br1,addr=16"
boot split $(drives br0 br1) $nics
boot uniform $(drives br0 br0) $nics
date=$(date -u +%Y-%m-%dT%H:%MZ)
for o in "$work"/out-*; do
  for t in "$o"/*/; do
    [ -d "$t/proc" ] || continue
    name=$(basename "$t")
    rm -rf "$src/fixtures/storage/$name"
    cp -a "$t" "$src/fixtures/storage/$name"
    cat > "$src/fixtures/storage/$name/SOURCE" <<EOT
Recorded by tests/storage/record-sysfs.sh on $date from a real qemu guest
($(qemu-system-x86_64 --version | head -1), TCG) running Debian's kernel
$kver: 8 emulated NVMe drives (qemu -device nvme, serials STRATA-NVME-1..8,
256 MiB each) behind pci-bridges on pxb expander bridges on emulated NUMA nodes 0 and 1,
one virtio NIC per node, arrays made by mdadm $(mdadm --version 2>&1 | awk '{print $3}')
(RAID0, 512K chunk); XFS made by mkfs.xfs ($(mkfs.xfs -V | awk '{print $3}')) on the host into
a 320 MiB image (one per array, distinct UUIDs) written onto each array in the guest (mkfs.xfs hung in the
guest under multi-threaded TCG; not retried under the single-threaded
TCG this recording used), mounted noatime in the guest.
Layout: $name.  Files are copies of the guest's own sysfs/procfs files;
symlinks keep the kernel's relative targets.  No GPU in the guest.
EOT
  done
done
echo "record-sysfs: trees in fixtures/storage/"
