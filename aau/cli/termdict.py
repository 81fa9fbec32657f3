"""``aau termdict``: tenants' term dictionaries, managed while engines keep serving.

``aau termdict tenant add|list|remove NAME``          tenants
``aau termdict add --tenant T FILE... [--replace]``   upload (all or nothing)
``aau termdict list [--tenant T] [--json]``           shipped and uploaded dictionaries
``aau termdict remove --tenant T NAME``               drop an upload
``aau termdict check FILE...``                        validate without uploading
``aau termdict find [--tenant T] --text TEXT``        the terms a text holds

Uploads go to the term store (``--store``, else ``AAU_TERMS_DIR``); a serving process picks
them up at the tenant's next request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from aau.errors import TermDictionaryError
from aau.terms import TermStore, load_dictionary

__all__ = ["add_termdict_parser"]


def _store(args: argparse.Namespace) -> TermStore:
    return TermStore(args.store)


def cmd_tenant(args: argparse.Namespace) -> int:
    """Create, list or remove tenants."""
    store = _store(args)
    if args.action == "list":
        for tenant in store.tenants():
            print(tenant)
        return 0
    if not args.name:
        print(f"error: aau termdict tenant {args.action} needs a NAME", file=sys.stderr)
        return 2
    if args.action == "add":
        store.create_tenant(args.name)
        print(f"created tenant {args.name}")
    else:
        store.remove_tenant(args.name)
        print(f"removed tenant {args.name}")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    """Upload dictionaries for a tenant."""
    started = time.perf_counter()
    added = _store(args).add(args.tenant, args.files, replace=args.replace)
    seconds = time.perf_counter() - started
    for dictionary in added:
        print(f"added {dictionary.name} ({len(dictionary)} terms) for tenant {args.tenant}")
    print(f"active for {args.tenant}'s next request ({seconds:.2f} s)", file=sys.stderr)
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove one of a tenant's dictionaries."""
    _store(args).remove(args.tenant, args.name)
    print(f"removed {args.name} from tenant {args.tenant}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Shipped dictionaries, then the tenant's (or every tenant's) uploads."""
    infos = _store(args).list(args.tenant)
    if args.json:
        for info in infos:
            print(json.dumps({"tenant": info.tenant, "name": info.name, "terms": info.terms,
                              "surfaces": info.surfaces, "source": info.source,
                              "file": info.file}))  # fmt: skip
        return 0
    print(f"{'tenant':<16} {'dictionary':<24} {'terms':>7} {'surfaces':>9}  source")
    for info in infos:
        tenant = info.tenant or "(shipped)"
        print(f"{tenant:<16} {info.name:<24} {info.terms:>7} {info.surfaces:>9}  {info.source}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate dictionary files; print one line per file."""
    failed = 0
    for file in args.files:
        try:
            dictionary = load_dictionary(file)
        except TermDictionaryError as exc:
            failed += 1
            print(f"error: {exc}", file=sys.stderr)
            continue
        print(f"ok: {file} ({dictionary.name}, {len(dictionary)} terms)")
    return 2 if failed else 0


def cmd_find(args: argparse.Namespace) -> int:
    """Print the terms of a text, one JSON object per hit."""
    term_set = _store(args).term_set(args.tenant)
    for hit in term_set.find(args.text):
        print(json.dumps(hit.as_dict(), ensure_ascii=False))
    return 0


def add_termdict_parser(sub: Any) -> None:
    """Add ``aau termdict …`` to the ``aau`` subcommands."""
    parser = sub.add_parser("termdict", help="tenants' term dictionaries")
    parser.add_argument("--store", help="term store folder (default: AAU_TERMS_DIR)")
    commands = parser.add_subparsers(dest="termdict_command", required=True)

    p = commands.add_parser("tenant", help="create, list or remove tenants")
    p.add_argument("action", choices=["add", "list", "remove"])
    p.add_argument("name", nargs="?", help="the tenant")
    p.set_defaults(func=cmd_tenant)

    p = commands.add_parser("add", help="upload dictionaries for a tenant (all or nothing)")
    p.add_argument("--tenant", required=True)
    p.add_argument("files", nargs="+", help=".tsv, .csv or .yaml dictionaries")
    p.add_argument("--replace", action="store_true", help="replace same-named dictionaries")
    p.set_defaults(func=cmd_add)

    p = commands.add_parser("list", help="shipped and uploaded dictionaries")
    p.add_argument("--tenant", help="only this tenant's uploads")
    p.add_argument("--json", action="store_true", help="one JSON object per dictionary")
    p.set_defaults(func=cmd_list)

    p = commands.add_parser("remove", help="remove a tenant's dictionary")
    p.add_argument("--tenant", required=True)
    p.add_argument("name", help="the dictionary's name (see list)")
    p.set_defaults(func=cmd_remove)

    p = commands.add_parser("check", help="validate dictionary files without uploading")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_check)

    p = commands.add_parser("find", help="the terms a text holds, for a tenant")
    p.add_argument("--tenant", help="the tenant (default: shipped dictionaries only)")
    p.add_argument("--text", required=True)
    p.set_defaults(func=cmd_find)
