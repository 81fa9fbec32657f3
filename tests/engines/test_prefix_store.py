"""Units' static prompt prefixes kept on disk: a new engine continues them instead of prefilling.

The KV read back is the KV computed (greedy outputs equal an engine that caches nothing), a
damaged or foreign file is a miss, only what the caller marks as the unit's own text is written,
and the folder stays within its cap. The tiny GLM-5 is used: its layers carry the sparse
attention indexer's keys besides keys and values.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

import aau
from aau.decoding import bound_schema
from aau.engines.base import Generation, GenerationRequest
from aau.engines.local import TransformersEngine
from aau.prompts import render_messages
from aau.prompts.render import Layout
from tests._tiny_glm5 import build_tiny_glm5

ROOT = Path(__file__).resolve().parents[2]
UNITS = [aau.load_unit(ROOT / "units" / f"{n}.yaml")
         for n in ("extract_price", "extract_date", "extract_quantity")]  # fmt: skip
FIRST = "Invoice 7: 12 boxes delivered on 3 March 2024, total due EUR 1,250.50."
LATER = "Please ship 500 kg by June 5, 2025; the agreed price is USD 18,400 for the lot."


def requests(
    text: str, *, static_prefix: bool = True, tenant: str | None = None,
    layout: Layout = "unit_first",
) -> list[GenerationRequest]:  # fmt: skip
    return [
        GenerationRequest(
            messages=render_messages(unit, text, layout),
            schema=bound_schema(unit.output, max_string_length=32),
            max_new_tokens=12,
            key=unit.key,
            tenant=tenant,
            static_prefix=static_prefix,
        )
        for unit in UNITS
    ]


@pytest.fixture(scope="module")
def glm5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_glm5(tmp_path_factory.mktemp("glm5"))


def one_at_a_time(engine: TransformersEngine, reqs: list[GenerationRequest]) -> list[Any]:
    async def go() -> list[Any]:
        return [(await engine.generate([r]))[0] for r in reqs]

    try:
        results = asyncio.run(go())
    finally:
        engine.close()  # waits for the prefixes being written
    assert all(isinstance(r, Generation) for r in results), results
    return results


def engine_on(model: Path, cache: Path, **options: Any) -> TransformersEngine:
    engine = TransformersEngine(
        aau.EngineConfig(model=str(model), threads=1, cache_dir=str(cache), **options)
    )
    engine.load()
    return engine


def prefix_files(cache: Path) -> list[Path]:
    return sorted((cache / "prefixes").glob("*.safetensors"))


def test_a_new_engine_continues_the_prefixes_an_earlier_one_kept(
    glm5_dir: Path, tmp_path: Path
) -> None:
    uncached = one_at_a_time(engine_on(glm5_dir, tmp_path / "none", prefix_cache_mb=0),
                             requests(LATER))  # fmt: skip
    first = one_at_a_time(engine_on(glm5_dir, tmp_path), requests(FIRST))
    assert all(r.cached_tokens == 0 for r in first)
    assert len(prefix_files(tmp_path)) == len(UNITS)

    later = one_at_a_time(engine_on(glm5_dir, tmp_path), requests(LATER))

    # Each unit's first request in the new engine continues its static part from disk.
    assert all(r.cached_tokens > 100 for r in later), [r.cached_tokens for r in later]
    assert [r.text for r in later] == [r.text for r in uncached]
    assert len(prefix_files(tmp_path)) == len(UNITS)  # read, not written again


def test_a_damaged_or_foreign_prefix_file_is_a_miss(glm5_dir: Path, tmp_path: Path) -> None:
    uncached = one_at_a_time(engine_on(glm5_dir, tmp_path / "none", prefix_cache_mb=0),
                             requests(LATER))  # fmt: skip
    one_at_a_time(engine_on(glm5_dir, tmp_path), requests(FIRST))
    cut, garbage, swapped = prefix_files(tmp_path)
    whole = cut.read_bytes()
    swapped.write_bytes(whole)  # another unit's prefix, whole, under this one's name
    cut.write_bytes(whole[: len(whole) // 2])
    garbage.write_bytes(b"\x00" * 64)

    later = one_at_a_time(engine_on(glm5_dir, tmp_path), requests(LATER))

    assert [r.text for r in later] == [r.text for r in uncached]
    assert all(r.cached_tokens == 0 for r in later)


@pytest.mark.parametrize(
    "fields", [{"static_prefix": False}, {"tenant": "acme"}], ids=["not marked", "a tenant's"]
)
def test_the_engine_writes_only_what_is_marked_as_a_units_own_and_no_tenants(
    glm5_dir: Path, tmp_path: Path, fields: dict[str, Any]
) -> None:
    one_at_a_time(engine_on(glm5_dir, tmp_path), requests(FIRST, **fields))
    assert prefix_files(tmp_path) == []


@pytest.mark.parametrize(
    ("layout", "tenant", "kept"),
    [("unit_first", None, 1), ("document_first", None, 0), ("unit_first", "acme", 0)],
    ids=["the unit's own part", "a document first", "a tenant's run"],
)
def test_a_pipeline_marks_a_prompt_static_only_when_the_units_text_leads_it(
    glm5_dir: Path, tmp_path: Path, layout: Layout, tenant: str | None, kept: int
) -> None:
    engine = TransformersEngine(aau.EngineConfig(model=str(glm5_dir), threads=1,
                                                 cache_dir=str(tmp_path)))  # fmt: skip
    terms = aau.TermStore(tmp_path / "tenants")
    terms.create_tenant("acme")
    pipeline = aau.Pipeline([UNITS[0]], engine, layout=layout, calibrator=False, terms=terms)
    try:
        result = pipeline.run(FIRST, tenant=tenant)["extract_price"]
    finally:
        engine.close()
    assert result.tokens["prompt"] > 0  # the model path ran
    assert len(prefix_files(tmp_path)) == kept


def test_the_folder_stays_within_its_cap(glm5_dir: Path, tmp_path: Path) -> None:
    one_at_a_time(engine_on(glm5_dir, tmp_path / "sizes"), requests(FIRST))
    sizes = sorted(f.stat().st_size for f in prefix_files(tmp_path / "sizes"))
    # What a process killed mid-write leaves: a temporary file, removed once it is old.
    (tmp_path / "prefixes").mkdir()
    left, writing = tmp_path / "prefixes" / "left.tmp", tmp_path / "prefixes" / "writing.tmp"
    left.write_bytes(b"\x00" * 1024)
    writing.write_bytes(b"\x00" * 1024)
    os.utime(left, (time.time() - 7200, time.time() - 7200))
    engine = engine_on(glm5_dir, tmp_path)
    assert engine._prefix_store is not None
    engine._prefix_store.max_bytes = sizes[-1] + sizes[0] // 2  # room for one file
    one_at_a_time(engine, requests(FIRST))
    files = prefix_files(tmp_path)
    assert len(files) == 1
    assert files[0].stat().st_size <= engine._prefix_store.max_bytes
    assert not left.exists()
    assert writing.exists()  # another process's write under way
