# bench/nccl/setup.sh: sourced by run.sh and diag.sh with BUNDLE, SRC, W
# and R set.  Records the machine in $R/machine.txt, unpacks the strata
# bundle (S: its folder), and builds NVIDIA/nccl-tests from SRC against
# the host's NCCL, header and library side by side (H, L; B: the
# binaries), as tests/gpu/record-captures.sh does.
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -r
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
  nvcc --version | tail -2
  nproc
  cat /proc/loadavg
} > "$R/machine.txt" 2>&1

tar -C "$W" -xzf "$BUNDLE"
S=$(ls -d "$W"/strata-*/ | head -1)
ST=$S/bin/strata

H=$(dirname "$(find / -xdev -name nccl.h -path '*include*' 2>/dev/null | head -1)")
L=$(dirname "$(find / -xdev -name 'libnccl.so*' 2>/dev/null | head -1)")
echo "nccl.h in $H, libnccl in $L" >> "$R/machine.txt"
ls -la "$L"/libnccl* >> "$R/machine.txt" 2>&1
mkdir -p "$W/nccl/lib"
ln -s "$H" "$W/nccl/include"
ln -s "$(ls "$L"/libnccl.so* | head -1)" "$W/nccl/lib/libnccl.so"
cp -r "$SRC" "$W/nt"
T0=$(date +%s)
make -C "$W/nt/src" -j"$(nproc)" MPI=0 NCCL_HOME="$W/nccl" \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$W/ntb" \
  > "$R/nccl-tests-build.txt" 2>&1
echo "nccl-tests build: rc=$? $(( $(date +%s) - T0 )) s" >> "$R/machine.txt"
export LD_LIBRARY_PATH="$L:${LD_LIBRARY_PATH:-}"
B=$W/ntb
