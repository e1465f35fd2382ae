"""Google Benchmark binaries: run one benchmark, read its JSON, return its counters."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from grader import runner


class BenchError(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def run_benchmark(binary: Path, name: str, timeout_s: float, env: dict | None = None) -> dict:
    """Returns the benchmark entry (name, real_time, counters...) for `name`.

    Raises BenchError('timeout'|'failed', message) when it did not give a valid measurement:
    a crash, a hang, a wrong result reported by the benchmark itself, or no such benchmark."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        proc = runner.run([str(binary), f"--benchmark_filter=^{re.escape(name)}(/|$)",
                           f"--benchmark_out={out}", "--benchmark_out_format=json"],
                          timeout_s, env=env)
        if proc.timed_out:
            raise BenchError("timeout", f"the benchmark did not finish within {timeout_s:g} s and "
                                        f"was killed (a very slow or hanging kernel)")
        data = None
        if out.is_file():
            try:
                data = json.loads(out.read_text())
            except json.JSONDecodeError:
                data = None
    if data is None:
        why = f"crashed ({proc.signal_name})" if proc.signal_name else f"exit code {proc.returncode}"
        raise BenchError("failed", f"the benchmark gave no result ({why}):\n{proc.output[-1500:]}")
    for entry in data.get("benchmarks", []):
        entry_name = entry.get("run_name", entry.get("name", ""))
        if entry_name == name or entry_name.startswith(name + "/"):
            if entry.get("error_occurred"):
                raise BenchError("failed", entry.get("error_message", "the benchmark reported an error"))
            return entry
    raise BenchError("failed", f"no benchmark named '{name}' in the output "
                               f"(exit code {proc.returncode}):\n{proc.output[-1000:]}")
