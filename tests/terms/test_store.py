"""Tenants and uploads: all or nothing, isolated per tenant, live without a restart."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest

from aau.errors import TermDictionaryError, UnknownTenant
from aau.terms import TermStore, parse_dictionary

SHIPPED = [
    parse_dictionary(
        "term\tcanonical\tcategory\nswap\tswap\tinstrument\nlate payment\tlate payment\tclause\n",
        file="shipped.tsv",
    )
]
TEXT = "Acme's widget pack is under the late payment swap terms."


def write(folder: Path, name: str, *rows: str) -> Path:
    path = folder / name
    path.write_text("term\tcanonical\tcategory\n" + "".join(r + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> TermStore:
    store = TermStore(tmp_path / "store", shipped=SHIPPED)
    store.create_tenant("acme")
    store.create_tenant("globex")
    return store


def canon(store: TermStore, tenant: str | None, text: str = TEXT) -> list[tuple[str, str]]:
    return [(h.text, h.canonical) for h in store.term_set(tenant).find(text)]


def test_an_upload_is_active_at_the_tenants_next_request(store: TermStore, tmp_path: Path) -> None:
    assert canon(store, "acme") == [("late payment", "late payment"), ("swap", "swap")]
    store.add("acme", [write(tmp_path, "acme.tsv", "widget pack\tWP-1\tproduct")])
    assert canon(store, "acme")[0] == ("widget pack", "WP-1")
    assert [(i.tenant, i.name, i.terms) for i in store.list("acme")] == [
        (None, "shipped", 2),
        ("acme", "acme", 1),
    ]


def test_one_tenants_upload_changes_nothing_for_another(store: TermStore, tmp_path: Path) -> None:
    before = store.term_set("globex")
    store.add(
        "acme",
        [write(tmp_path, "acme.tsv", "widget pack\tWP-1\tproduct", "swap\tACME-SWAP\tproduct")],
    )
    after = store.term_set("globex")
    assert after.fingerprint == before.fingerprint
    assert canon(store, "globex") == [("late payment", "late payment"), ("swap", "swap")]
    assert ("swap", "ACME-SWAP") in canon(store, "acme")  # a tenant's own meaning wins
    assert (
        store.term_set(None).fingerprint
        == TermStore(store.root, shipped=SHIPPED).term_set(None).fingerprint
    )


def test_an_upload_with_one_bad_file_applies_nothing(store: TermStore, tmp_path: Path) -> None:
    good = write(tmp_path, "good.tsv", "widget pack\tWP-1\tproduct")
    bad = write(tmp_path, "bad.tsv", "gadget\tG\tproduct", "gadget\tG\tproduct")
    fingerprint = store.term_set("acme").fingerprint
    files = sorted(p.name for p in (store.root / "tenants" / "acme").iterdir())
    with pytest.raises(TermDictionaryError) as info:
        store.add("acme", [good, bad])
    assert (info.value.term_code, info.value.line) == ("T011", 3)
    assert store.term_set("acme").fingerprint == fingerprint
    assert sorted(p.name for p in (store.root / "tenants" / "acme").iterdir()) == files
    assert [i.name for i in store.list("acme")] == ["shipped"]


def test_conflicting_uploads_are_refused_naming_both(store: TermStore, tmp_path: Path) -> None:
    store.add("acme", [write(tmp_path, "one.tsv", "widget pack\tWP-1\tproduct")])
    with pytest.raises(TermDictionaryError) as info:
        store.add("acme", [write(tmp_path, "two.tsv", "Widget Pack\tWP-2\tproduct")])
    assert info.value.term_code == "T013"
    assert "'WP-1' in the tenant's dictionary 'one'" in info.value.message
    assert canon(store, "acme")[0] == ("widget pack", "WP-1")


def test_a_taken_name_needs_replace(store: TermStore, tmp_path: Path) -> None:
    store.add("acme", [write(tmp_path, "acme.tsv", "widget pack\tWP-1\tproduct")])
    newer = write(tmp_path / "..", "acme.tsv", "widget pack\tWP-9\tproduct")
    with pytest.raises(TermDictionaryError) as info:
        store.add("acme", [newer])
    assert info.value.term_code == "T018"
    store.add("acme", [newer], replace=True)
    assert canon(store, "acme")[0] == ("widget pack", "WP-9")
    stored = [p for p in (store.root / "tenants" / "acme").iterdir() if p.suffix == ".tsv"]
    assert len(stored) == 1  # the replaced file is gone


def test_unknown_tenants_are_refused(store: TermStore, tmp_path: Path) -> None:
    with pytest.raises(UnknownTenant) as info:
        store.add("initech", [write(tmp_path, "x.tsv", "widget pack\tWP\tproduct")])
    assert info.value.code == "unknown_tenant"
    assert "known: acme, globex" in str(info.value)
    with pytest.raises(UnknownTenant):
        store.term_set("initech")
    with pytest.raises(TermDictionaryError) as bad_name:
        store.create_tenant("../etc")
    assert bad_name.value.term_code == "T016"


def test_remove_and_an_upload_from_another_process_are_seen_live(
    store: TermStore, tmp_path: Path
) -> None:
    serving = TermStore(store.root, shipped=SHIPPED)  # e.g. the engine's process
    assert ("widget pack", "WP-1") not in canon(serving, "acme")
    store.add("acme", [write(tmp_path, "acme.tsv", "widget pack\tWP-1\tproduct")])
    assert canon(serving, "acme")[0] == ("widget pack", "WP-1")
    store.remove("acme", "acme")
    assert ("widget pack", "WP-1") not in canon(serving, "acme")
    with pytest.raises(TermDictionaryError) as info:
        store.remove("acme", "acme")
    assert info.value.term_code == "T019"


def test_the_manifest_is_plain_json(store: TermStore, tmp_path: Path) -> None:
    store.add("acme", [write(tmp_path, "acme.tsv", "widget pack\tWP-1\tproduct")])
    manifest = json.loads((store.root / "tenants" / "acme" / "manifest.json").read_text())
    assert [e["name"] for e in manifest["dictionaries"]] == ["acme"]
    store.remove_tenant("acme")
    assert store.tenants() == ["globex"]


def _upload_in_another_process(root: str, name: str, barrier: object) -> None:
    store = TermStore(root, shipped=SHIPPED)
    barrier.wait()  # type: ignore[attr-defined]
    store.add("acme", [Path(root).parent / f"{name}.tsv"])


def test_uploads_from_two_processes_at_once_both_land(tmp_path: Path) -> None:
    import multiprocessing

    context = multiprocessing.get_context("fork")
    store = TermStore(tmp_path / "store", shipped=SHIPPED)
    store.create_tenant("acme")
    for round_ in range(4):
        names = [f"d{round_}a", f"d{round_}b"]
        for name in names:
            write(tmp_path, f"{name}.tsv", f"term {name}\t{name}\tproduct")
        barrier = context.Barrier(2)
        workers = [
            context.Process(
                target=_upload_in_another_process, args=(str(store.root), name, barrier)
            )
            for name in names
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
            assert worker.exitcode == 0
        listed = {info.name for info in store.list("acme")}
        assert set(names) <= listed
        hits = canon(store, "acme", f"term {names[0]} and term {names[1]}")
        assert [canonical for _, canonical in hits] == names


def test_replaced_dictionaries_are_not_kept_once_no_term_set_uses_them(
    store: TermStore, tmp_path: Path
) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    store.add("acme", [write(tmp_path / "v1", "acme.tsv", "widget lease\twidget lease\tproduct")])
    old = weakref.ref(store.uploaded("acme")[0])
    assert canon(store, "acme", "a widget lease")  # the live term set holds the dictionary

    store.add("acme", [write(tmp_path / "v2", "acme.tsv", "gadget lease\tgadget lease\tproduct")],
              replace=True)  # fmt: skip
    found = canon(store, "acme", "a widget lease and a gadget lease")
    gc.collect()

    assert found == [("gadget lease", "gadget lease")]
    assert old() is None
