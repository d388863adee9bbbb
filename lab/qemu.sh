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
    set -- "$@" -netdev user,id=u1 -device virtio-net-pci,netdev=u1
  fi
  LAB_QEMU=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$mem"
    -smp "$smp" -display none -monitor none -serial stdio -no-reboot
    -kernel "$LAB_VMLINUZ" -initrd "$LAB_IMG" "${fs[@]}" "$@"
    -append "console=ttyS0 quiet panic=-1 strata.role=$role strata.net=$net \
strata.ip=$ip strata.peer=$peer strata.src=$LAB_SRC $bld strata.out=$out \
strata.script=$script strata.token=$token $user")
}
