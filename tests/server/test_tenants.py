"""One tenant cannot read, list or change another's dictionaries or results, by any endpoint."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.server.conftest import Keys, LiveServer

TEXT = "Zorblax Holdings owes EUR 1,250.00 under the Quendor clause."
ACME_DICT = b"term\tcanonical\tcategory\nZorblax Holdings\tZORBLAX\tcompany\n"
GLOBEX_DICT = b"term\tcanonical\tcategory\nQuendor clause\tQUENDOR\tclause\n"


@pytest.fixture
def two(serve_fallbacks: Any, keys: Keys) -> tuple[LiveServer, Keys]:
    live = serve_fallbacks()
    for key, tenant, data in ((keys.acme, "acme", ACME_DICT), (keys.globex, "globex", GLOBEX_DICT)):
        response = httpx.post(
            f"{live.url}/v1/tenants/{tenant}/termdicts",
            files={"file": (f"{tenant}_terms.tsv", data, "text/tab-separated-values")},
            headers=Keys.auth(key),
        )
        assert response.status_code == 201, response.text
    return live, keys


def own_dictionaries(live: LiveServer, key: str, tenant: str) -> list[str]:
    response = httpx.get(f"{live.url}/v1/tenants/{tenant}/termdicts", headers=Keys.auth(key))
    assert response.status_code == 200, response.text
    return [d["name"] for d in response.json()["dictionaries"] if d["tenant"] is not None]


def canonicals(live: LiveServer, key: str) -> set[str]:
    response = httpx.post(
        f"{live.url}/v1/analyze", json={"text": TEXT}, headers=Keys.auth(key), timeout=60
    )
    assert response.status_code == 200, response.text
    return {t["canonical"] for t in response.json()["terms"]}


def test_each_tenant_lists_only_its_own_dictionaries(two: tuple[LiveServer, Keys]) -> None:
    live, keys = two
    assert own_dictionaries(live, keys.acme, "acme") == ["acme_terms"]
    assert own_dictionaries(live, keys.globex, "globex") == ["globex_terms"]


def test_each_tenants_terms_reach_only_its_own_analyses(two: tuple[LiveServer, Keys]) -> None:
    live, keys = two
    acme, globex = canonicals(live, keys.acme), canonicals(live, keys.globex)

    assert "ZORBLAX" in acme
    assert "QUENDOR" not in acme
    assert "QUENDOR" in globex
    assert "ZORBLAX" not in globex


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/tenants/acme/termdicts"),
        ("POST", "/v1/tenants/acme/termdicts"),
        ("DELETE", "/v1/tenants/acme/termdicts"),
        ("DELETE", "/v1/tenants/acme/termdicts/acme_terms"),
        ("GET", "/v1/tenants/nobody/termdicts"),
        ("DELETE", "/v1/tenants/nobody/termdicts/x"),
    ],
)
def test_another_tenants_paths_are_forbidden_and_left_unchanged(
    two: tuple[LiveServer, Keys], method: str, path: str
) -> None:
    live, keys = two
    files = {"file": ("evil.tsv", b"term\tcanonical\tcategory\nZorblax\tEVIL\tcompany\n")}
    response = httpx.request(
        method,
        f"{live.url}{path}",
        headers=Keys.auth(keys.globex),
        files=files if method == "POST" else None,
    )

    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "forbidden"
    assert own_dictionaries(live, keys.acme, "acme") == ["acme_terms"]
    assert "EVIL" not in canonicals(live, keys.acme)


@pytest.mark.parametrize(
    "path",
    ["/v1/tenants/../tenants/acme/termdicts", "/v1/tenants/%2e%2e/termdicts",
     "/v1/tenants/acme%2fx/termdicts"],
)  # fmt: skip
def test_path_tricks_reach_no_other_tenant(two: tuple[LiveServer, Keys], path: str) -> None:
    live, keys = two
    response = httpx.get(f"{live.url}{path}", headers=Keys.auth(keys.globex))

    assert response.status_code in {403, 404}, response.text
    assert "acme_terms" not in response.text


def test_deleting_a_name_another_tenant_uses_touches_only_ones_own(
    two: tuple[LiveServer, Keys],
) -> None:
    live, keys = two
    response = httpx.delete(
        f"{live.url}/v1/tenants/globex/termdicts/acme_terms", headers=Keys.auth(keys.globex)
    )

    assert response.status_code == 404
    assert own_dictionaries(live, keys.acme, "acme") == ["acme_terms"]


def test_a_tenant_replaces_and_removes_its_own_dictionaries(two: tuple[LiveServer, Keys]) -> None:
    live, keys = two
    url, auth = f"{live.url}/v1/tenants/acme/termdicts", Keys.auth(keys.acme)
    again = {"file": ("acme_terms.tsv", b"term\tcanonical\tcategory\nZorblax\tZB\tcompany\n")}

    assert httpx.post(url, files=again, headers=auth).json()["error"]["code"] == (
        "invalid_term_dictionary"
    )
    assert httpx.post(url, files=again, headers=auth, params={"replace": "true"}).status_code == 201
    assert "ZB" in canonicals(live, keys.acme)
    assert httpx.delete(f"{url}/acme_terms", headers=auth).status_code == 204
    assert own_dictionaries(live, keys.acme, "acme") == []
    assert "ZB" not in canonicals(live, keys.acme)
    assert own_dictionaries(live, keys.globex, "globex") == ["globex_terms"]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bad.tsv", b"no header here\n"),
        ("bad.exe", b"MZ\x90\x00"),
        ("../../escape.tsv", b"term\tcanonical\tcategory\nEscape\tESC\tcompany\n"),
        ("bomb.yaml", b"a: &a [*a, *a]\n"),
    ],
)
def test_bad_uploads_are_coded_and_write_nothing_outside_the_store(
    two: tuple[LiveServer, Keys], name: str, data: bytes, tmp_path: Any
) -> None:
    live, keys = two
    before = {p for p in tmp_path.parent.rglob("*")}
    response = httpx.post(
        f"{live.url}/v1/tenants/acme/termdicts",
        files={"file": (name, data)},
        headers=Keys.auth(keys.acme),
    )

    if response.status_code == 201:  # the traversal name: stored under its dictionary name only
        assert name.startswith("..")
        assert response.json()["added"][0]["name"] == "escape"
    else:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_term_dictionary"
    created = {p for p in tmp_path.parent.rglob("*")} - before
    store = tmp_path / "terms" / "tenants" / "acme"
    assert all(p.is_relative_to(store) for p in created), created
