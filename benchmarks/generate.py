"""Generate a deterministic synthetic CUDA training repository of about N lines.

    python benchmarks/generate.py OUT --lines 100000 [--seed 0]

Proportions follow real repositories: Python files of 100-400 lines, about a quarter of
them touching CUDA (LLaMA-Factory: ~70 of 310 files) with the rest plain Python, plus
shell scripts, requirements, YAML training configs and a DeepSpeed JSON (about 5% of
the lines). The same (lines, seed) always gives the same bytes.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_other as other  # noqa: E402
from synth_python import CUDA_BLOCKS, FILLER_BLOCKS, HEADER, TRAP_BLOCKS, Block  # noqa: E402

OTHER_LINE_SHARE = 0.05  # lines in shell scripts and configs
FILES_PER_PACKAGE = 15


@dataclass(frozen=True)
class TreeStats:
    files: int
    lines: int
    python_files: int = 0
    cuda_files: int = 0


def _lines(text: str) -> int:
    return text.count("\n")


def _python_module(rng: random.Random, name: str, target: int, cuda: bool) -> str:
    """One module of about `target` lines; a CUDA module mixes CUDA and trap blocks into filler."""
    chosen: list[Block] = []
    size = 16  # header, docstring, blank lines, a few imports
    while size < target:
        roll = rng.random()
        if cuda and (not chosen or roll < 0.3):
            block = rng.choice(CUDA_BLOCKS)
        elif cuda and roll < 0.4:
            block = rng.choice(TRAP_BLOCKS)
        else:
            block = rng.choice(FILLER_BLOCKS)
        chosen.append(block)
        size += _lines(block.text) + 2 + len(block.imports) // 2
    parts = [HEADER, f'"""Synthetic module {name}: data handling and training helpers."""\n']
    if any(b.imports for b in chosen):
        parts.append(_import_lines(chosen))
    parts.append("\n\n".join(block.text.replace("@N@", str(n)) for n, block in enumerate(chosen)))
    return "\n".join(parts)


def _import_lines(blocks: list[Block]) -> str:
    """The blocks' imports, one `from` line per module, plain imports first."""
    plain: set[str] = set()
    names: dict[str, set[str]] = {}
    for line in (i for b in blocks for i in b.imports):
        if line.startswith("from "):
            module, _, imported = line[5:].partition(" import ")
            names.setdefault(module, set()).update(n.strip() for n in imported.split(","))
        else:
            plain.add(line)
    lines = sorted(plain) + [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(names.items())]
    return "\n".join(lines) + "\n\n"


def _other_files(rng: random.Random, budget: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {
        "requirements.txt": b"-r requirements/gpu.txt\n",
        "requirements/base.txt": other.REQUIREMENTS_BASE.encode(),
        "requirements/gpu.txt": other.REQUIREMENTS_GPU.encode(),
        "examples/deepspeed/ds_z2_config.json": other.DEEPSPEED_JSON.encode(),
        "legacy/gbk_tool.py": other.GBK_PYTHON.replace("@N@", "0").encode("gbk"),
    }
    kinds = [
        ("scripts/train_{}.sh", other.SHELL),
        ("examples/train_lora/llama3_lora_{}.yaml", other.TRAIN_YAML),
        ("examples/train_lora/qwen_lora_{}.yaml", other.TRAIN_YAML),
        ("examples/accelerate/multi_gpu_{}.yaml", other.ACCELERATE_YAML),
    ]
    used, n = sum(_lines(d.decode("gbk")) for d in files.values()), 0
    while used < budget:
        pattern, text = kinds[n % len(kinds)]
        text = text.replace("@N@", str(n + rng.randrange(10)))
        files[pattern.format(n)] = text.encode()
        used += _lines(text)
        n += 1
    return files


def generate(dest: Path, lines: int, seed: int = 0) -> TreeStats:
    """Write the synthetic tree under `dest` (created) and return what was written."""
    rng = random.Random(f"{seed}:{lines}")
    files = _other_files(rng, int(lines * OTHER_LINE_SHARE))
    remaining = lines - sum(_lines(d.decode("gbk")) for d in files.values())
    python_files = cuda_files = index = cuda_slot = 0
    while remaining > 0:
        target = rng.randint(100, 400)
        if remaining - target < 100:
            target = remaining
        package, module = divmod(index, FILES_PER_PACKAGE)
        if module == 0:
            files[f"src/synth/pkg{package:03d}/__init__.py"] = b""
        if index % 4 == 0:  # one file in each group of four touches CUDA
            cuda_slot = rng.randrange(4)
        cuda = index % 4 == cuda_slot
        text = _python_module(rng, f"synth.pkg{package:03d}.mod{module:02d}", target, cuda)
        files[f"src/synth/pkg{package:03d}/mod{module:02d}.py"] = text.encode()
        remaining -= _lines(text)
        python_files += 1
        cuda_files += cuda
        index += 1
    total = 0
    for rel, data in sorted(files.items()):
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel.endswith(".sh"):
            path.chmod(0o755)
        total += data.count(b"\n")
    return TreeStats(len(files), total, python_files + 1, cuda_files + 1)


def tree_stats(root: Path) -> TreeStats:
    """Files and lines of a tree as porter sees it (version-control folders skipped).

    Lines are counted in text files only (no NUL byte in the first 8 KiB).
    """
    files = lines = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".hg", ".svn")]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            files += 1
            with open(path, "rb") as handle:
                data = handle.read()
            if b"\0" not in data[:8192]:
                lines += data.count(b"\n")
    return TreeStats(files, lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to create (must not exist or be empty)")
    parser.add_argument("--lines", type=int, default=100_000, help="about how many lines (default 100000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} is not empty")
    stats = generate(args.out, args.lines, args.seed)
    print(
        f"{args.out}: {stats.files} files, {stats.lines} lines; {stats.python_files} Python files, "
        f"{stats.cuda_files} of them touch CUDA"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
