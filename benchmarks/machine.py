"""What a benchmark ran on, printed beside its ratios: a ratio against torch depends on the CPU (its
vendor, its vector units, which kernels numpy's OpenBLAS and torch pick for it), so every line that
gives one names the CPU."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux, else the platform's word) and its core count."""
    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {os.cpu_count()} cores"


def load_average() -> float:
    return os.getloadavg()[0]
