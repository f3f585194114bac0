"""The name of the GPU the benchmarks run on, for their JSON lines."""
import subprocess


def device_name():
    """The first GPU's name from nvidia-smi, or "unknown GPU"."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown GPU"
