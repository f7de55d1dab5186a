"""Bring the vendor data porter's tables are built from into the project (tools/vendor_data/).

Most of it comes from the workplace's shared folder (`../shared/data` beside the repository),
whose README names each file's origin (repository, commit, path). Ascend's lists for the torch
lines the shared folder does not carry (2.1, 2.6, 2.7) come from the same msprobe commit as its
2.8 lists, read from a clone of Ascend/msprobe (`--msprobe DIR`; skipped without one). Tests and
the table build read the project's copy only, so a clone tests the same as the workplace. Run it
again when the data changes; it copies the files listed below and says which changed.

tools/vendor_data/README.md is the project's own (it lists the msprobe files too): the script
does not overwrite it, it names each file of the shared README that the project's one lacks.
The shared README asks that the vendor's free-text `limitations` sentences stay out of the
project: each is replaced by `limitations: true` (the table build reads only whether there is one).

    python tools/import_vendor_data.py [--from ../shared/data] [--msprobe ../msprobe]
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEST = REPO_ROOT / "tools" / "vendor_data"
# One entry's `limitations: <the vendor's sentence>` (always one line in these lists).
_LIMITATIONS = re.compile(rb"^([ \t]+)limitations:[^\n]*", re.M)
FILES = (
    "torch_mlu/torch_api.r2.1_develop.yaml",
    "torch_mlu/torch_api.r2.4_develop.yaml",
    "torch_mlu/mlu_functions.r2.4_develop.yaml",
    "ascend/op_list_2_8.json",
    "ascend/supported_op_2_8.json",
    "sarif/sarif-schema-2.1.0.json",
)
# The commit the shared folder's Ascend lists come from (its README), and the other lines' lists there.
MSPROBE_COMMIT = "e48638562554430c62dfd0916624ec1057d33117"
MSPROBE_FILES = {
    f"ascend/{kind}_{line}.json": f"src/ms_fmk_transplt/resource/{kind}_{line}.json"
    for line in ("2_1", "2_6", "2_7")
    for kind in ("op_list", "supported_op")
}
_README_ROW = re.compile(r"^\|\s*(\S+)\s*\|")


def _write(name: str, new: bytes) -> None:
    dst = DEST / name
    old = dst.read_bytes() if dst.is_file() else None
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(new)
    print(f"{'unchanged' if old == new else 'updated  '} tools/vendor_data/{name}")


def _rows(readme: Path) -> set[str]:
    rows = (_README_ROW.match(line) for line in readme.read_text(encoding="utf-8").splitlines())
    return {m.group(1) for m in rows if m and m.group(1) not in ("file", "---")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--msprobe", type=Path, default=None, help="a clone of Ascend/msprobe (with its history)")
    args = parser.parse_args(argv)
    missing = [name for name in FILES if not (args.source / name).is_file()]
    if missing:
        parser.error(f"{args.source}: missing {', '.join(missing)}")
    for name in FILES:
        new = (args.source / name).read_bytes()
        if name.endswith(".yaml"):
            new = _LIMITATIONS.sub(rb"\1limitations: true", new)
        _write(name, new)
    if args.msprobe is not None:
        for name, path in MSPROBE_FILES.items():
            show = ["git", "-C", str(args.msprobe), "show", f"{MSPROBE_COMMIT}:{path}"]
            _write(name, subprocess.run(show, check=True, capture_output=True).stdout)
    if (args.source / "README.md").is_file():
        lacking = sorted(_rows(args.source / "README.md") - _rows(DEST / "README.md"))
        for name in lacking:
            print(f"tools/vendor_data/README.md has no row for {name} (the shared README has one): add it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
