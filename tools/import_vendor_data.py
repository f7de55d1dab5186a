"""Bring the vendor data porter's tables are built from into the project (tools/vendor_data/).

The data comes from the workplace's shared folder (`../shared/data` beside the repository),
whose README names each file's origin (repository, commit, path). Tests and the table build
read the project's copy only, so a clone tests the same as the workplace. Run it again when
the shared data changes; it copies the files listed below and says which changed. The shared
README asks that the vendor's free-text `limitations` sentences stay out of the project:
each is replaced by `limitations: true` (the table build reads only whether there is one).

    python tools/import_vendor_data.py [--from ../shared/data]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEST = REPO_ROOT / "tools" / "vendor_data"
# One entry's `limitations: <the vendor's sentence>` (always one line in these lists).
_LIMITATIONS = re.compile(rb"^([ \t]+)limitations:[^\n]*", re.M)
FILES = (
    "README.md",
    "torch_mlu/torch_api.r2.1_develop.yaml",
    "torch_mlu/torch_api.r2.4_develop.yaml",
    "torch_mlu/mlu_functions.r2.4_develop.yaml",
    "ascend/op_list_2_8.json",
    "ascend/supported_op_2_8.json",
    "sarif/sarif-schema-2.1.0.json",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    args = parser.parse_args(argv)
    missing = [name for name in FILES if not (args.source / name).is_file()]
    if missing:
        parser.error(f"{args.source}: missing {', '.join(missing)}")
    for name in FILES:
        src, dst = args.source / name, DEST / name
        old = dst.read_bytes() if dst.is_file() else None
        new = src.read_bytes()
        if name.endswith(".yaml"):
            new = _LIMITATIONS.sub(rb"\1limitations: true", new)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(new)
        print(f"{'unchanged' if old == new else 'updated  '} tools/vendor_data/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
