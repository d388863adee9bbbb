# lab/qemu.sh - the Soft-RoCE guest's qemu command line, one definition
# for the lab (lab/lab.sh) and the rxe tests (tests/rxe/run-in-guest).
# Sourced by bash; defines functions only.
#
#   lab_image SRC BUILD [ARGS...]
#                           builds/reuses the initramfs (lab/mkinitramfs,
#                           ARGS passed on, e.g. --slurm),
#                           sets LAB_IMG and LAB_VMLINUZ; returns
#                           mkinitramfs's status (3: a package is missing)
#   lab_qemu ROLE NET IP PEER OUT SCRIPT TOKEN MEM SMP [QEMU ARGS...]
#                           sets the array LAB_QEMU to the qemu command:
#                           TCG, Debian's kernel, guest-init as /init with
#                           strata.* parameters, the source tree (and the
#                           build tree when outside it) and OUT over 9p at
#                           their host paths.  The caller runs it (in the
#                           foreground, backgrounded or detached).
#   Globals read: LAB_SRC, LAB_BUILD (absolute), LAB_IMG, LAB_VMLINUZ;
#   LAB_USER=1 adds a user-network NIC (eth1, strata.user=1).

lab_image() {
  LAB_SRC=$1 LAB_BUILD=$2
  shift 2
  LAB_IMG=$("$LAB_SRC/lab/mkinitramfs" --strata "$LAB_BUILD/strata" "$@") || return $?
  LAB_VMLINUZ=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
  [ -n "$LAB_VMLINUZ" ] || { echo "no /boot/vmlinuz-*" >&2; return 3; }
}

lab_qemu() {
  local role=$1 net=$2 ip=$3 peer=$4 out=$5 script=$6 token=$7 mem=$8 smp=$9
  shift 9
  local fs=() bld="" user=""
  fs+=(-virtfs "local,path=$LAB_SRC,mount_tag=src,security_model=none")
  case $LAB_BUILD/ in
    "$LAB_SRC"/*) ;;
    *) fs+=(-virtfs "local,path=$LAB_BUILD,mount_tag=bld,security_model=none")
       bld="strata.bld=$LAB_BUILD" ;;
  esac
  fs+=(-virtfs "local,path=$out,mount_tag=out,security_model=none")
  if [ "${LAB_USER:-0}" = 1 ]; then
    user="strata.user=1"
    # bus=pci.0: a device without a bus goes on the newest PCI bus, which
    # is a pxb expander when lab_nvme args came first (pxb takes bridges only)
    set -- "$@" -netdev user,id=u1 -device virtio-net-pci,netdev=u1,bus=pci.0
  fi
  # -vga none: a headless guest; qemu's default VGA would be a display-class
  # PCI device, which H2 and S1 rightly count as a GPU (numa_node -1)
  LAB_QEMU=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$mem"
    -smp "$smp" -display none -vga none -monitor none -serial stdio -no-reboot
    -kernel "$LAB_VMLINUZ" -initrd "$LAB_IMG" "${fs[@]}" "$@"
    -append "console=ttyS0 quiet panic=-1 strata.role=$role strata.net=$net \
strata.ip=$ip strata.peer=$peer strata.src=$LAB_SRC $bld strata.out=$out \
strata.script=$script strata.token=$token $user ${STRATA_RXE_APPEND:-}")
}

# lab_nvme DIR N MB MEM SMP [NODES]
#                           sets the array LAB_NVME to the qemu arguments of
#                           a scratch tier: NODES (default 2) emulated NUMA
#                           nodes (-numa node, the guest's MEM MiB and SMP
#                           vCPUs split evenly), one PCI expander bridge per
#                           node (pxb with numa_node=, so each NVMe's PCI
#                           function has that numa_node in sysfs) with a
#                           pci-bridge under it, and N emulated NVMe drives
#                           (-device nvme) of MB MiB, the first N/NODES on
#                           node 0 and so on, serials STRATA-NVME-1..N (the
#                           layout check names drives by serial).  Drive i
#                           is the sparse file DIR/nvme-i.img (created).
#                           NODES=1: every drive on node 0, one node.
lab_nvme() {
  local dir=$1 n=$2 mb=$3 mem=$4 smp=$5 nodes=${6:-2} i node per
  LAB_NVME=()
  [ "$n" -gt 0 ] || return 0
  [ $((smp % nodes)) = 0 ] && [ $((mem % nodes)) = 0 ] || {
    echo "lab_nvme: $smp vCPUs / $mem MiB do not split over $nodes nodes" >&2
    return 2; }
  for ((node = 0; node < nodes; node++)); do
    LAB_NVME+=(-object "memory-backend-ram,id=m$node,size=$((mem / nodes))M"
      -numa "node,nodeid=$node,cpus=$((node * smp / nodes))-$(((node + 1) * smp / nodes - 1)),memdev=m$node"
      -device "pxb,id=px$node,bus_nr=$((16 + 48 * node)),numa_node=$node,bus=pci.0"
      -device "pci-bridge,id=br$node,bus=px$node,chassis_nr=$((node + 1))")
  done
  per=$(((n + nodes - 1) / nodes))
  for ((i = 1; i <= n; i++)); do
    node=$(((i - 1) / per))
    truncate -s "${mb}M" "$dir/nvme-$i.img" || return 2
    LAB_NVME+=(-drive "file=$dir/nvme-$i.img,if=none,id=nvme$i,format=raw,cache=unsafe"
      -device "nvme,drive=nvme$i,serial=STRATA-NVME-$i,bus=br$node,addr=$(((i - 1) % per + 1))")
  done
}
