# Sourced from the repository root at the start of a GPU call script (bench/results/*/runN.sh,
# bench/pending/*/run.sh): sets O=$OUT/o for the logs, writes the GPU's name, clocks and power
# limit to $O/gpu.txt, installs the carried wheel into the Python environment
# (scripts/gpu-python-env.sh) when the call carries one, and puts build/ (the carried
# libfp8dot_c.so) first on LD_LIBRARY_PATH.
O=$OUT/o
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
  --format=csv > "$O/gpu.txt"
if [[ -d build/wheel-cp312 ]]; then
  OUT=$O source scripts/gpu-python-env.sh > /dev/null
fi
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
