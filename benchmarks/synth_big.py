"""One large file of each type porter converts, of about the size asked for, for bigfile.py.

Deterministic (same size, same bytes) and written as a stream, so a 50 MB file costs the
generator no more memory than a small one:

- python: one CUDA module as the synthetic tree's (generate.py): CUDA blocks (device
  strings, torch.cuda under every import form, AMP, dispatch chains, NCCL, bitsandbytes and
  flash-attn uses), traps that must not change and plain code, about one edit per 17 lines;
- yaml: a training config with a sweep of runs, each with `device: cuda:N` (an edit per
  five lines), as a hyper-parameter sweep file is;
- json: a DeepSpeed config holding the same sweep, laid out as json.dump(indent=2) does;
- notebook: nbformat 4, the Python module's blocks one per code cell, each with a stream
  output and a markdown cell after it.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import _import_lines  # noqa: E402
from synth_python import CUDA_BLOCKS, FILLER_BLOCKS, HEADER, TRAP_BLOCKS  # noqa: E402

MB = 1024 * 1024


def _blocks(seed: int = 0):
    """The blocks of a CUDA module, as generate.py mixes them, numbered, without end."""
    rng = random.Random(seed)
    n = 0
    while True:
        roll = rng.random()
        pool = CUDA_BLOCKS if n == 0 or roll < 0.3 else TRAP_BLOCKS if roll < 0.4 else FILLER_BLOCKS
        block = rng.choice(pool)
        yield block, block.text.replace("@N@", str(n))
        n += 1


_ALL_IMPORTS = _import_lines([*CUDA_BLOCKS, *TRAP_BLOCKS, *FILLER_BLOCKS])


def python_file(out: TextIO, size: int) -> None:
    out.write(HEADER + '"""Synthetic module: data handling and training helpers, one large file."""\n' + _ALL_IMPORTS)
    written = 0
    for _, text in _blocks():
        out.write(text + "\n\n")
        written += len(text) + 2
        if written >= size:
            return


def yaml_file(out: TextIO, size: int) -> None:
    out.write("model_name_or_path: meta-llama/Llama-3.2-1B\nddp_backend: nccl\nbf16: true\nruns:\n")
    written, i = 0, 0
    while written < size:
        text = (
            f"  - name: run_{i:07d}\n    device: cuda:{i % 8}\n    learning_rate: 1.0e-4\n"
            f'    dataset: alpaca_en_demo\n    notes: "sweep point {i}, seed {i * 7}"\n'
        )
        out.write(text)
        written += len(text)
        i += 1


def json_file(out: TextIO, size: int) -> None:
    out.write('{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {\n    "stage": 2\n  },\n  "runs": [')
    written, i = 0, 0
    while written < size:
        text = (
            "\n    {\n"
            f'      "name": "run_{i:07d}",\n      "device": "cuda:{i % 8}",\n'
            f'      "lr": 0.0001,\n      "notes": "sweep point {i}, seed {i * 7}"\n    }}'
        )
        out.write(("," if i else "") + text)
        written += len(text) + 1
        i += 1
    out.write("\n  ]\n}\n")


def _cell(cell: dict) -> str:
    # nbformat's layout (indent 1), one cell at a time: the notebook is never held whole
    return "\n".join("  " + line for line in json.dumps(cell, indent=1).splitlines())


def notebook_file(out: TextIO, size: int) -> None:
    def code(source: str, count: int, outputs: list) -> dict:
        lines = source.splitlines(keepends=True)
        return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": outputs, "source": lines}

    out.write('{\n "cells": [\n' + _cell(code(_ALL_IMPORTS.rstrip("\n"), 1, [])))
    written = 0
    for n, (_, text) in enumerate(_blocks()):
        stream = {"name": "stdout", "output_type": "stream", "text": [f"step {n}: loss {1 / (n + 1):.6f}\n"]}
        for cell in (
            code(text.strip("\n"), n + 2, [stream]),
            {"cell_type": "markdown", "metadata": {}, "source": [f"Block {n}: what it does and why.\n"]},
        ):
            chunk = ",\n" + _cell(cell)
            out.write(chunk)
            written += len(chunk)
        if written >= size:
            break
    meta = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    out.write('\n ],\n "metadata": ' + json.dumps(meta) + ',\n "nbformat": 4,\n "nbformat_minor": 5\n}\n')


# kind -> (file name, writer)
KINDS = {
    "python": ("big_module.py", python_file),
    "yaml": ("sweep.yaml", yaml_file),
    "json": ("ds_config.json", json_file),
    "notebook": ("demo.ipynb", notebook_file),
}


def write(kind: str, folder: Path, megabytes: float) -> Path:
    """One file of `kind` of about `megabytes` MB in `folder`; its path."""
    name, writer = KINDS[kind]
    path = folder / name
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        writer(out, int(megabytes * MB))
    return path
