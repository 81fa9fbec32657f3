"""Convert quantulum3's labelled English test sentences into ``quantities.dev.jsonl``.

``quantulum3`` (MIT) keeps English sentences labelled by hand with every quantity they state:
value, unit name and the words that state it ("2 1/2 in thick", "between 44 and 50 mg",
"-18 °C to -34 °C", "$2.174T"). Its files ``quantulum3/_lang/en_US/tests/quantities.json`` and
``quantities.ambiguity.json`` (in the source distribution) are a dev resource for how
``aau.values`` reads quantities in running English text, beside Recognizers-Text's specs.

The JSON files are read as data from the archive (nothing of the package is imported or run).
Kept: every labelled quantity whose unit is not ``dimensionless`` (a bare count). Each line:

    {"id": "quantulum3/quantities.json/0002", "text": "The door is 2 1/2 in thick, ...",
     "quantities": [{"value": 2.5, "unit_name": "inch", "surface": "2 1/2 in"}]}

quantulum3 gives a range its midpoint ("44 mg to 50 mg" is 47 mg), and labels money as a
quantity too ("$2.174T" in dollars); ``benchmarks/values.py`` reads both as the label says.
Rebuild (byte-identical for the same version):

    pip download quantulum3==0.10.0 --no-binary :all: --no-deps -d /tmp/qu
    python benchmarks/external/quantulum_cases.py --sdist /tmp/qu/quantulum3-0.10.0.tar.gz
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FILES = ("quantities.json", "quantities.ambiguity.json")
TESTS = "quantulum3/_lang/en_US/tests/"


def cases(name: str, sentences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sentences of one test file with their quantities (bare counts left out)."""
    kept = []
    for index, sentence in enumerate(sentences):
        quantities = [
            {"value": float(q["value"]), "unit_name": q["unit"], "surface": q["surface"]}
            for q in sentence["res"]
            if q["unit"] != "dimensionless"
        ]
        if quantities:
            kept.append({"id": f"quantulum3/{name}/{index:04d}", "text": sentence["req"],
                         "quantities": quantities})  # fmt: skip
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help="quantulum3's .tar.gz")
    parser.add_argument("--out", type=Path, default=HERE / "quantities.dev.jsonl")
    args = parser.parse_args(argv)
    kept: list[dict[str, Any]] = []
    with tarfile.open(args.sdist) as archive:
        members = {m.name.split("/", 1)[-1]: m for m in archive.getmembers()}
        for name in FILES:
            handle = archive.extractfile(members[TESTS + name])
            if handle is None:
                raise SystemExit(f"{TESTS + name} is not a file in {args.sdist}")
            kept += cases(name, json.loads(handle.read().decode("utf-8")))
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept),
                        encoding="utf-8")  # fmt: skip
    count = sum(len(c["quantities"]) for c in kept)
    print(f"{len(kept)} sentences, {count} quantities -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
