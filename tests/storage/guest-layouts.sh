# guest-layouts.sh - runs INSIDE a qemu guest (tests/rxe/run-in-guest
# --nvme N[:NODES], busybox sh; tests/storage/guest_layouts.py drives it):
# for each layout in $STRATA_LAYOUTS ("layout:specs ...", set by the
# driver on the script's first line), lab/scratch.sh
# assembles the guest's emulated NVMe into md RAID0 + XFS (the real mdadm
# and mkfs.xfs), strata runs the storage specs on it with a site file
# naming the arrays, the arrays are taken apart for the next layout.
# Results: <out>/single/<layout>.xlsx/.jsonl, <layout>.out (the run's
# output), <layout>.scratch (the arrays).
S=$STRATA_RXE_BUILD/strata
O=$STRATA_RXE_OUT
L=$STRATA_RXE_SRC/lab/scratch.sh
for job in $STRATA_LAYOUTS; do
  lay=${job%%:*} specs=${job#*:}
  sh "$L" "$lay" "$O" || exit 1
  cp "$O/scratch" "$O/$lay.scratch"
  {
    echo "storage:"
    echo "  scratch:"
    while read -r p n; do echo "    - { path: $p, numa_node: $n }"; done < "$O/scratch"
    echo "  size: 32M"
    echo "  runtime: 2"
    echo "  seq_read_mibps: 30"
    echo "  seq_write_mibps: 30"
    echo "  randread_iops: 400"
  } > "/tmp/$lay.yaml"
  set --
  for s in $(echo "$specs" | tr , ' '); do set -- "$@" "$STRATA_RXE_SRC/specs/storage/$s"; done
  "$S" run "$@" --site "/tmp/$lay.yaml" -o "$O/$lay.xlsx" > "$O/$lay.out" 2>&1
  echo "$lay: strata run exited $?"
  sh "$L" stop "$O" || exit 1
done
exit 0
