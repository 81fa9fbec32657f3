"""Term layer throughput: Aho-Corasick scan vs a regex alternation, upload to active, tokens.

    python benchmarks/terms.py [--mb 10] [--regex-mb 1]

With a 12,000-term dictionary (the shipped terms, topped up with generated multi-word
finance/legal/insurance compounds) over dense text (a term every few words):

* scan throughput of ``TermMatcher.find`` (``TermHit`` objects with offsets, word boundaries,
  case folding; also ``TermMatcher.spans``, the same matches as offset arrays, and
  pyahocorasick's own walk of the same automaton with nothing checked or kept: the ceiling)
  and of one compiled, case-insensitive Python regex alternation of the same terms (longest
  first, word-bounded), on the same leading ``--regex-mb`` of the text, side by side; the
  matcher's throughput is also reported over the whole ``--mb``;
* upload to active: ``TermStore.add`` of the dictionary file for a tenant until the tenant's
  next request is matched with it (parse, validate, conflicts, automaton, atomic write), and
  separately the time to build that tenant's merged-token view on the loaded default model;
* tokens of the example documents (``examples/docs/*.txt``) with and without merged tokens,
  under the shipped dictionaries.

The last printed line is one JSON object with ``scan_mb_s``, ``regex_ratio``, ``upload_s``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from pathlib import Path

from aau.terms import TermMatcher, TermStore, load_dictionary, shipped_dictionaries
from aau.terms.dictionary import fold_surface
from aau.terms.matcher import fold_text

ROOT = Path(__file__).resolve().parent.parent
MODIFIERS = (
    "annual quarterly deferred accrued contingent secured unsecured subordinated senior junior "
    "floating fixed variable forward spot net gross residual statutory contractual mandatory "
    "optional cumulative retroactive prospective excess primary secondary"
).split()
HEADS = (
    "premium deductible liability coverage exposure settlement indemnity collateral covenant "
    "obligation dividend coupon tranche reserve claim rider endorsement clause warranty "
    "guarantee lien mortgage annuity allowance surcharge rebate penalty"
).split()
QUALIFIERS = (
    "adjustment schedule threshold ratio cap limit notice period account fund provision rate basis"
).split()
FILLER = (
    "the of and to in for on with by under this that any such all shall may will be is are "
    "party parties agreement date amount paid due within days notice written consent upon "
    "each other as set out above below herein thereof including without limitation"
).split()


def dictionary_of(size: int) -> list[str]:
    """``size`` distinct surface forms: the shipped terms first, then generated compounds."""
    seen: set[str] = set()
    terms: list[str] = []
    for dictionary in shipped_dictionaries():
        for surface, _ in dictionary.surfaces():
            if fold_surface(surface) not in seen and len(terms) < size:
                seen.add(fold_surface(surface))
                terms.append(surface)
    rng = random.Random(7)
    while len(terms) < size:
        words = [rng.choice(MODIFIERS), rng.choice(HEADS)]
        if rng.random() < 0.6:
            words.append(rng.choice(QUALIFIERS))
        surface = " ".join(words)
        if fold_surface(surface) not in seen:
            seen.add(fold_surface(surface))
            terms.append(surface)
    return terms


def dense_text(terms: list[str], megabytes: float) -> str:
    """Sentences of filler words with a dictionary term every five words or so."""
    rng = random.Random(11)
    parts: list[str] = []
    size = 0
    target = int(megabytes * 2**20)
    latin = [t for t in terms if t.isascii()]
    while size < target:
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 7))]
        words.insert(rng.randint(0, len(words)), rng.choice(latin))
        sentence = " ".join(words).capitalize() + ". "
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)[:target]


def labelled_text(megabytes: float) -> str:
    """The shipped units' labelled example texts (invoices, orders, letters in six
    languages), repeated to ``megabytes``."""
    texts = [
        json.loads(line)["text"]
        for path in sorted((ROOT / "units").glob("*.annotated.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    block = "\n\n".join(texts) + "\n\n"
    return (block * (int(megabytes * 2**20 / len(block)) + 1))[: int(megabytes * 2**20)]


def write_tsv(terms: list[str], path: Path) -> None:
    rows = ["# name: bench12k", "term\tcanonical\tcategory"]
    rows += [f"{t}\t{t}\tbenchmark" for t in terms]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def best_of(repeats: int, work) -> float:  # noqa: ANN001  # a zero-argument callable
    """The fastest of ``repeats`` timings (the least disturbed by other work on the machine)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def token_counts(term_set) -> tuple[int, int]:  # noqa: ANN001  # a TermSet
    from aau.engines import EngineConfig
    from aau.engines.local import TransformersEngine

    engine = TransformersEngine(EngineConfig(term_merging=True))
    engine.load()
    view, _ = engine.term_view(term_set)
    plain = merged = 0
    for path in sorted((ROOT / "examples" / "docs").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        plain += len(engine.tokenizer(text, add_special_tokens=False)["input_ids"])
        merged += len(view.encode(text))
    engine.close()
    return plain, merged


def merged_view_seconds(term_set) -> float:  # noqa: ANN001  # a TermSet
    from aau.engines import EngineConfig
    from aau.engines.local import TransformersEngine

    engine = TransformersEngine(EngineConfig(term_merging=True))
    engine.load()
    started = time.perf_counter()
    engine.term_view(term_set)
    seconds = time.perf_counter() - started
    engine.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--terms", type=int, default=12_000)
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--regex-mb", type=float, default=0.25)
    args = parser.parse_args()

    terms = dictionary_of(args.terms)
    text = dense_text(terms, args.mb)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench12k.tsv"
        write_tsv(terms, path)
        dictionary = load_dictionary(path)
        started = time.perf_counter()
        matcher = TermMatcher([dictionary])
        build_s = time.perf_counter() - started

        hits = len(matcher.find(text))
        scan_s = best_of(3, lambda: matcher.find(text))
        folded = fold_text(text)
        spans_s = best_of(3, lambda: matcher.spans(folded))
        # pyahocorasick alone on the matcher's automaton: every occurrence walked and counted,
        # none checked or chosen. The ceiling of any matcher built on it (iter_long: one match
        # per position, but it misses terms, pyahocorasick issue 133).
        automaton = matcher._automaton
        walk_s = best_of(3, lambda: sum(1 for _ in automaton.iter(folded)))
        walk_long_s = best_of(3, lambda: sum(1 for _ in automaton.iter_long(folded)))
        prefix = text[: int(args.regex_mb * 2**20)]
        alternation = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
        regex = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)
        regex_hits = sum(1 for _ in regex.finditer(prefix))
        regex_s = best_of(1, lambda: sum(1 for _ in regex.finditer(prefix)))
        prefix_s = best_of(3, lambda: matcher.find(prefix))
        prefix_hits = len(matcher.find(prefix))

        store = TermStore(Path(tmp) / "store", shipped=[])
        store.create_tenant("bench")
        probe = text[:2000]
        started = time.perf_counter()
        store.add("bench", [path])
        store.term_set("bench").find(probe)
        upload_s = time.perf_counter() - started
        view_s = merged_view_seconds(store.term_set("bench"))

    labelled = labelled_text(args.mb)
    labelled_hits = len(matcher.find(labelled))
    labelled_s = best_of(3, lambda: matcher.find(labelled))
    shipped = TermStore(Path(tempfile.gettempdir()) / "aau-bench-none").term_set(None)
    plain_tokens, merged_tokens = token_counts(shipped)

    megabytes = len(text.encode("utf-8")) / 2**20
    prefix_mb = len(prefix.encode("utf-8")) / 2**20
    figures = {
        "scan_mb_s": round(megabytes / scan_s, 1),
        "regex_ratio": round((prefix_mb / prefix_s) / (prefix_mb / regex_s), 1),
        "upload_s": round(upload_s, 3),
        "merged_view_s": round(view_s, 3),
        "regex_mb_s": round(prefix_mb / regex_s, 2),
        "spans_mb_s": round(len(text.encode("utf-8")) / 2**20 / spans_s, 1),
        "automaton_iter_mb_s": round(megabytes / walk_s, 1),
        "automaton_iter_long_mb_s": round(megabytes / walk_long_s, 1),
        "build_ms": round(build_s * 1000, 1),
        "chars_per_hit": round(len(text) / hits, 1),
        "labelled_mb_s": round(len(labelled.encode("utf-8")) / 2**20 / labelled_s, 1),
        "tokens_plain": plain_tokens,
        "tokens_merged": merged_tokens,
    }
    print(f"dictionary: {len(terms):,} terms; text: {megabytes:.1f} MB, {hits:,} hits")
    print(f"automaton build: {build_s * 1000:.0f} ms")
    print(
        f"scan, whole text: {figures['scan_mb_s']} MB/s with TermHit objects, "
        f"{figures['spans_mb_s']} MB/s as offset arrays (best of 3; a hit every "
        f"{figures['chars_per_hit']} characters)"
    )
    print(f"pyahocorasick alone on the same automaton, nothing checked or kept: "
          f"{figures['automaton_iter_mb_s']} MB/s (iter), "
          f"{figures['automaton_iter_long_mb_s']} MB/s (iter_long)")  # fmt: skip
    print(f"scan, the units' labelled texts repeated to {args.mb:.0f} MB (a hit every "
          f"{len(labelled) / labelled_hits:.0f} characters, mixed scripts): "
          f"{figures['labelled_mb_s']} MB/s")  # fmt: skip
    print(f"scan, first {prefix_mb:.1f} MB: Aho-Corasick {prefix_mb / prefix_s:.1f} MB/s "
          f"({prefix_hits:,} hits), regex {figures['regex_mb_s']} MB/s ({regex_hits:,} hits): "
          f"{figures['regex_ratio']}x")  # fmt: skip
    print(f"upload to active (annotation): {upload_s:.3f} s; merged-token view on the "
          f"default model: {view_s:.3f} s more")  # fmt: skip
    print(f"example documents: {plain_tokens} tokens plain, {merged_tokens} with merged terms "
          f"({1 - merged_tokens / plain_tokens:.1%} fewer)")  # fmt: skip
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
