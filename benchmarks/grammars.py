"""Validation throughput of the field-format grammars: values per second, parse + normalize.

    python benchmarks/grammars.py [--values 3000] [--repeat 3]

For each shipped grammar it generates a few thousand realistic values (seeded, so every run
sees the same ones), warms the parser up on a handful, then times ``Grammar.normalize`` over all
of them: the full ANTLR parse plus the normalizing visitor, no result caching. It also times
``Grammar.parse`` alone. The best of ``--repeat`` runs counts. The last line printed is one JSON
object: ``validations_per_s`` (the slowest grammar's parse + normalize rate) and
``constrained_over_plain`` (the cost of constrained decoding against plain decoding, null until
the engine integration provides :func:`measure_constrained_decoding`).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from aau.grammars import load_grammar

Sample = tuple[str, dict[str, Any]]  # a value and the normalize() options a caller would pass


def _amount(rng: random.Random, group: str, decimal: str) -> str:
    size = rng.choice([(1, 999), (1000, 999_999), (10**6, 10**8)])
    whole = f"{rng.randint(*size):,}"
    cents = f"{decimal}{rng.randint(0, 99):02d}" if rng.random() < 0.8 else ""
    return whole.replace(",", group) + cents


def money_samples(rng: random.Random) -> Sample:
    """Amounts as invoices and contracts write them, in a few locales."""
    group, decimal, template = rng.choice(
        [
            (",", ".", "${}"),
            (",", ".", "USD {}"),
            (",", ".", "{} USD"),
            (",", ".", "£{}"),
            (".", ",", "{} €"),
            (".", ",", "EUR {}"),
            (" ", ",", "EUR {}"),
            ("\u00a0", ",", "{}\u00a0€"),
            ("'", ".", "{} CHF"),
            ("'", ".", "CHF {}"),
            (",", ".", "-${}"),
            ("", ".", "{}"),
        ]
    )
    return template.format(_amount(rng, group, decimal)), {"decimal": decimal}


def date_samples(rng: random.Random) -> Sample:
    """Dates in the written forms of English and European documents."""
    day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(1990, 2035)
    names = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ]
    template = rng.choice(
        [
            "{y}-{m:02d}-{d:02d}",
            "{d:02d}/{m:02d}/{y}",
            "{d}.{m}.{y}",
            "{name} {d}, {y}",
            "{d} {name} {y}",
            "{d} {abbr} {y}",
            "{d}-{abbr}-{y}",
            "{abbr}. {d}, {y}",
        ]
    )
    name = names[month - 1]
    value = template.format(y=year, m=month, d=day, name=name, abbr=name[:3])
    return value, {"date_order": "DMY"}


def percentage_samples(rng: random.Random) -> Sample:
    """Rates and shares: 12.5%, 12,5 %, -0.25%, 3 percent."""
    number = rng.choice(
        [str(rng.randint(0, 100)), f"{rng.uniform(0, 100):.1f}", f"{rng.uniform(-5, 5):.2f}"]
    )
    template = rng.choice(["{}%", "{} %", "{}\u00a0%", "{} percent"])
    return template.format(number if rng.random() < 0.5 else number.replace(".", ",")), {}


def clause_samples(rng: random.Random) -> Sample:
    """Clause references from contracts and statutes."""
    path = ".".join(str(rng.randint(1, 30)) for _ in range(rng.randint(1, 3)))
    items = "".join(
        f"({rng.choice(['a', 'b', 'c', 'i', 'ii', 'iii', 'iv', '1', '2'])})"
        for _ in range(rng.choice([0, 0, 1, 2]))
    )
    prefix = rng.choice(["", "", "Section ", "Clause ", "Art. ", "§ ", "Sec. "])
    return prefix + path + items, {}


def currency_samples(rng: random.Random) -> Sample:
    """ISO 4217 codes, weighted towards the common ones."""
    return rng.choice(["EUR", "USD", "GBP", "CHF", "JPY", "CNY", "SEK", "INR", "BRL", "ZAR"]), {}


def iso_date_samples(rng: random.Random) -> Sample:
    """Machine-written dates."""
    return f"{rng.randint(1990, 2035)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", {}


def json_samples(rng: random.Random) -> Sample:
    """Small extraction outputs, as a unit would return them."""
    value = {
        "amount": f"{rng.randint(1, 10**6)}.{rng.randint(0, 99):02d}",
        "currency": rng.choice(["EUR", "USD", "CHF"]),
        "confidence": round(rng.random(), 3),
        "clause": f"{rng.randint(1, 20)}.{rng.randint(1, 9)}",
        "flags": [rng.random() < 0.5, None],
        "span": [rng.randint(0, 900), rng.randint(900, 2000)],
    }
    return json.dumps(value), {}


GENERATORS: dict[str, Callable[[random.Random], Sample]] = {
    "clause_number": clause_samples,
    "currency_code": currency_samples,
    "date": date_samples,
    "iso_date": iso_date_samples,
    "json": json_samples,
    "money_amount": money_samples,
    "percentage": percentage_samples,
}


def measure(name: str, count: int, repeat: int) -> tuple[float, float]:
    """Return (parse + normalize values/s, parse-only values/s) for one grammar."""
    rng = random.Random(f"aau-{name}")
    samples = [GENERATORS[name](rng) for _ in range(count)]
    grammar = load_grammar(name)
    for value, options in samples[:20]:  # warm-up: the ATN simulators fill their DFA caches
        grammar.normalize(value, **options)
    best_full = best_parse = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for value, options in samples:
            grammar.normalize(value, **options)
        best_full = min(best_full, time.perf_counter() - start)
        start = time.perf_counter()
        for value, _ in samples:
            if not grammar.parse(value).ok:
                raise AssertionError(f"{name}: benchmark value {value!r} does not parse")
        best_parse = min(best_parse, time.perf_counter() - start)
    return count / best_full, count / best_parse


def measure_constrained_decoding(requests: int = 8, rounds: int = 2) -> float | None:
    """Decoding tokens/s of a grammar-constrained field over a plain string field.

    Same engine (default model), same prompts, same batch: the only difference is the field's
    schema — ``pattern`` derived from the ``date`` grammar vs a plain ``maxLength`` string.
    """
    import asyncio

    import aau
    from aau.engines.base import Generation, GenerationRequest
    from aau.engines.local import TransformersEngine

    regex = load_grammar("date").regex
    if regex is None:
        return None
    field = {"type": "string"}
    constrained = {"type": "object", "properties": {"date": {**field, "pattern": f"^({regex})$"}},
                   "required": ["date"], "additionalProperties": False}  # fmt: skip
    plain = {"type": "object", "properties": {"date": {**field, "maxLength": 24}},
             "required": ["date"], "additionalProperties": False}  # fmt: skip
    engine = TransformersEngine(aau.EngineConfig(prefix_cache_mb=0))
    engine.load()

    def tokens_per_s(schema: dict[str, Any]) -> float:
        batch = [
            GenerationRequest(
                messages=[
                    {
                        "role": "user",
                        "content": f"Write the date of delivery {i}, as it "
                        "appears on a letter (for example 4 March 2024).",
                    }
                ],
                schema=schema,
                max_new_tokens=24,
            )  # fmt: skip
            for i in range(requests)
        ]
        began = time.perf_counter()
        results = asyncio.run(engine.generate(batch))
        seconds = time.perf_counter() - began
        assert all(isinstance(r, Generation) for r in results), results
        return sum(r.generated_tokens for r in results) / seconds

    try:
        tokens_per_s(plain)  # warm both compiled schemas and the model
        tokens_per_s(constrained)
        plain_rate = max(tokens_per_s(plain) for _ in range(rounds))
        constrained_rate = max(tokens_per_s(constrained) for _ in range(rounds))
    finally:
        engine.close()
    print(f"decoding: grammar-constrained field {constrained_rate:.0f} tok/s, plain string field "
          f"{plain_rate:.0f} tok/s: {constrained_rate / plain_rate:.2f}")  # fmt: skip
    return round(constrained_rate / plain_rate, 3)


def main() -> None:
    """Print one line per grammar, then the summary JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--values", type=int, default=3000, help="values per grammar")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per grammar (best counts)"
    )
    args = parser.parse_args()
    rates = {}
    print(
        f"{'grammar':<15} {'parse+normalize/s':>18} {'parse only/s':>14}   ({args.values} values)"
    )
    for name in sorted(GENERATORS):
        full, parse_only = measure(name, args.values, args.repeat)
        rates[name] = full
        print(f"{name:<15} {full:>18,.0f} {parse_only:>14,.0f}")
    slowest = min(rates, key=rates.__getitem__)
    print(f"slowest: {slowest}")
    print(
        json.dumps(
            {
                "validations_per_s": round(rates[slowest], 1),
                "constrained_over_plain": measure_constrained_decoding(),
            }
        )
    )


if __name__ == "__main__":
    main()
