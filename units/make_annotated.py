"""Deterministic generator of the annotated examples the shipped units' CRF paths learn from.

Run ``python units/make_annotated.py`` from the repository root to (re)write
``units/<unit>.annotated.jsonl`` for ``extract_price``, ``extract_date`` and ``extract_quantity``;
``--check`` only compares the files with what the generator produces and exits 1 on a difference;
``--stats`` prints how many candidate examples were dropped, and why. The output depends on
nothing but ``SEED``, this file and what it renders and reads with: Babel's CLDR data and the
readers of ``aau.values`` and ``aau.fallbacks.normalize`` (a change there that changes a reading
changes the files, and ``--check`` says so). One ``random.Random(SEED + unit index)`` drives
every choice, so the files are byte-for-byte reproducible.

How the texts are made. Each unit draws from two families of templates. A template is a string
with slots; a slot is filled with text (names, companies, items, reference numbers) or with a
value that is labelled.

- *Documents* (about a third): invoices, reminders, receipts, e-mails, contract clauses, quotes,
  order confirmations and table rows in English, German, French and Spanish, with amounts as
  ``1,250.00``, ``1.250,00``, ``1 250,00``, ``1'250.00``, ``1250.00``, currencies as code,
  symbol or word before or after, dates as ``2024-03-14``, ``14.03.2024`` (numeric ones only
  when unambiguous), ``March 14, 2024``, ``14 de marzo de 2024`` and the like, quantities of
  goods, hours and energy.
- *World* frames (the rest): short lines in 40 CLDR locales (English in US, UK, India,
  Australia, Canada; German, French, Spanish, Italian, Portuguese, Dutch, Swedish, Danish,
  Norwegian, Finnish, Polish, Czech, Russian, Ukrainian, Turkish, Chinese, Japanese, Korean,
  Hindi, Arabic, Thai, Greek, Hebrew, Indonesian, Vietnamese, Romanian, Hungarian) with the cue
  words of a small per-language phrase table ("total", "subtotal", "invoice", "date", "weight",
  "temperature"...), bare values, and short English sentences around values in any locale's
  format. Values are rendered by Babel:

  - prices in 60 ISO-4217 currencies (the locale's own most often, then USD, EUR and the rest),
    the amount with the locale's separators and grouping (Indian lakh grouping; native
    Arabic-Indic, Devanagari and Thai digits in some texts) and the currency's minor digits, CLDR
    compact scale words ("75 million", "1,2 Mio.", "3,5 млн", "7500万", "12 लाख"), number words
    for small amounts in the languages the values layer reads them in; the marker as ISO code,
    CLDR symbol (``R$``, ``zł``, ``₩``, ``￥``), CLDR display name in its plural form ("dollari
    statunitensi", "złotego polskiego") or a usual local abbreviation ("руб.", "円", "TL",
    "Rs."), before or after the amount as the locale's currency pattern puts it. A marker that
    alone names several currencies ("$" for CAD, "¥" for CNY, "kr") is written as the code: its
    gold would be a guess;
  - dates in the locales' CLDR long, medium and full formats and month-name patterns, genitive
    and abbreviated months included ("5 марта 2024 г.", "2024. márc. 5.", "5 thg 3, 2024"),
    East Asian forms (``2024年3月14日``, ``2024년 3월 14일``) and ISO ``2024-03-14``; numeric
    forms only where they are unambiguous (year first, or a day above 12), never two-digit years;
  - quantities of physical units from ``aau.values.CANONICAL_UNITS`` (mass, length, area,
    volume, temperature, speed, data sizes and rates, energy, power, frequency, pressure,
    durations, electricity, light) written as symbols (``kg``, ``m²``, ``°C``, ``km/h``,
    ``Mbit/s``) or as CLDR unit names in long, short and narrow length ("2,5 kilogramos",
    "12 км/ч", "3.5 キログラム"), and counts of goods in local words ("Stück", "szt.", "шт.",
    "adet", "個"); integers, grouped thousands, decimals, fractions (``½``, ``3 1/2``), negative
    temperatures.

Noise, seeded like everything else: no space between a number and its marker or unit, no-break
and narrow no-break spaces, stray spaces around a decimal comma, OCR confusions (``l``/``1``,
``O``/``0``, ``m``/``rn``...) in the cue words (never inside a labelled value), and upper- and
lower-case variants of cue words, codes and unit names.

Distractors surround the value: invoice, order and customer numbers, phone numbers, IBAN-like
references, times, percentages, other dates (order dates, earlier letters), other amounts
(subtotals, VAT, shipping, unit prices) and quantities next to prices. Only the value the unit
should return is labelled: for ``extract_price`` the total or amount due (or the one price a
text states); for ``extract_date`` the document's main date (invoice, due, signature, event or
delivery date), not the earlier dates it refers to; for ``extract_quantity`` the ordered,
delivered, billed or measured quantity, not prices, dates or pack counts. About 15% of the
texts state no value at all and have no spans.

Gold outputs are derivable: a unit's answer is its field normalizers
(``aau.fallbacks.normalize``) applied to the labelled spans. For every labelled span the
generator checks that both the ``aau.values`` reader (``read_number``, ``read_currency``,
``read_date``, ``read_unit``) and the shipped normalizer read the value it meant to write, and
that every span starts and ends on a token boundary of the CRF tokenizer; a candidate example
that fails either is dropped and drawn again (``--stats`` counts them by reason: they are the
values layer's gaps). Whole amounts and quantities are also read with ``read_money`` and
``read_quantity``; a difference there is counted, not dropped, since the gold comes from the
spans.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

# The script runs as `python units/make_annotated.py`; its normalizers and tokenizer live in the
# package at the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from babel.dates import format_date  # noqa: E402
from babel.numbers import (  # noqa: E402
    format_compact_decimal,
    format_currency,
    format_decimal,
    get_currency_name,
    get_currency_precision,
    get_decimal_symbol,
    get_territory_currencies,
)
from babel.units import format_unit  # noqa: E402

from aau import values  # noqa: E402
from aau.fallbacks.crf_features import tokenize  # noqa: E402
from aau.fallbacks.normalize import NORMALIZERS  # noqa: E402

SEED = 20240314
COUNT = 600
NO_VALUE_SHARE = 0.15
DOCUMENT_SHARE = 0.35  # the rest of the texts are world frames
UNITS = ("extract_price", "extract_date", "extract_quantity")
HERE = Path(__file__).resolve().parent

CRF_BLOCKS: dict[str, dict[str, Any]] = {
    "extract_price": {
        "kind": "crf",
        "labels": ["AMOUNT", "CURRENCY"],
        "fields": {
            "amount": {"label": "AMOUNT", "normalize": "amount"},
            "currency": {"label": "CURRENCY", "normalize": "currency"},
        },
        "examples": "extract_price.annotated.jsonl",
        "model": "extract_price.crf",
    },
    "extract_date": {
        "kind": "crf",
        "labels": ["DATE"],
        "fields": {"date": {"label": "DATE", "normalize": "date"}},
        "examples": "extract_date.annotated.jsonl",
        "model": "extract_date.crf",
    },
    "extract_quantity": {
        "kind": "crf",
        "labels": ["VALUE", "UNIT"],
        "fields": {
            "value": {"label": "VALUE", "normalize": "number"},
            "unit": {"label": "UNIT", "normalize": "unit"},
        },
        "examples": "extract_quantity.annotated.jsonl",
        "model": "extract_quantity.crf",
    },
}
"""The ``kind: crf`` declaration each unit pairs with its examples (``--print-blocks``)."""

Part = str | tuple[str, str]  # plain text, or (text, label)
Slot = str | list[Part]

# -- checking what is written ----------------------------------------------------------------


class Rejected(Exception):  # noqa: N818  # a control-flow signal, not an error
    """A candidate example the generator drops: a labelled value does not read as meant."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


# What each field normalizer's value is read with in the values layer.
_READERS: dict[str, Callable[[str], Any]] = {
    "amount": values.read_number,
    "number": values.read_number,
    "currency": values.read_currency,
    "date": values.read_date,
    "unit": values.read_unit,
}

STATS: Counter[str] = Counter()
"""Dropped candidates and reader differences by reason, for the last ``generate`` call."""
SAMPLES: dict[str, list[str]] = {}


def _same(got: Any, wanted: Any) -> bool:
    if isinstance(wanted, int | float) and not isinstance(wanted, bool):
        return isinstance(got, int | float) and math.isclose(got, wanted, rel_tol=1e-9)
    return got == wanted


def expect(kind: str, text: str, wanted: Any) -> None:
    """Reject unless the values reader and the ``kind`` normalizer both read ``text`` as ``wanted``.

    The values layer is asked first, so a reason names the layer the gap is in.
    """
    for source, reader in (("values", _READERS[kind]), ("normalizer", NORMALIZERS.get(kind))):
        got = reader(text)
        if not _same(got, wanted):
            raise Rejected(f"{kind} ({source})", f"{text!r} -> {got!r}, meant {wanted!r}")


def observe(reason: str, text: str, got: Any, wanted: Any) -> None:
    """Count (not drop) a whole-value reading that differs from the spans' one."""
    if not _same(got, wanted):
        _count(reason, f"{text!r} -> {got!r}, meant {wanted!r}")


def _count(reason: str, detail: str) -> None:
    STATS[reason] += 1
    samples = SAMPLES.setdefault(reason, [])
    if len(samples) < 40 and detail not in samples:
        samples.append(detail)


# -- fillers ---------------------------------------------------------------------------------

NAMES = ["Anna", "Marc", "Sofia", "Jonas", "Lena", "Pierre", "Carmen", "David", "Yuki", "Priya",
         "Tom", "Ines", "Lukas", "Chloé", "Mateo", "Grace"]  # fmt: skip
COMPANIES = ["Acme GmbH", "Nordlicht AG", "Blue River Ltd", "Durand SARL", "Helvetia Tools AG",
             "Iberia Logística SL", "Kite Systems Inc.", "Oakline Supplies",
             "Meridian Foods BV"]  # fmt: skip
CITIES = ["Berlin", "Lyon", "Madrid", "Zurich", "Leeds", "Hamburg", "Porto", "Vienna", "Austin"]
ITEMS = ["A4 paper", "steel coils", "office chairs", "printer toner", "LED panels",
         "safety gloves", "copper wire", "espresso beans", "cable ties", "pallet wrap"]  # fmt: skip
ITEMS_DE = ["Kopierpapier", "Stahlrohre", "Bürostühle", "Schutzhandschuhe", "Kabelbinder"]
ITEMS_FR = ["papier A4", "câble cuivre", "chaises de bureau", "gants de protection", "café"]
ITEMS_ES = ["papel A4", "tubos de acero", "sillas de oficina", "guantes", "café en grano"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]  # fmt: skip
MONTHS_DE = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
             "Oktober", "November", "Dezember"]  # fmt: skip
MONTHS_FR = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
             "septembre", "octobre", "novembre", "décembre"]  # fmt: skip
MONTHS_ES = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
             "septiembre", "octubre", "noviembre", "diciembre"]  # fmt: skip

# ISO code -> markers as written, and whether each goes before the amount.
MARKERS: dict[str, list[tuple[str, str]]] = {
    "EUR": [("EUR", "pre"), ("EUR", "post"), ("€", "pre"), ("€", "post"), ("euros", "post"),
            ("Euro", "post")],
    "USD": [("USD", "pre"), ("USD", "post"), ("$", "pre"), ("US$", "pre"), ("dollars", "post")],
    "GBP": [("GBP", "pre"), ("£", "pre"), ("pounds", "post")],
    "CHF": [("CHF", "pre"), ("CHF", "post"), ("Fr.", "pre")],
    "JPY": [("JPY", "pre"), ("¥", "pre"), ("yen", "post")],
    "INR": [("INR", "pre"), ("₹", "pre"), ("Rs.", "pre")],
}  # fmt: skip


class Doc:
    """Per-text random choices that stay consistent within one document."""

    def __init__(self, rng: random.Random, lang: str = "en") -> None:
        self.rng = rng
        self.lang = lang
        iso_weights = {"en": [4, 4, 2, 1, 1, 1], "de": [8, 0, 0, 2, 0, 0]}
        weights = iso_weights.get(lang, [1, 0, 0, 0, 0, 0])
        self.iso = rng.choices(list(MARKERS), weights=weights)[0]
        markers = MARKERS[self.iso]
        if lang != "en":  # Continental documents write the marker after the amount.
            markers = [m for m in markers if m[1] == "post" or m[0] == "CHF"] or markers
        self.marker, self.where = rng.choice(markers)
        self.style = self._style()
        # Some documents never name their currency; their answer's currency is null.
        self.has_marker = rng.random() > 0.08

    def _style(self) -> str:
        if self.iso == "CHF":
            return self.rng.choice(["ch", "ch0", "en"])
        if self.lang == "de" or self.lang == "es":
            return self.rng.choice(["de", "de", "de0"])
        if self.lang == "fr":
            return self.rng.choice(["fr", "fr0", "fr_nbsp", "fr_nnbsp", "de"])
        return self.rng.choice(["en", "en", "en0", "plain"])

    def value(self, low: float, high: float) -> float:
        """A money value; whole amounts are common in real documents."""
        whole = self.iso == "JPY" or self.rng.random() < 0.35
        amount = math.exp(self.rng.uniform(math.log(low), math.log(high)))  # log-uniform
        return float(round(amount)) if whole else round(amount, 2)

    def amount_text(self, value: float, *, labelled: bool = False) -> str:
        style = self.style
        if style.endswith("0") and value != int(value):
            style = style[:-1]
        if self.iso == "JPY":
            style = "en0"
        en = f"{value:,.2f}" if not style.endswith("0") else f"{int(value):,}"
        table = {
            "en": en, "en0": en, "plain": f"{value:.2f}",
            "de": en.translate(str.maketrans(",.", ".,")),
            "de0": en.translate(str.maketrans(",.", ".,")),
            "fr": en.replace(",", " ").replace(".", ","),
            "fr0": en.replace(",", " "),
            "fr_nbsp": en.replace(",", "\u00a0").replace(".", ","),
            "fr_nnbsp": en.replace(",", "\u202f").replace(".", ","),
            "ch": en.replace(",", "'"),
            "ch0": en.replace(",", "'"),
        }  # fmt: skip
        text = table[style]
        if labelled:
            expect("amount", text, value)
        return text

    def money(self, value: float, *, labelled: bool = False) -> list[Part]:
        """An amount with its currency marker, labelled when it is the unit's answer."""
        text = self.amount_text(value, labelled=labelled)
        amount: Part = (text, "AMOUNT") if labelled else text
        if not self.has_marker:
            return [amount]
        if labelled:
            expect("currency", self.marker, self.iso)
        marker: Part = (self.marker, "CURRENCY") if labelled else self.marker
        tight = self.marker in {"$", "€", "£", "¥", "₹", "US$"} and self.rng.random() < 0.8
        if self.where == "pre":
            return [marker, "" if tight else " ", amount]
        return [amount, "" if self.marker == "€" and self.rng.random() < 0.3 else " ", marker]


# -- shared distractors ----------------------------------------------------------------------


def invoice_no(rng: random.Random) -> str:
    year = rng.choice([2023, 2024, 2025])
    return rng.choice([f"INV-{year}-{rng.randint(1, 999):03d}", f"{year}-{rng.randint(100, 999)}",
                       f"RE-{year}/{rng.randint(1, 9999):04d}", f"No. {rng.randint(1000, 99999)}",
                       f"#{rng.randint(10000, 999999)}"])  # fmt: skip


def phone(rng: random.Random) -> str:
    pairs = " ".join(str(rng.randint(10, 99)) for _ in range(4))
    return rng.choice([f"+49 30 {rng.randint(1000000, 9999999)}", f"+33 1 {pairs}",
                       f"(555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                       f"0{rng.randint(100, 999)}/{rng.randint(100000, 999999)}"])  # fmt: skip


def pct(rng: random.Random) -> str:
    return str(rng.choice([5, 7, 10, 16, 19, 20, 21]))


def clock(rng: random.Random) -> str:
    return rng.choice([f"{rng.randint(8, 18)}:{rng.choice(['00', '15', '30', '45'])}",
                       f"{rng.randint(1, 11)} {rng.choice(['am', 'pm'])}"])  # fmt: skip


def a_date(rng: random.Random) -> dt.date:
    return dt.date(rng.randint(2022, 2026), rng.randint(1, 12), rng.randint(1, 28))


def date_text(rng: random.Random, day: dt.date, lang: str = "en", *, check: bool = False) -> str:
    """``day`` written as a document in ``lang`` would write it (read back when ``check``)."""
    d, m, y = day.day, day.month, day.year
    numeric = [f"{y}-{m:02d}-{d:02d}", f"{y}/{m:02d}/{d:02d}"]
    if d > 12:  # day first is only unambiguous when the day cannot be a month
        numeric += [f"{d:02d}.{m:02d}.{y}", f"{d}.{m}.{y}", f"{d:02d}/{m:02d}/{y}"]
    suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
    words = {
        "en": [f"{MONTHS_EN[m - 1]} {d}, {y}", f"{d} {MONTHS_EN[m - 1]} {y}",
               f"{MONTHS_EN[m - 1][:3]} {d}, {y}", f"{d} {MONTHS_EN[m - 1][:3]} {y}",
               f"{d}{suffix} {MONTHS_EN[m - 1]} {y}", f"{MONTHS_EN[m - 1]} {d}{suffix}, {y}",
               f"{d}{suffix} of {MONTHS_EN[m - 1]}, {y}",
               f"{d} {MONTHS_EN[m - 1][:3].upper()} {y}"],
        "de": [f"{d}. {MONTHS_DE[m - 1]} {y}"],
        "fr": [f"{'1er' if d == 1 else d} {MONTHS_FR[m - 1]} {y}"],
        "es": [f"{d} de {MONTHS_ES[m - 1]} de {y}"],
    }  # fmt: skip
    pool = numeric + words[lang] * (2 if lang != "en" else 1)
    text = rng.choice(pool)
    if check:
        expect("date", text, day.isoformat())
    return text


# -- rendering -------------------------------------------------------------------------------

_SLOT = re.compile(r"\{(\w+)\}")


def render(template: str, slots: dict[str, Slot]) -> dict[str, Any]:
    """Fill ``template``'s ``{slot}``s; labelled parts become spans with their surface value."""
    text, spans = "", []
    for index, piece in enumerate(_SLOT.split(template)):
        parts: list[Part] = [piece] if index % 2 == 0 else _as_parts(slots[piece])
        for part in parts:
            if isinstance(part, tuple):
                surface, label = part
                spans.append({"start": len(text), "end": len(text) + len(surface),
                              "label": label, "value": surface})  # fmt: skip
                text += surface
            else:
                text += part
    return {"text": text, "spans": spans}


def _as_parts(slot: Slot) -> list[Part]:
    return [slot] if isinstance(slot, str) else slot


# Sentences around the main one, as e-mails and letters have; they hold distractors only.
FILLERS: dict[str, list[str]] = {
    "en": ["Please quote reference {inv} in all correspondence.", "For questions call {phone}.",
           "Payment terms: {days} days net.", "Thank you for your business!",
           "Kind regards,\n{name}", "Your customer number is {acct}.",
           "Early payment discount: {pct}% within {days} days.",
           "Our {city} office is open {weekday} to Friday until {time}."],
    "de": ["Bei Fragen erreichen Sie uns unter {phone}.", "Zahlungsziel: {days} Tage netto.",
           "Bitte geben Sie die Rechnungsnummer {inv} an.", "Mit freundlichen Grüßen\n{name}"],
    "fr": ["Pour toute question, appelez le {phone}.", "Référence client : {acct}.",
           "Cordialement,\n{name}"],
    "es": ["Para cualquier consulta llame al {phone}.", "Referencia de cliente: {acct}.",
           "Saludos,\n{name}"],
}  # fmt: skip
EXTRA_FILLERS: dict[str, list[str]] = {  # with a date, for units whose value is not a date
    "en": ["Delivery is planned for {date}.", "Our office is closed on {date}."],
    "de": ["Lieferung voraussichtlich am {date}."],
    "fr": ["Livraison prévue le {date}."],
    "es": ["Entrega prevista el {date}."],
}  # fmt: skip


def with_fillers(rng: random.Random, template: str, lang: str, *, dates: bool) -> str:
    """``template`` with up to two filler sentences before or after it; a sign-off goes last."""
    pool = FILLERS[lang] + (EXTRA_FILLERS[lang] if dates else [])
    chosen = rng.sample(pool, rng.choice([0, 0, 1, 1, 2]))
    closing = [f for f in chosen if f.endswith("{name}")]
    for filler in chosen:
        if filler in closing:
            continue
        joint = rng.choice([" ", "\n"])
        template = (
            f"{filler}{joint}{template}" if rng.random() < 0.4 else f"{template}{joint}{filler}"
        )
    for filler in closing:
        template = f"{template}\n{filler}"
    return template


# -- extract_price ---------------------------------------------------------------------------

PRICE_TEMPLATES: list[tuple[str, str]] = [
    ("en", "Invoice {inv} dated {date}. Subtotal: {sub}. VAT {pct}%: {vat}. Total due: {total} "
           "within {days} days."),
    ("en", "Hi {name},\nthanks for your order {inv}. The total comes to {total} including "
           "shipping ({ship}). Questions? Call {phone}.\nBest regards,\n{name2}"),
    ("en", "Clause {k}.{m}: the Supplier shall pay a penalty of {total} for each day of delay, "
           "capped at {pct}% of the contract value."),
    ("en", "Order confirmation {inv}: {q} x {item} at {unit} each. Order total: {total}. "
           "Delivery by {date}."),
    ("en", "The licence fee is {total} per year for up to {q} users."),
    ("en", "Paid {total} by card ending {card} on {date} at {time}. Receipt {inv}."),
    ("en", "Reminder: your outstanding balance of {total} on account {acct} is overdue since "
           "{date}. Please pay within {days} days."),
    ("en", "As requested, our quote for {q} {item} is {total} net, valid until {date}."),
    ("en", "Item | Qty | Price\n{item} | {q} | {unit}\n{item2} | {q2} | {unit2}\n"
           "TOTAL | | {total}"),
    ("en", "All amounts in {cur}. Subtotal {sub_n}, shipping {ship_n}, total payable {total_n}."),
    ("en", "Dear {name}, the annual maintenance fee of {total} for contract {inv} will be "
           "debited on {date}. Contact us at {phone}."),
    ("en", "Amount due: {total}\nDue date: {date}\nCustomer ID: {acct}\nReference: {inv}"),
    ("en", "We have refunded {total} to your card; it should appear within {days} days."),
    ("en", "The repair will cost {total}, parts included; labour estimate {q} hours."),
    ("en", "Fee: {total} ({pct}% discount applied)."),
    ("en", "Please transfer {total} to IBAN {iban} by {date}, quoting {inv}."),
    ("de", "Rechnung Nr. {inv} vom {date}: Zwischensumme {sub}, MwSt. {pct} % {vat}, "
           "Gesamtbetrag {total}, zahlbar bis {date2}."),
    ("de", "Preis: {total} inkl. MwSt., Versand {ship}."),
    ("de", "Sehr geehrte Damen und Herren,\nbitte überweisen Sie den offenen Betrag von {total} "
           "bis zum {date}. Kundennummer {acct}.\nMit freundlichen Grüßen\n{name}"),
    ("fr", "Facture n° {inv} du {date} : montant total à payer {total} (TVA {pct} % incluse)."),
    ("fr", "Bonjour {name}, le devis s'élève à {total} HT pour {q} {item_fr}."),
    ("es", "Factura {inv}: el importe total es de {total}, IVA del {pct}% incluido. "
           "Vencimiento: {date}."),
    ("es", "El precio del servicio es {total} al mes, con {q} usuarios incluidos."),
]  # fmt: skip

# Compositional templates: a lead phrase, the value, a tail; the pools below vary them widely
# so that the model learns the value's form and its nearby cue words, not whole sentences.
# Tails are English; other languages end with "" or ".".
PRICE_TEMPLATES += [(lang, "{lead}{total}{tail}") for lang in ("en", "en", "en", "de", "fr", "es")]
PRICE_LEADS = {
    "en": ["Total", "Total due", "Grand total", "Invoice total", "Amount payable", "Amount due",
           "Balance due", "Price", "Cost", "Fee", "Rate", "Charge", "Sum", "Please remit",
           "You owe us", "We can offer the lot for", "The rent is", "It costs", "Renewal for",
           "Hourly rate", "Subscription", "Net amount", "Your payment of"],
    "de": ["Gesamtbetrag", "Summe", "Gesamtsumme", "Endbetrag", "Preis", "Betrag",
           "Zu zahlen", "Rechnungsbetrag", "Die Miete beträgt"],
    "fr": ["Montant total", "Total TTC", "Net à payer", "Prix", "Nos honoraires s'élèvent à",
           "Le montant s'élève à", "Solde dû"],
    "es": ["Total a pagar", "Importe", "Precio", "Total", "Importe total", "Cuota mensual"],
}  # fmt: skip
PRICE_TAILS = [".", "", " per month.", " per year.", " net.", " excl. VAT.", ", thank you.",
               " by bank transfer.", " (VAT included).", " for {q} items."]  # fmt: skip
LEAD_JOINTS = [": ", " ", ": ", " (incl. tax): ", " (net): ", ":\n"]

PRICE_EMPTY: list[tuple[str, str]] = [
    ("en", "The meeting moved to {weekday}, room {q}."),
    ("en", "Please find attached the signed contract {inv} dated {date}."),
    ("en", "Your order {inv} has shipped; tracking number {acct}. Call {phone} with questions."),
    ("en", "The VAT rate changes to {pct}% from {date}."),
    ("en", "We delivered {q} {item} to the {city} warehouse on {date}."),
    ("de", "Vielen Dank für Ihre Nachricht, wir melden uns bis zum {date}."),
    ("fr", "Merci de confirmer la réception de {q} {item_fr} avant le {date}."),
    ("es", "La reunión será el {date} a las {time}."),
]  # fmt: skip


def _common(rng: random.Random, lang: str) -> dict[str, Slot]:
    item_pool = {"de": ITEMS_DE, "fr": ITEMS_FR, "es": ITEMS_ES}.get(lang, ITEMS)
    return {
        "inv": invoice_no(rng), "name": rng.choice(NAMES), "name2": rng.choice(NAMES),
        "phone": phone(rng), "pct": pct(rng), "time": clock(rng), "city": rng.choice(CITIES),
        "days": str(rng.choice([7, 10, 14, 30, 45, 60])), "k": str(rng.randint(1, 14)),
        "m": str(rng.randint(1, 9)), "q": str(rng.randint(2, 60)), "q2": str(rng.randint(2, 60)),
        "card": f"{rng.randint(0, 9999):04d}", "acct": str(rng.randint(100000, 9999999)),
        "item": rng.choice(ITEMS), "item2": rng.choice(ITEMS), "item_fr": rng.choice(ITEMS_FR),
        "weekday": rng.choice(WEEKDAYS), "date": date_text(rng, a_date(rng), lang),
        "date2": date_text(rng, a_date(rng), lang), "company": rng.choice(COMPANIES),
        "item_local": rng.choice(item_pool),
        "iban": f"DE{rng.randint(10, 99)} "
                + " ".join(str(rng.randint(1000, 9999)) for _ in range(4)),
    }  # fmt: skip


def price_document(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A document-like text: invoice, reminder, e-mail, clause, table row."""
    lang, template = rng.choice(PRICE_EMPTY if empty else PRICE_TEMPLATES)
    doc = Doc(rng, lang)
    slots = _common(rng, lang)
    sub = doc.value(20, 20000)
    vat = (
        round(sub * int(str(slots["pct"])) / 100, 2) if doc.iso != "JPY" else float(round(sub / 10))
    )
    ship = doc.value(3, 60)
    total = round(sub + vat, 2) if "{sub}" in template else doc.value(5, 250000)
    unit, unit2 = doc.value(1, 400), doc.value(1, 400)
    if "{unit2}" in template:  # a table's total is the sum of its lines
        total = round(int(str(slots["q"])) * unit + int(str(slots["q2"])) * unit2, 2)
    elif "{ship}" in template:
        ship = doc.value(3, max(4.0, total / 5))
    lead = rng.choice(PRICE_LEADS[lang])
    joint = " " if lead[-1].islower() and rng.random() < 0.7 else rng.choice(LEAD_JOINTS)
    tail = rng.choice(PRICE_TAILS if lang == "en" else ["", "."])
    slots.update({
        "lead": (lead.upper() if rng.random() < 0.15 else lead) + joint,
        "tail": tail.replace("{q}", str(slots["q"])),
        "sub": doc.money(sub), "vat": doc.money(vat), "ship": doc.money(ship),
        "unit": doc.money(unit), "unit2": doc.money(unit2),
        "sub_n": doc.amount_text(sub), "ship_n": doc.amount_text(ship),
    })  # fmt: skip
    # Labelled slots are filled only where the template has them: only they are read back.
    if "{total}" in template:
        slots["total"] = doc.money(total, labelled=True)
    if "{cur}" in template:
        code = doc.marker if doc.marker.isalpha() and doc.marker.isupper() else doc.iso
        expect("currency", code, doc.iso)
        total_n = doc.amount_text(round(sub + ship, 2), labelled=True)
        slots.update({"cur": [(code, "CURRENCY")], "total_n": [(total_n, "AMOUNT")]})
    return render(with_fillers(rng, template, lang, dates=True), slots)


# -- extract_date ----------------------------------------------------------------------------

DATE_TEMPLATES: list[tuple[str, str]] = [
    ("en", "Invoice date: {main}. Payment within {days} days."),
    ("en", "Invoice {inv} dated {main}, for your order of {other}."),
    ("en", "Signed in {city} on {main} by both parties."),
    ("en", "The webinar takes place on {main} at {time}."),
    ("en", "Due date: {main}. Amount due: {money}."),
    ("en", "Hi {name}, following our call of {other}, I confirm the delivery date of {main}. "
           "Ref. {inv}."),
    ("en", "This Agreement is made on {main} between {company} and {company2} and replaces the "
           "agreement of {other}."),
    ("en", "Order {inv} placed on {main}; estimated delivery in {days} working days."),
    ("en", "Your appointment is confirmed for {weekday}, {main} at {time}. Call {phone} to "
           "reschedule."),
    ("en", "Last updated {other}. Effective date: {main}."),
    ("en", "Dear {name},\nyour payment of {money} is due on {main}. Invoice {inv}, customer "
           "{acct}.\nKind regards"),
    ("en", "Date: {main}\nFrom: {company}\nTo: {company2}\nSubject: order {inv}"),
    ("de", "Rechnung vom {main}, Kundennummer {acct}, Betrag {money}."),
    ("de", "Der Vertrag wurde am {main} in {city} unterzeichnet."),
    ("de", "Liefertermin: {main} (Ihre Bestellung vom {other}, Tel. {phone})."),
    ("fr", "Fait à {city}, le {main}."),
    ("fr", "La livraison est prévue le {main} (commande n° {acct} du {other})."),
    ("es", "Fecha de emisión: {main}. Nº de pedido {acct}."),
    ("es", "La reunión se celebrará el {main} a las {time}."),
]  # fmt: skip

DATE_TEMPLATES += [(lang, "{lead}{main}{tail}") for lang in ("en", "en", "en", "de", "fr", "es")]
DATE_LEADS = {
    "en": ["Date", "Dated", "Issued", "Issued on", "Valid from", "Executed on", "Effective",
           "Please reply by", "Deadline", "Delivery date", "Renews on", "As of", "Signed",
           "Invoice date", "Due", "Starts on", "The contract was executed on the",
           "Meeting on", "Payment received on"],
    "de": ["Datum", "Stand", "Lieferdatum", "Fällig am", "Gültig ab", "{city}, den"],
    "fr": ["Date", "Le", "{city}, le", "Échéance", "Valable à partir du"],
    "es": ["Fecha", "{city},", "Vencimiento", "Válido desde el"],
}  # fmt: skip
DATE_TAILS = ["", ".", " at the latest.", " by the accounts team.", " until further notice.",
              " (see attachment).", "?", " at {time}."]  # fmt: skip

DATE_EMPTY: list[tuple[str, str]] = [
    ("en", "Please call me back when you can."),
    ("en", "Payment within {days} days of receipt of invoice {inv}."),
    ("en", "Version {version} is out; see ticket #{acct} for the changes."),
    ("en", "Room {room}, extension {ext}, {city} office."),
    ("en", "Qty {q} boxes, total {money}."),
    ("en", "FY{year} results were strong, revenue up {pct}%."),
    ("de", "Bitte rufen Sie uns unter {phone} an."),
    ("fr", "Merci pour votre commande n° {acct}."),
]  # fmt: skip


def date_document(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A document-like text with its main date and earlier ones."""
    lang, template = rng.choice(DATE_EMPTY if empty else DATE_TEMPLATES)
    doc = Doc(rng, lang)
    slots = _common(rng, lang)
    main = a_date(rng)
    other = main - dt.timedelta(days=rng.randint(3, 400))
    lead = rng.choice(DATE_LEADS[lang]).replace("{city}", str(slots["city"]))
    joint = " " if lead[-1].islower() or lead[-1] == "," else rng.choice([": ", " ", ":\n"])
    tail = rng.choice(DATE_TAILS if lang == "en" else ["", "."])
    slots.update({
        "lead": (lead.upper() if rng.random() < 0.15 else lead) + joint,
        "tail": tail.replace("{time}", str(slots["time"])),
        "other": date_text(rng, other, lang),
        "money": doc.money(doc.value(10, 9000)), "company2": rng.choice(COMPANIES),
        "version": f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "room": f"{rng.randint(1, 6)}.{rng.randint(10, 40)}", "ext": str(rng.randint(2000, 2099)),
        "year": str(rng.randint(2019, 2026)),
    })  # fmt: skip
    if "{main}" in template:
        slots["main"] = [(date_text(rng, main, lang, check=True), "DATE")]
    return render(with_fillers(rng, template, lang, dates=False), slots)


# -- extract_quantity ------------------------------------------------------------------------

# English items with the units they are ordered in; other languages draw from their own lists.
ITEM_UNITS = {
    "A4 paper": ["boxes", "cartons", "pallets"], "steel coils": ["t", "tonnes", "kg"],
    "office chairs": ["pcs", "pieces", "units"], "printer toner": ["cartons", "pcs", "units"],
    "LED panels": ["pcs", "units", "boxes"], "safety gloves": ["boxes", "bags", "pcs"],
    "copper wire": ["m", "meters", "kg"], "espresso beans": ["kg", "kgs", "bags", "lbs"],
    "cable ties": ["bags", "boxes"], "cleaning fluid": ["liters", "litres", "bottles"],
    "floor tiles": ["m²", "boxes", "pallets"], "cement": ["t", "bags", "kg"],
}  # fmt: skip
UNIT_WORDS = {
    "de": ["Stück", "kg", "Kisten", "Paletten", "Liter", "Kartons", "Stk."],
    "fr": ["pièces", "kg", "palettes", "litres", "cartons"],
    "es": ["unidades", "kg", "cajas", "palés", "litros"],
}  # fmt: skip
# What each unit word above means, in the canonical names of ``aau.values.read_unit``.
UNIT_MEANING = {
    "boxes": "box", "cartons": "carton", "pallets": "pallet", "t": "t", "tonnes": "t",
    "kg": "kg", "kgs": "kg", "pcs": "piece", "pieces": "piece", "units": "unit", "m": "m",
    "meters": "m", "bags": "bag", "lbs": "lb", "liters": "l", "litres": "l",
    "bottles": "bottle", "m²": "m2", "hours": "h", "hrs": "h", "h": "h", "kWh": "kWh",
    "MWh": "MWh", "Stück": "piece", "Kisten": "case", "Paletten": "pallet", "Liter": "l",
    "Kartons": "carton", "Stk.": "piece", "pièces": "piece", "palettes": "pallet",
    "unidades": "unit", "cajas": "box", "palés": "pallet", "litros": "l",
}  # fmt: skip

QUANTITY_TEMPLATES: list[tuple[str, str]] = [
    ("en", "Please deliver {qty} of {item} to the {city} office."),
    ("en", "Shipment of {qty} {item}, invoice total {money}."),
    ("en", "Consulting: {hours} at {money} per hour."),
    ("en", "Order {inv}: {qty} {item} at {money} each, delivery by {date}."),
    ("en", "Hello {name}, can you send us {qty} of {item} by {weekday}? Our PO number is {acct}."),
    ("en", "Your consumption this month was {energy} (meter no. {acct}), billed at {money}."),
    ("en", "Pos. {k} | {item} | Qty {qty} | {money}"),
    ("en", "Qty: {bare}\nItem: {item}\nUnit price: {money}"),
    ("en", "{bare} x {item} at {money} each, order {inv}."),
    ("en", "We confirm receipt of {qty} {item} on {date}; {pct}% were damaged."),
    ("en", "Delivery note {inv}: {qty} {item} in {pallets} parcels, {date}."),
    ("en", "We need {qty} of {item} by {date}; budget {money}."),
    ("en", "Labour: {hours} on site in {city}, travel {days} days, rate {money}."),
    ("de", "Bitte liefern Sie {qty} {item_de} bis zum {date}."),
    ("de", "Menge: {qty}, Preis {money}, Lieferung KW {k}."),
    ("fr", "Livraison de {qty} de {item_fr} le {date}."),
    ("fr", "Commande n° {acct} : {qty} {item_fr}, total {money}."),
    ("es", "Pedido de {qty} de {item_es}, entrega el {date}."),
    ("es", "Hemos recibido {qty} {item_es}; factura {inv} por {money}."),
]  # fmt: skip

QUANTITY_TEMPLATES += [(lang, "{lead}{qty}{tail}") for lang in ("en", "en", "en", "de", "fr", "es")]
QUANTITY_LEADS = {
    "en": ["Quantity:", "Qty", "Qty:", "Order", "Please ship", "Send", "Deliver", "We need",
           "Add", "Received:", "Total weight", "I'd like to order", "Delivered", "Ordered:"],
    "de": ["Menge:", "Wir bestellen", "Bitte senden Sie", "Geliefert:", "Bestellmenge"],
    "fr": ["Quantité :", "Nous avons besoin de", "Merci de livrer", "Commande :"],
    "es": ["Cantidad:", "Necesitamos", "Enviar", "Pedido:"],
}  # fmt: skip
QUANTITY_TAILS = ["", ".", " by next Friday.", " of {item} to site B.", " for the {city} plant.",
                  " as soon as possible.", " per week.", " (see order {inv})."]  # fmt: skip

QUANTITY_EMPTY: list[tuple[str, str]] = [
    ("en", "Thanks for your message, see you next week."),
    ("en", "Invoice {inv}: total {money}, due {date}."),
    ("en", "Please call {phone} to arrange the delivery."),
    ("en", "A discount of {pct}% applies from {date}."),
    ("en", "The price is {money} per kg, excluding VAT."),
    ("de", "Vielen Dank für Ihre Bestellung {inv}."),
    ("fr", "Le rendez-vous est fixé au {date} à {time}."),
    ("es", "El precio es de {money} por unidad."),
]  # fmt: skip


def _number_text(rng: random.Random, lang: str) -> tuple[str, float]:
    kind = rng.random()
    if kind < 0.55:
        value = float(rng.randint(1, 250))
        text = str(int(value))
    elif kind < 0.8:
        value = float(rng.randint(1, 60) * 100 + rng.choice([0, 0, 50]))
        grouped = f"{int(value):,}"
        sep = {"de": ".", "es": ".", "fr": rng.choice([" ", "\u202f"])}.get(lang, ",")
        text = grouped.replace(",", sep) if value >= 1000 else grouped
    else:
        value = rng.randint(1, 400) / rng.choice([2, 4])
        text = f"{value:g}".replace(".", "," if lang != "en" else ".")
    expect("number", text, value)
    return text, value


def quantity(rng: random.Random, lang: str, units: list[str]) -> list[Part]:
    text, _ = _number_text(rng, lang)
    unit = rng.choice(units)
    # "5kg" is written tight as often as not; words keep their space.
    gap = "" if unit in {"kg", "kgs", "t", "m", "lbs", "kWh", "m²"} and rng.random() < 0.4 else " "
    expect("unit", unit, UNIT_MEANING[unit])
    written, meant = text + gap + unit, (values.read_number(text), UNIT_MEANING[unit])
    observe("read_quantity differs", written, values.read_quantity(written), meant)
    return [(text, "VALUE"), gap, (unit, "UNIT")]


def quantity_document(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A document-like text: order, delivery note, consumption bill, table row."""
    lang, template = rng.choice(QUANTITY_EMPTY if empty else QUANTITY_TEMPLATES)
    doc = Doc(rng, lang)
    slots = _common(rng, lang)
    item = rng.choice(list(ITEM_UNITS))
    tail = rng.choice(QUANTITY_TAILS if lang == "en" else ["", "."])
    for name in ("item", "city", "inv"):
        tail = tail.replace("{" + name + "}", item if name == "item" else str(slots[name]))
    slots.update({
        "lead": rng.choice(QUANTITY_LEADS[lang]) + " ", "tail": tail,
        "item": item, "money": doc.money(doc.value(2, 9000)),
        "pallets": str(rng.randint(1, 9)), "item_de": rng.choice(ITEMS_DE),
        "item_es": rng.choice(ITEMS_ES),
    })  # fmt: skip
    labelled: dict[str, Callable[[], list[Part]]] = {
        "qty": lambda: quantity(rng, lang, UNIT_WORDS.get(lang, ITEM_UNITS[item])),
        "hours": lambda: quantity(rng, lang, ["hours", "hrs", "h"]),
        "energy": lambda: quantity(rng, lang, ["kWh", "MWh"]),
        "bare": lambda: [(_number_text(rng, lang)[0], "VALUE")],
    }
    for name, make in labelled.items():
        if "{" + name + "}" in template:
            slots[name] = make()
    return render(with_fillers(rng, template, lang, dates=True), slots)


# -- the world's formats ---------------------------------------------------------------------

# CLDR locale -> weight. The territory names the local currency; the language the phrases.
WORLD_LOCALES: dict[str, int] = {
    "en_US": 6, "en_GB": 3, "en_IN": 2, "en_AU": 1, "en_CA": 1, "de_DE": 3, "de_CH": 1,
    "de_AT": 1, "fr_FR": 3, "fr_CA": 1, "fr_CH": 1, "es_ES": 2, "es_MX": 2, "it_IT": 2,
    "pt_BR": 2, "pt_PT": 1, "nl_NL": 2, "sv_SE": 1, "da_DK": 1, "nb_NO": 1, "fi_FI": 1,
    "pl_PL": 2, "cs_CZ": 1, "ru_RU": 2, "uk_UA": 1, "tr_TR": 2, "zh_CN": 2, "zh_TW": 1,
    "ja_JP": 2, "ko_KR": 2, "hi_IN": 1, "ar_EG": 1, "ar_SA": 1, "th_TH": 1, "el_GR": 1,
    "he_IL": 1, "id_ID": 1, "vi_VN": 1, "ro_RO": 1, "hu_HU": 1,
}  # fmt: skip

# Cue words per language, "|"-separated: enough for a line to read as that language's document.
# total/sub: the amount due and a distractor amount; date/other: the main date and an earlier
# one; the rest lead a measured quantity of that kind ("qty" for any other).
PHRASES: dict[str, dict[str, str]] = {
    "en": {"total": "Total|Total due|Amount due|Grand total|Price|Balance due",
           "sub": "Subtotal|Shipping|VAT|Deposit", "ref": "Invoice|Order|Ref.", "tel": "Tel.",
           "date": "Date|Invoice date|Due date|Signed on|Delivery date",
           "other": "Order of|Last updated|Your letter of", "qty": "Quantity|Measured|Reading",
           "weight": "Weight|Net weight|Gross weight", "temp": "Temperature|Set point",
           "length": "Length|Distance|Width", "speed": "Speed|Max. speed", "data": "Size|Storage",
           "time": "Duration|Run time", "volume": "Volume|Capacity", "area": "Area|Floor area",
           "energy": "Consumption|Energy", "power": "Power|Rated power", "pressure": "Pressure",
           "freq": "Frequency"},
    "de": {"total": "Gesamtbetrag|Summe|Endbetrag|Preis|Zu zahlen",
           "sub": "Zwischensumme|Versand|MwSt.", "ref": "Rechnung|Bestellung|Auftrag",
           "tel": "Tel.", "date": "Datum|Rechnungsdatum|Fällig am|Lieferdatum",
           "other": "Bestellung vom|Ihr Schreiben vom", "qty": "Menge|Messwert|Wert",
           "weight": "Gewicht|Nettogewicht", "temp": "Temperatur", "length": "Länge|Entfernung",
           "speed": "Geschwindigkeit", "data": "Größe|Speicher", "time": "Dauer|Laufzeit",
           "volume": "Volumen|Inhalt", "area": "Fläche|Wohnfläche", "energy": "Verbrauch",
           "power": "Leistung", "pressure": "Druck", "freq": "Frequenz"},
    "fr": {"total": "Total|Montant total|Net à payer|Prix|Total TTC",
           "sub": "Sous-total|Livraison|TVA", "ref": "Facture|Commande|Réf.", "tel": "Tél.",
           "date": "Date|Date de facture|Échéance|Fait le", "other": "Commande du|Courrier du",
           "qty": "Quantité|Valeur mesurée", "weight": "Poids|Poids net", "temp": "Température",
           "length": "Longueur|Distance", "speed": "Vitesse", "data": "Taille|Stockage",
           "time": "Durée", "volume": "Volume|Contenance", "area": "Surface|Superficie",
           "energy": "Consommation", "power": "Puissance", "pressure": "Pression",
           "freq": "Fréquence"},
    "es": {"total": "Total|Importe total|Total a pagar|Precio", "sub": "Subtotal|Envío|IVA",
           "ref": "Factura|Pedido|Ref.", "tel": "Tel.",
           "date": "Fecha|Fecha de factura|Vencimiento|Firmado el",
           "other": "Pedido del|Su carta del", "qty": "Cantidad|Valor medido",
           "weight": "Peso|Peso neto", "temp": "Temperatura", "length": "Longitud|Distancia",
           "speed": "Velocidad", "data": "Tamaño|Almacenamiento", "time": "Duración",
           "volume": "Volumen|Capacidad", "area": "Superficie", "energy": "Consumo",
           "power": "Potencia", "pressure": "Presión", "freq": "Frecuencia"},
    "it": {"total": "Totale|Importo totale|Totale da pagare|Prezzo",
           "sub": "Subtotale|Spedizione|IVA", "ref": "Fattura|Ordine|Rif.", "tel": "Tel.",
           "date": "Data|Data fattura|Scadenza|Firmato il", "other": "Ordine del|Lettera del",
           "qty": "Quantità|Valore misurato", "weight": "Peso|Peso netto", "temp": "Temperatura",
           "length": "Lunghezza|Distanza", "speed": "Velocità", "data": "Dimensione|Memoria",
           "time": "Durata", "volume": "Volume|Capacità", "area": "Superficie",
           "energy": "Consumo", "power": "Potenza", "pressure": "Pressione", "freq": "Frequenza"},
    "pt": {"total": "Total|Valor total|Total a pagar|Preço", "sub": "Subtotal|Frete|Impostos",
           "ref": "Fatura|Pedido|Ref.", "tel": "Tel.",
           "date": "Data|Data da fatura|Vencimento|Assinado em",
           "other": "Pedido de|Carta de", "qty": "Quantidade|Valor medido",
           "weight": "Peso|Peso líquido", "temp": "Temperatura",
           "length": "Comprimento|Distância", "speed": "Velocidade",
           "data": "Tamanho|Armazenamento", "time": "Duração", "volume": "Volume|Capacidade",
           "area": "Área", "energy": "Consumo", "power": "Potência", "pressure": "Pressão",
           "freq": "Frequência"},
    "nl": {"total": "Totaal|Totaalbedrag|Te betalen|Prijs", "sub": "Subtotaal|Verzending|BTW",
           "ref": "Factuur|Bestelling|Ref.", "tel": "Tel.",
           "date": "Datum|Factuurdatum|Vervaldatum|Getekend op",
           "other": "Bestelling van|Uw brief van", "qty": "Aantal|Hoeveelheid|Meetwaarde",
           "weight": "Gewicht|Nettogewicht", "temp": "Temperatuur", "length": "Lengte|Afstand",
           "speed": "Snelheid", "data": "Grootte|Opslag", "time": "Duur",
           "volume": "Volume|Inhoud", "area": "Oppervlakte", "energy": "Verbruik",
           "power": "Vermogen", "pressure": "Druk", "freq": "Frequentie"},
    "sv": {"total": "Totalt|Att betala|Summa|Pris", "sub": "Delsumma|Frakt|Moms",
           "ref": "Faktura|Order", "tel": "Tel.", "date": "Datum|Fakturadatum|Förfallodatum",
           "other": "Beställning från|Brev från", "qty": "Antal|Mängd|Mätvärde",
           "weight": "Vikt|Nettovikt", "temp": "Temperatur", "length": "Längd|Avstånd",
           "speed": "Hastighet", "data": "Storlek", "time": "Tid", "volume": "Volym",
           "area": "Yta", "energy": "Förbrukning", "power": "Effekt", "pressure": "Tryck",
           "freq": "Frekvens"},
    "da": {"total": "I alt|At betale|Pris", "sub": "Subtotal|Fragt|Moms", "ref": "Faktura|Ordre",
           "tel": "Tlf.", "date": "Dato|Fakturadato|Forfaldsdato", "other": "Ordre af|Brev af",
           "qty": "Antal|Mængde", "weight": "Vægt", "temp": "Temperatur",
           "length": "Længde|Afstand", "speed": "Hastighed", "data": "Størrelse",
           "time": "Varighed", "volume": "Volumen", "area": "Areal", "energy": "Forbrug",
           "power": "Effekt", "pressure": "Tryk", "freq": "Frekvens"},
    "nb": {"total": "Totalt|Å betale|Sum|Pris", "sub": "Delsum|Frakt|MVA", "ref": "Faktura|Ordre",
           "tel": "Tlf.", "date": "Dato|Fakturadato|Forfallsdato",
           "other": "Bestilling av|Brev av", "qty": "Antall|Mengde", "weight": "Vekt",
           "temp": "Temperatur", "length": "Lengde|Avstand", "speed": "Hastighet",
           "data": "Størrelse", "time": "Varighet", "volume": "Volum", "area": "Areal",
           "energy": "Forbruk", "power": "Effekt", "pressure": "Trykk", "freq": "Frekvens"},
    "fi": {"total": "Yhteensä|Maksettava|Hinta|Loppusumma", "sub": "Välisumma|Toimitus|ALV",
           "ref": "Lasku|Tilaus", "tel": "Puh.", "date": "Päivämäärä|Laskun päiväys|Eräpäivä",
           "other": "Tilaus tehty|Kirje päivätty", "qty": "Määrä", "weight": "Paino",
           "temp": "Lämpötila", "length": "Pituus|Etäisyys", "speed": "Nopeus", "data": "Koko",
           "time": "Kesto", "volume": "Tilavuus", "area": "Pinta-ala", "energy": "Kulutus",
           "power": "Teho", "pressure": "Paine", "freq": "Taajuus"},
    "pl": {"total": "Razem|Do zapłaty|Suma|Cena", "sub": "Suma częściowa|Wysyłka|VAT",
           "ref": "Faktura|Zamówienie", "tel": "Tel.",
           "date": "Data|Data wystawienia|Termin płatności",
           "other": "Zamówienie z dnia|Pismo z dnia", "qty": "Ilość|Wartość",
           "weight": "Waga|Masa netto", "temp": "Temperatura", "length": "Długość|Odległość",
           "speed": "Prędkość", "data": "Rozmiar", "time": "Czas trwania",
           "volume": "Objętość|Pojemność", "area": "Powierzchnia", "energy": "Zużycie",
           "power": "Moc", "pressure": "Ciśnienie", "freq": "Częstotliwość"},
    "cs": {"total": "Celkem|K úhradě|Cena|Celková částka", "sub": "Mezisoučet|Doprava|DPH",
           "ref": "Faktura|Objednávka", "tel": "Tel.",
           "date": "Datum|Datum vystavení|Datum splatnosti",
           "other": "Objednávka ze dne|Dopis ze dne", "qty": "Množství|Hodnota",
           "weight": "Hmotnost", "temp": "Teplota", "length": "Délka|Vzdálenost",
           "speed": "Rychlost", "data": "Velikost", "time": "Doba trvání", "volume": "Objem",
           "area": "Plocha", "energy": "Spotřeba", "power": "Výkon", "pressure": "Tlak",
           "freq": "Frekvence"},
    "ru": {"total": "Итого|К оплате|Сумма|Цена", "sub": "Промежуточный итог|Доставка|НДС",
           "ref": "Счёт|Заказ", "tel": "Тел.", "date": "Дата|Дата счёта|Срок оплаты",
           "other": "Заказ от|Письмо от", "qty": "Количество|Значение",
           "weight": "Вес|Масса нетто", "temp": "Температура", "length": "Длина|Расстояние",
           "speed": "Скорость", "data": "Размер", "time": "Длительность", "volume": "Объём",
           "area": "Площадь", "energy": "Расход", "power": "Мощность", "pressure": "Давление",
           "freq": "Частота"},
    "uk": {"total": "Разом|До сплати|Сума|Ціна", "sub": "Проміжний підсумок|Доставка|ПДВ",
           "ref": "Рахунок|Замовлення", "tel": "Тел.", "date": "Дата|Дата рахунку|Термін оплати",
           "other": "Замовлення від|Лист від", "qty": "Кількість", "weight": "Вага",
           "temp": "Температура", "length": "Довжина|Відстань", "speed": "Швидкість",
           "data": "Розмір", "time": "Тривалість", "volume": "Об'єм", "area": "Площа",
           "energy": "Споживання", "power": "Потужність", "pressure": "Тиск", "freq": "Частота"},
    "tr": {"total": "Toplam|Ödenecek tutar|Fiyat|Genel toplam", "sub": "Ara toplam|Kargo|KDV",
           "ref": "Fatura|Sipariş", "tel": "Tel.", "date": "Tarih|Fatura tarihi|Son ödeme tarihi",
           "other": "Sipariş tarihi|Mektup tarihi", "qty": "Miktar|Değer",
           "weight": "Ağırlık|Net ağırlık", "temp": "Sıcaklık", "length": "Uzunluk|Mesafe",
           "speed": "Hız", "data": "Boyut", "time": "Süre", "volume": "Hacim", "area": "Alan",
           "energy": "Tüketim", "power": "Güç", "pressure": "Basınç", "freq": "Frekans"},
    "zh": {"total": "合计|总计|应付金额|价格", "sub": "小计|运费|税额", "ref": "发票|订单",
           "tel": "电话", "date": "日期|开票日期|到期日", "other": "订单日期|来函日期",
           "qty": "数量|测量值", "weight": "重量|净重", "temp": "温度", "length": "长度|距离",
           "speed": "速度", "data": "大小|存储", "time": "时长", "volume": "容量|体积",
           "area": "面积", "energy": "耗电量", "power": "功率", "pressure": "压力",
           "freq": "频率"},
    "ja": {"total": "合計|請求金額|お支払い金額|価格", "sub": "小計|送料|消費税",
           "ref": "請求書|注文番号", "tel": "電話", "date": "日付|発行日|支払期限",
           "other": "注文日|前回のご連絡", "qty": "数量|測定値", "weight": "重量|正味重量",
           "temp": "温度", "length": "長さ|距離", "speed": "速度", "data": "サイズ|容量",
           "time": "所要時間", "volume": "容積", "area": "面積", "energy": "消費電力量",
           "power": "出力", "pressure": "圧力", "freq": "周波数"},
    "ko": {"total": "합계|총액|결제 금액|가격", "sub": "소계|배송비|부가세", "ref": "청구서|주문",
           "tel": "전화", "date": "날짜|발행일|납기일", "other": "주문일|이전 서신",
           "qty": "수량|측정값", "weight": "무게|순중량", "temp": "온도", "length": "길이|거리",
           "speed": "속도", "data": "크기|용량", "time": "소요 시간", "volume": "부피",
           "area": "면적", "energy": "소비량", "power": "출력", "pressure": "압력",
           "freq": "주파수"},
    "hi": {"total": "कुल|कुल राशि|देय राशि|मूल्य", "sub": "उप-योग|शिपिंग|जीएसटी",
           "ref": "चालान|ऑर्डर", "tel": "फ़ोन", "date": "दिनांक|चालान दिनांक|देय तिथि",
           "other": "ऑर्डर दिनांक|पिछला पत्र", "qty": "मात्रा", "weight": "वज़न",
           "temp": "तापमान", "length": "लंबाई|दूरी", "speed": "गति", "data": "आकार",
           "time": "अवधि", "volume": "आयतन", "area": "क्षेत्रफल", "energy": "खपत",
           "power": "शक्ति", "pressure": "दबाव", "freq": "आवृत्ति"},
    "ar": {"total": "المجموع|الإجمالي|المبلغ المستحق|السعر", "sub": "المجموع الفرعي|الشحن|الضريبة",
           "ref": "فاتورة|طلب", "tel": "هاتف", "date": "التاريخ|تاريخ الفاتورة|تاريخ الاستحقاق",
           "other": "طلب بتاريخ|رسالة بتاريخ", "qty": "الكمية", "weight": "الوزن",
           "temp": "درجة الحرارة", "length": "الطول|المسافة", "speed": "السرعة",
           "data": "الحجم", "time": "المدة", "volume": "السعة", "area": "المساحة",
           "energy": "الاستهلاك", "power": "القدرة", "pressure": "الضغط", "freq": "التردد"},
    "th": {"total": "รวม|ยอดรวม|ยอดชำระ|ราคา", "sub": "ยอดย่อย|ค่าจัดส่ง|ภาษี",
           "ref": "ใบแจ้งหนี้|คำสั่งซื้อ", "tel": "โทร", "date": "วันที่|วันที่ออก|วันครบกำหนด",
           "other": "คำสั่งซื้อวันที่|จดหมายวันที่", "qty": "จำนวน", "weight": "น้ำหนัก",
           "temp": "อุณหภูมิ", "length": "ความยาว|ระยะทาง", "speed": "ความเร็ว",
           "data": "ขนาด", "time": "ระยะเวลา", "volume": "ปริมาตร", "area": "พื้นที่",
           "energy": "การใช้ไฟ", "power": "กำลังไฟ", "pressure": "ความดัน", "freq": "ความถี่"},
    "el": {"total": "Σύνολο|Πληρωτέο|Τιμή", "sub": "Μερικό σύνολο|Μεταφορικά|ΦΠΑ",
           "ref": "Τιμολόγιο|Παραγγελία", "tel": "Τηλ.",
           "date": "Ημερομηνία|Ημερομηνία έκδοσης|Λήξη",
           "other": "Παραγγελία της|Επιστολή της", "qty": "Ποσότητα", "weight": "Βάρος",
           "temp": "Θερμοκρασία", "length": "Μήκος|Απόσταση", "speed": "Ταχύτητα",
           "data": "Μέγεθος", "time": "Διάρκεια", "volume": "Όγκος", "area": "Εμβαδόν",
           "energy": "Κατανάλωση", "power": "Ισχύς", "pressure": "Πίεση", "freq": "Συχνότητα"},
    "he": {"total": "סה״כ|לתשלום|מחיר", "sub": "סכום ביניים|משלוח|מע״מ", "ref": "חשבונית|הזמנה",
           "tel": "טל׳", "date": "תאריך|תאריך חשבונית|מועד תשלום",
           "other": "הזמנה מתאריך|מכתב מתאריך", "qty": "כמות", "weight": "משקל",
           "temp": "טמפרטורה", "length": "אורך|מרחק", "speed": "מהירות", "data": "גודל",
           "time": "משך", "volume": "נפח", "area": "שטח", "energy": "צריכה", "power": "הספק",
           "pressure": "לחץ", "freq": "תדר"},
    "id": {"total": "Total|Jumlah|Total bayar|Harga", "sub": "Subtotal|Ongkos kirim|PPN",
           "ref": "Faktur|Pesanan", "tel": "Telp.", "date": "Tanggal|Tanggal faktur|Jatuh tempo",
           "other": "Pesanan tanggal|Surat tanggal", "qty": "Kuantitas", "weight": "Berat",
           "temp": "Suhu", "length": "Panjang|Jarak", "speed": "Kecepatan", "data": "Ukuran",
           "time": "Durasi", "volume": "Volume", "area": "Luas", "energy": "Konsumsi",
           "power": "Daya", "pressure": "Tekanan", "freq": "Frekuensi"},
    "vi": {"total": "Tổng cộng|Tổng tiền|Thành tiền|Giá", "sub": "Tạm tính|Phí vận chuyển|Thuế",
           "ref": "Hóa đơn|Đơn hàng", "tel": "ĐT", "date": "Ngày|Ngày lập|Hạn thanh toán",
           "other": "Đơn hàng ngày|Thư ngày", "qty": "Số lượng", "weight": "Trọng lượng",
           "temp": "Nhiệt độ", "length": "Chiều dài|Khoảng cách", "speed": "Tốc độ",
           "data": "Dung lượng", "time": "Thời lượng", "volume": "Thể tích",
           "area": "Diện tích", "energy": "Điện năng", "power": "Công suất",
           "pressure": "Áp suất", "freq": "Tần số"},
    "ro": {"total": "Total|Total de plată|Preț", "sub": "Subtotal|Transport|TVA",
           "ref": "Factura|Comanda", "tel": "Tel.", "date": "Data|Data facturii|Scadența",
           "other": "Comanda din|Scrisoarea din", "qty": "Cantitate", "weight": "Greutate",
           "temp": "Temperatură", "length": "Lungime|Distanță", "speed": "Viteză",
           "data": "Dimensiune", "time": "Durată", "volume": "Volum", "area": "Suprafață",
           "energy": "Consum", "power": "Putere", "pressure": "Presiune", "freq": "Frecvență"},
    "hu": {"total": "Összesen|Fizetendő|Ár|Végösszeg", "sub": "Részösszeg|Szállítás|ÁFA",
           "ref": "Számla|Rendelés", "tel": "Tel.",
           "date": "Dátum|Kiállítás dátuma|Fizetési határidő",
           "other": "Rendelés dátuma|Levél dátuma", "qty": "Mennyiség", "weight": "Súly",
           "temp": "Hőmérséklet", "length": "Hossz|Távolság", "speed": "Sebesség",
           "data": "Méret", "time": "Időtartam", "volume": "Térfogat", "area": "Terület",
           "energy": "Fogyasztás", "power": "Teljesítmény", "pressure": "Nyomás",
           "freq": "Frekvencia"},
}  # fmt: skip


_LANGUAGE_STOP = {"zh": "。", "ja": "。"}  # sentence end where it is not "."
_LANGUAGE_COLON = {"zh": "：", "ja": "："}
_BIDI = dict.fromkeys(map(ord, "\u200e\u200f\u061c\u202a\u202b\u202c\u2066\u2067\u2068\u2069"))
_INDIAN = frozenset({"en_IN", "hi_IN"})  # lakh grouping: 12,34,567
# Locales whose own digits some texts use: numbering system and its digits (Babel formats the
# system's separators but leaves the digits Latin).
_NATIVE_DIGITS = {"ar_EG": ("arab", "٠١٢٣٤٥٦٧٨٩"), "ar_SA": ("arab", "٠١٢٣٤٥٦٧٨٩"),
                  "hi_IN": ("deva", "०१२३४५६७८९"), "th_TH": ("thai", "๐๑๒๓๔๕๖๗๘๙")}  # fmt: skip
_SPACES = (" ", "\u00a0", "\u202f")


def joint(left: str, gap: str, right: str) -> str:
    """``gap``, or a space where the CRF tokenizer would join the two sides into one token: it
    splits letters from digits, not one word from the next ("USDtwenty", "½kW")."""
    if gap or not left or not right:
        return gap
    return " " if len(tokenize(left[-1] + right[0])) == 1 else gap


def _lang(locale: str) -> str:
    return locale.split("_")[0]


def _plain(value: Decimal) -> int | float:
    """A value as the readers return it: ``int`` when integral."""
    return int(value) if value == value.to_integral_value() else float(value)


def phrase(rng: random.Random, locale: str, field: str) -> str:
    table = PHRASES[_lang(locale)]
    return rng.choice(table.get(field, table["qty"]).split("|"))


OCR_SWAPS = {"l": "1", "I": "l", "O": "0", "o": "0", "i": "l", "e": "c", "S": "5", "B": "8",
             "m": "rn", "rn": "m", "t": "f", "a": "o", "u": "v"}  # fmt: skip


def ocr(rng: random.Random, text: str) -> str:
    """One OCR confusion in ``text``, never on its last character (a digit there would join the
    number that follows into one token)."""
    spots = [
        (match.start(), seen)
        for seen in OCR_SWAPS
        for match in re.finditer(re.escape(seen), text)
        if match.end() < len(text)
    ]
    if not spots:
        return text
    at, seen = rng.choice(spots)
    return text[:at] + OCR_SWAPS[seen] + text[at + len(seen) :]


def cue(rng: random.Random, locale: str, field: str) -> str:
    """A cue phrase as scanned or typed documents have it: sometimes upper or lower case, now and
    then with an OCR confusion."""
    text = phrase(rng, locale, field)
    roll = rng.random()
    if roll < 0.07:
        text = text.upper()
    elif roll < 0.11:
        text = text.lower()
    return ocr(rng, text) if rng.random() < 0.07 else text


def _separator(rng: random.Random, lang: str) -> str:
    if lang in _LANGUAGE_COLON:
        return rng.choice(["：", "：", ": ", " "])
    return rng.choice([": ", ": ", " ", ":\n", " – "])


def _group_spaces(rng: random.Random, text: str) -> str:
    """Group spaces as other software writes them: plain, no-break or narrow no-break."""
    if rng.random() < 0.35:
        text = re.sub(r"(?<=\d)[ \u00a0\u202f](?=\d)", rng.choice(_SPACES), text)
    return text


def _stray_decimal_space(rng: random.Random, text: str, locale: str) -> str:
    """OCR and hand-typed text put spaces around a decimal comma: ``12 ,50``, ``12, 50``."""
    mark = get_decimal_symbol(locale)
    at = text.rfind(mark)
    if mark not in ",." or at < 0 or rng.random() > 0.05:
        return text
    return text[:at] + rng.choice([" " + mark, mark + " ", " " + mark + " "]) + text[at + 1 :]


def number_text(
    rng: random.Random, value: Decimal, locale: str, decimals: int | None, *, grouped: bool = True,
    native: bool = False,
) -> str:  # fmt: skip
    """``value`` in the locale's digits and separators; ``decimals`` fixed, or up to three."""
    pattern = "#,##,##0" if locale in _INDIAN else "#,##0"
    pattern += ".###" if decimals is None else ("." + "0" * decimals if decimals else "")
    system, digits = _NATIVE_DIGITS[locale] if native else ("latn", "0123456789")
    text = format_decimal(
        value, format=pattern, locale=locale, group_separator=grouped, numbering_system=system
    ).translate(str.maketrans("0123456789", digits))
    return _stray_decimal_space(rng, _group_spaces(rng, text), locale)


# Number words the values layer reads (text2num's languages), for small amounts and quantities.
_WORD_VALUES = (2, 3, 4, 5, 10, 12, 15, 20, 30, 50, 100)
NUMBER_WORDS = {
    "en": "two three four five ten twelve fifteen twenty thirty fifty hundred",
    "de": "zwei drei vier fünf zehn zwölf fünfzehn zwanzig dreißig fünfzig hundert",
    "fr": "deux trois quatre cinq dix douze quinze vingt trente cinquante cent",
    "es": "dos tres cuatro cinco diez doce quince veinte treinta cincuenta cien",
    "it": "due tre quattro cinque dieci dodici quindici venti trenta cinquanta cento",
    "pt": "dois três quatro cinco dez doze quinze vinte trinta cinquenta cem",
    "nl": "twee drie vier vijf tien twaalf vijftien twintig dertig vijftig honderd",
}


def number_words(rng: random.Random, locale: str) -> tuple[str, Decimal] | None:
    words = NUMBER_WORDS.get(_lang(locale))
    if words is None:
        return None
    index = rng.randrange(len(_WORD_VALUES))
    return words.split()[index], Decimal(_WORD_VALUES[index])


# -- world prices ----------------------------------------------------------------------------

WORLD_CURRENCIES = (
    "USD EUR GBP JPY CNY CHF CAD AUD NZD HKD SGD TWD INR PKR LKR BDT NPR KRW RUB UAH PLN CZK HUF "
    "RON BGN RSD TRY SEK NOK DKK ISK BRL MXN ARS CLP COP PEN UYU ZAR NGN KES GHS EGP MAD TND AED "
    "SAR QAR KWD ILS THB VND IDR MYR PHP KZT GEL AMD XOF XAF"
).split()
# Rough units per US dollar, so that amounts are of the size documents show.
_MAGNITUDE = {"JPY": 150, "KRW": 1300, "IDR": 15000, "VND": 24000, "HUF": 350, "CLP": 900,
              "COP": 4000, "INR": 80, "PKR": 280, "LKR": 300, "BDT": 110, "NPR": 130, "RUB": 90,
              "UAH": 40, "THB": 35, "TRY": 30, "PHP": 55, "ISK": 140, "KZT": 450, "NGN": 1500,
              "ARS": 900, "XOF": 600, "XAF": 600, "CZK": 23, "SEK": 10, "NOK": 10, "DKK": 7,
              "MXN": 17, "ZAR": 18, "EGP": 48, "KES": 130, "AMD": 400, "RSD": 110, "TWD": 32,
              "CNY": 7, "HKD": 8, "PLN": 4, "BRL": 5, "RON": 4.6, "UYU": 39, "GHS": 15,
              "MAD": 10, "PEN": 3.7}  # fmt: skip
# Local abbreviations beside CLDR's symbols: (marker, side, gap). Markers that stand for several
# currencies without context ("kr", "Fr.", ":-") are left out: their gold would be a guess.
LOCAL_MARKERS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "JPY": (("円", "post", ""), ("¥", "pre", ""), ("yen", "post", " ")),
    "CNY": (("元", "post", ""), ("RMB", "pre", " "), ("CN¥", "pre", "")),
    "KRW": (("원", "post", ""), ("won", "post", " ")), "RUB": (("руб.", "post", " "),),
    "UAH": (("грн", "post", " "),), "PLN": (("zł", "post", " "), ("PLN", "post", " ")),
    "CZK": (("Kč", "post", " "),), "HUF": (("Ft", "post", " "),), "TRY": (("TL", "post", " "),),
    "INR": (("Rs.", "pre", " "), ("Rs", "pre", " "), ("रु", "pre", " ")),
    "THB": (("บาท", "post", " "),), "BRL": (("R$", "pre", " "), ("reais", "post", " ")),
    "CHF": (("SFr.", "pre", " "),), "ZAR": (("R", "pre", " "),), "MYR": (("RM", "pre", ""),),
    "IDR": (("Rp", "pre", " "),), "VND": (("đ", "post", ""), ("VNĐ", "post", " ")),
    "ILS": (("ש״ח", "post", " "), ("₪", "post", " ")), "BGN": (("лв.", "post", " "),),
    "RON": (("lei", "post", " "),), "MXN": (("MX$", "pre", ""),), "CAD": (("C$", "pre", ""),),
    "AUD": (("A$", "pre", ""),), "HKD": (("HK$", "pre", ""),), "TWD": (("NT$", "pre", ""),),
    "SGD": (("S$", "pre", ""),), "EUR": (("Euro", "post", " "), ("euros", "post", " ")),
    "USD": (("US$", "pre", ""), ("dollars", "post", " ")), "GBP": (("pounds", "post", " "),),
}  # fmt: skip


@cache
def _local_currency(locale: str) -> str:
    return get_territory_currencies(locale.split("_")[1], tender=True)[0]


@cache
def _layout(locale: str, code: str, format_type: str) -> tuple[str, str, str]:
    """(marker, side, gap) of the locale's currency pattern (``1.234,50 €``: "€", "post", " ")."""
    rendered = format_currency(1234.5, code, locale=locale, format_type=format_type)
    rendered = rendered.translate(_BIDI)
    number = re.search(r"\d[\d.,'’\s]*\d", rendered)
    assert number is not None, rendered
    before, after = rendered[: number.start()], rendered[number.end() :]
    if before.strip():
        return before.strip(), "pre", before[len(before.rstrip()) :]
    return after.strip(), "post", after[: len(after) - len(after.lstrip())]


class WorldDoc:
    """One text's locale, currency and way of writing money, kept for all its amounts."""

    def __init__(self, rng: random.Random, locale: str) -> None:
        self.rng, self.locale = rng, locale
        roll = rng.random()
        if roll < 0.5:
            self.code = _local_currency(locale)
        elif roll < 0.74:
            self.code = rng.choice(["USD", "EUR"])
        else:
            self.code = rng.choice(WORLD_CURRENCIES)
        self.decimals = get_currency_precision(self.code)
        self.whole = self.decimals == 0 or rng.random() < 0.35
        self.grouped = rng.random() > 0.12
        self.native = locale in _NATIVE_DIGITS and rng.random() < 0.3
        forms = ["symbol", "symbol", "code", "code", "name"]
        forms += ["local", "local"] if self.code in LOCAL_MARKERS else []
        self.form = rng.choice(forms)
        self.local = rng.choice(LOCAL_MARKERS.get(self.code, (("", "", ""),)))
        self.flip = rng.random() < 0.25  # a code on the other side than the locale's symbol
        self.lower = rng.random() < 0.05  # "eur", "usd"
        self.gap = rng.choices(["as is", " ", "", "\u00a0", "\u202f"], weights=[6, 2, 1.5, 1, 0.5])[
            0
        ]
        # Some documents never name their currency; their answer's currency is null.
        self.has_marker = rng.random() > 0.05
        self.ambiguous: set[str] = set()

    def value(self, low: float = 2, high: float = 20000) -> Decimal:
        """A money value, log-uniform, scaled to the currency's usual magnitude."""
        scale = _MAGNITUDE.get(self.code, 1)
        amount = math.exp(self.rng.uniform(math.log(low), math.log(high))) * scale
        places = 0 if self.whole else self.decimals
        return Decimal(str(round(amount, places))).quantize(Decimal(1).scaleb(-places))

    def marker(self, value: Decimal) -> tuple[str, str, str]:
        """(marker, side, gap) for an amount of ``value``."""
        if self.form == "local":
            marker, side, gap = self.local
        elif self.form == "name":
            _, side, gap = _layout(self.locale, self.code, "name")
            count = _plain(value)
            marker = get_currency_name(self.code, count=count, locale=self.locale)
            marker = marker.translate(_BIDI)
        else:
            marker, side, gap = _layout(self.locale, self.code, "standard")
            if self.form == "code":
                marker = self.code.lower() if self.lower else self.code
                gap = gap or " "
                if self.flip:
                    side = "post" if side == "pre" else "pre"
        if self.gap != "as is":
            gap = self.gap
        candidates = values.currency_codes(marker)
        if (
            self.form != "code"
            and len(candidates) > 1
            and values.read_currency(marker) != self.code
        ):
            # "$" in en_CA, "¥" for yuan, "kr" for any krona: alone, the marker names another
            # currency or none, so the gold would be a guess; such documents write the code.
            self.ambiguous.add(marker)
            self.form = "code"
            return self.marker(value)
        return marker, side, gap

    def amount_text(self, value: Decimal) -> str:
        decimals = 0 if self.whole else self.decimals
        return number_text(self.rng, value, self.locale, decimals, grouped=self.grouped,
                           native=self.native)  # fmt: skip

    def money(
        self, value: Decimal, *, labelled: bool = False, text: str | None = None
    ) -> list[Part]:
        """The amount with its marker; labelled spans are read back first."""
        text = text or self.amount_text(value)
        if labelled:
            expect("amount", text, _plain(value))
        amount: Part = (text, "AMOUNT") if labelled else text
        if not self.has_marker:
            return [amount]
        marker, side, gap = self.marker(value)
        gap = joint(marker, gap, text) if side == "pre" else joint(text, gap, marker)
        if labelled:
            for seen in sorted(self.ambiguous):
                _count("marker written as its code (ambiguous alone)", f"{seen!r} for {self.code}")
            expect("currency", marker, self.code)
            whole = f"{marker}{gap}{text}" if side == "pre" else f"{text}{gap}{marker}"
            observe("read_money differs", whole, values.read_money(whole),
                    (_plain(value), self.code))  # fmt: skip
        label: Part = (marker, "CURRENCY") if labelled else marker
        return [label, gap, amount] if side == "pre" else [amount, gap, label]

    def total(self) -> tuple[Decimal, str]:
        """The labelled amount: digits mostly, a scale word or number words now and then."""
        roll = self.rng.random()
        if roll < 0.1:
            mantissa = Decimal(self.rng.choice(["1.2", "1.5", "2", "2.5", "3.4", "4", "7.5", "12",
                                                "15", "20", "45", "75", "150", "480"]))  # fmt: skip
            value = mantissa.scaleb(self.rng.choice([3, 6, 6, 9]))
            kind = self.rng.choice(["short", "long"])
            text = format_compact_decimal(value, format_type=kind, locale=self.locale,
                                          fraction_digits=1).translate(_BIDI)  # fmt: skip
            return value, text
        if roll < 0.15:
            words = number_words(self.rng, self.locale)
            if words is not None:
                return words[1], words[0]
        value = self.value()
        return value, self.amount_text(value)


def world_date(rng: random.Random, day: dt.date, locale: str, *, check: bool = False) -> str:
    """``day`` in one of the locale's CLDR formats, never ambiguous, never a two-digit year."""
    lang = _lang(locale)
    pool = ["long", "long", "medium", "full", "y-MM-dd"]
    if lang not in ("zh", "ja", "ko", "hu"):  # languages that write the year first
        pool += ["d MMMM y", "d MMM y", "dd.MM.y", "dd/MM/y", "d.M.y", "y/MM/dd"]
    pool += {
        "en": ["MMMM d, y", "MMM d, y", "EEEE, MMMM d, y", "EEE, d MMM y"],
        "zh": ["y年M月d日", "y年MM月dd日", "y年M月d日", "y/MM/dd"],
        "ja": ["y年M月d日", "y年MM月dd日", "y年M月d日", "y/MM/dd"],
        "ko": ["y년 M월 d일", "y년 M월 d일", "y. M. d.", "y.MM.dd"],
    }.get(lang, [])
    text = day.isoformat()
    for _ in range(8):
        rendered = format_date(day, rng.choice(pool), locale=locale)
        if not (lang in ("ar", "he") and rng.random() < 0.25):
            rendered = rendered.translate(_BIDI)  # most copied texts lose the marks
        if _unambiguous(rendered, day):
            text = rendered
            break
    roll = rng.random()
    if roll < 0.05:
        text = text.upper()
    elif roll < 0.08:
        text = text.replace(" ", "\u00a0")
    if check:
        expect("date", text, day.isoformat())
    return text


def _unambiguous(text: str, day: dt.date) -> bool:
    """Whether a day-first reader gets ``day`` back: a four-digit year, and for a date of
    numbers only, the year first or a day above 12."""
    if str(day.year) not in text:
        return False
    if any(c.isalpha() for c in text):
        return True
    first = re.search(r"\d+", text)
    return first is not None and (len(first.group()) == 4 or day.day > 12)


def world_day(rng: random.Random) -> dt.date:
    """A main date: mostly recent years, some older."""
    year = rng.randint(2015, 2030) if rng.random() < 0.9 else rng.randint(1990, 2014)
    return dt.date(year, rng.randint(1, 12), rng.randint(1, 28))


# -- world quantities ------------------------------------------------------------------------

# Kind of quantity -> canonical symbols of ``aau.values.CANONICAL_UNITS`` (and a few compounds
# the values layer reads part by part), with the kind's weight among the texts.
QUANTITY_KINDS: dict[str, tuple[float, tuple[str, ...]]] = {
    "weight": (3, ("kg", "kg", "g", "mg", "t", "lb", "oz", "µg")),
    "length": (3, ("m", "km", "cm", "mm", "mi", "ft", "in", "yd", "µm", "nm")),
    "area": (1.5, ("m2", "m2", "km2", "ha", "acre", "ft2", "cm2")),
    "volume": (2, ("l", "l", "ml", "cl", "dl", "hl", "m3", "gal", "fl_oz", "cm3")),
    "temp": (2, ("°C", "°C", "°F", "K")),
    "speed": (1.5, ("km/h", "km/h", "m/s", "mph", "kn")),
    "data": (2, ("GB", "MB", "kB", "TB", "B", "Mbit", "Gbit", "Mbit/s", "MB/s")),
    "energy": (1, ("kWh", "MWh", "J", "kJ", "kcal", "cal")),
    "power": (1, ("W", "kW", "MW", "hp")),
    "freq": (0.7, ("Hz", "kHz", "MHz", "GHz")),
    "pressure": (0.7, ("bar", "Pa", "hPa", "kPa", "psi", "mbar", "atm", "mmHg")),
    "time": (1.5, ("s", "ms", "min", "h", "d", "week", "month", "year")),
    "qty": (0.8, ("A", "mA", "V", "lm", "lx", "ppm", "N", "N·m", "l/100km", "mpg")),
    "count": (3, ()),
}  # fmt: skip
# How symbols are written besides the canonical spelling.
SYMBOL_FORMS = {
    "m2": ("m²", "m²", "m2", "sqm"), "km2": ("km²", "km2"), "cm2": ("cm²",),
    "ft2": ("sq ft", "ft²"),
    "m3": ("m³", "m3", "cbm"), "cm3": ("cm³", "cc"), "fl_oz": ("fl oz",), "µm": ("µm", "μm"),
    "µg": ("µg", "mcg"), "l": ("l", "L", "ltr"), "ml": ("ml", "mL"), "N·m": ("N·m", "Nm"),
    "°C": ("°C", "°C", "℃", "º C"), "°F": ("°F", "℉"), "kn": ("kn", "knots"),
    "h": ("h", "hrs", "Std."), "min": ("min", "mins"), "s": ("s", "sec"), "d": ("d", "days"),
    "week": ("weeks", "wks"), "month": ("months",), "year": ("years", "yrs"),
    "km/h": ("km/h", "kph", "kmh"), "kWh": ("kWh", "KWH"), "kB": ("kB", "KB"),
}  # fmt: skip
# Counted goods in local words: "word:canonical" (the canonical names of ``read_unit``).
COUNT_WORDS = {
    "en": "pcs:piece|pieces:piece|boxes:box|pallets:pallet|units:unit|bottles:bottle|rolls:roll|"
          "sets:set|pairs:pair|cartons:carton|bags:bag|crates:crate|sheets:sheet|drums:drum",
    "de": "Stück:piece|Stk.:piece|Paletten:pallet|Flaschen:bottle|Rollen:roll|Paar:pair|"
          "Kisten:case|Säcke:bag|Dosen:can",
    "fr": "pièces:piece|palettes:pallet|bouteilles:bottle|rouleaux:roll|paires:pair|boîtes:box|"
          "sacs:bag",
    "es": "unidades:unit|piezas:piece|cajas:box|botellas:bottle|rollos:roll|pares:pair|sacos:bag",
    "it": "pezzi:piece|scatole:box|bottiglie:bottle|rotoli:roll|paia:pair|bancali:pallet",
    "pt": "peças:piece|caixas:box|unidades:unit|garrafas:bottle|pares:pair|sacos:bag",
    "nl": "stuks:piece|flessen:bottle|rollen:roll|paar:pair|zakken:bag",
    "sv": "st.:piece|stycken:piece", "pl": "szt.:piece|szt:piece", "ru": "шт.:piece|штук:piece",
    "uk": "шт.:piece", "tr": "adet:piece", "zh": "个:piece|件:piece", "ja": "個:piece|件:piece",
    "ko": "개:piece", "cs": "ks:piece", "hu": "db:piece", "fi": "kpl:piece",
}  # fmt: skip


def _quantity_number(
    rng: random.Random, locale: str, kind: str, symbol: str
) -> tuple[str, Decimal]:
    """A quantity's number as written in ``locale``, with its value."""
    roll = rng.random()
    if kind == "temp":
        low, high = {"°C": (-30, 45), "°F": (-10, 110), "K": (250, 400)}[symbol]
        value = Decimal(rng.randint(low, high)) + (Decimal("0.5") if rng.random() < 0.25 else 0)
        return number_text(rng, value, locale, None), value
    if kind != "count" and roll < 0.06:
        whole = rng.randint(1, 9)
        text, value = rng.choice([
            (f"{whole}½", Decimal(whole) + Decimal("0.5")), ("½", Decimal("0.5")),
            ("¾", Decimal("0.75")), (f"{whole} 1/2", Decimal(whole) + Decimal("0.5")),
            ("1/4", Decimal("0.25")), (f"{whole} 3/4", Decimal(whole) + Decimal("0.75")),
        ])  # fmt: skip
        return text, value
    if roll < 0.09:
        words = number_words(rng, locale)
        if words is not None:
            return words
    if roll < 0.55 or kind == "count" and roll < 0.8:
        value = Decimal(rng.randint(1, 999))
    elif roll < 0.7 or kind == "count":
        value = Decimal(rng.randint(1, 60) * 100 + rng.choice([0, 0, 50, 25]))
    else:
        value = (Decimal(rng.randint(1, 9999)) / rng.choice([10, 100, 4, 2])).normalize()
        value = value.quantize(Decimal(1)) if value == value.to_integral_value() else value
    native = locale in _NATIVE_DIGITS and rng.random() < 0.2
    return number_text(rng, value, locale, None, grouped=rng.random() > 0.15, native=native), value


def _cldr_unit(
    value: Decimal, cldr_id: str, length: str, locale: str
) -> tuple[str, str, str] | None:
    """(unit text, side, gap) of CLDR's rendering of ``value`` in ``cldr_id``; None when the
    locale writes the unit around the number."""
    try:
        rendered = format_unit(value, cldr_id, length=length, locale=locale)
    except (KeyError, ValueError):  # no such unit in this locale's data
        return None
    rendered = rendered.translate(_BIDI)
    number = format_decimal(value, locale=locale)
    at = rendered.find(number)
    if at < 0:
        return None
    before, after = rendered[:at], rendered[at + len(number) :]
    if before.strip() and after.strip():
        return None
    if before.strip():
        return before.strip(), "pre", before[len(before.rstrip()) :]
    return after.strip(), "post", after[: len(after) - len(after.lstrip())]


def world_quantity(
    rng: random.Random,
    locale: str,
    kind: str,
    *,
    labelled: bool = False,
    symbols_only: bool = False,
) -> list[Part]:
    """A quantity of ``kind`` as ``locale`` writes it, read back when labelled."""
    lang = _lang(locale)
    if kind == "count":
        word, meant = rng.choice(COUNT_WORDS.get(lang, COUNT_WORDS["en"]).split("|")).split(":")
        text, value = _quantity_number(rng, locale, kind, "")
        unit, side, gap = word, "post", " " if lang not in ("zh", "ja", "ko") else ""
    else:
        meant = rng.choice(QUANTITY_KINDS[kind][1])
        text, value = _quantity_number(rng, locale, kind, meant)
        ids = values.CANONICAL_UNITS.get(meant, ("", ()))[1]
        rendered = None
        if ids and not symbols_only and rng.random() < 0.55:
            length = rng.choice(["long", "long", "short", "narrow"])
            rendered = _cldr_unit(value, ids[0], length, locale)
        if rendered is None:
            unit = rng.choice(SYMBOL_FORMS.get(meant, (meant,)))
            side = "post"
            gap = rng.choices([" ", "", "\u00a0", "\u202f"], weights=[6, 3, 1, 0.6])[0]
        else:
            unit, side, gap = rendered
        roll = rng.random()
        if roll < 0.04:
            unit = unit.upper()
        elif roll < 0.07:
            gap = ""
    gap = joint(unit, gap, text) if side == "pre" else joint(text, gap, unit)
    if labelled:
        expect("number", text, _plain(value))
        expect("unit", unit, meant)
        whole = f"{unit}{gap}{text}" if side == "pre" else f"{text}{gap}{unit}"
        observe("read_quantity differs", whole, values.read_quantity(whole), (_plain(value), meant))
    number: Part = (text, "VALUE") if labelled else text
    marker: Part = (unit, "UNIT") if labelled else unit
    return [marker, gap, number] if side == "pre" else [number, gap, marker]


# -- world frames ----------------------------------------------------------------------------

# Lines in the locale's language: {lead} is the labelled value's cue, {sep} a colon or space,
# {stop} a sentence end; the other slots are distractors in the locale's formats.
PRICE_FRAMES = [
    "{lead}{sep}{total}{end}", "{lead}{sep}{total}{end}", "{total}",
    "{ref} {inv}{stop}{sub_lead}{sep}{sub}{stop}{lead}{sep}{total}{end}",
    "{ref} {inv}{stop}{date_lead}{sep}{date}{stop}{lead}{sep}{total}{end}",
    "{lead}{sep}{total} ({sub_lead} {sub}){end}", "{lead}{sep}{total}{stop}{tel} {phone}",
    "{sub_lead}{sep}{sub}\n{lead}{sep}{total}", "{qty_lead}{sep}{qty}{stop}{lead}{sep}{total}{end}",
]  # fmt: skip
PRICE_FRAMES_EN = [
    "Please pay {total} by {date}.", "The price is {total}, {sub_lead} {sub} extra.",
    "Total amount payable: {total}.", "We received your payment of {total}, thank you.",
    "It costs {total} per month.", "Quote {inv}: {total} all inclusive.",
    "Your balance is {total}.",
    "{total} was charged to your card on {date}.",
]  # fmt: skip
PRICE_EMPTY_FRAMES = [
    "{ref} {inv}{stop}{date_lead}{sep}{date}{end}", "{ref} {inv}{stop}{tel} {phone}",
    "{qty_lead}{sep}{qty}{end}", "{date_lead}{sep}{date}{stop}{tel} {phone}",
    "{sub_lead}{sep}{pct} %{end}",
]  # fmt: skip
DATE_FRAMES = [
    "{lead}{sep}{main}{end}", "{lead}{sep}{main}{end}", "{main}",
    "{ref} {inv}{stop}{lead}{sep}{main}{end}", "{other_lead} {other}{stop}{lead}{sep}{main}{end}",
    "{lead}{sep}{main}{stop}{total_lead}{sep}{money}{end}", "{lead}{sep}{main}{stop}{tel} {phone}",
    "{ref} {inv} ({other_lead} {other}){stop}{lead}{sep}{main}{end}",
]  # fmt: skip
DATE_FRAMES_EN = [
    "The contract was signed on {main}.", "Please reply by {main}.",
    "Delivery is scheduled for {main} at {time}.",
    "We refer to your order of {other}; the invoice date is {main}.",
    "Meeting on {main}, room {room}.", "Valid until {main}.", "Issued {main} in {city}.",
]  # fmt: skip
DATE_EMPTY_FRAMES = [
    "{ref} {inv}{stop}{total_lead}{sep}{money}{end}", "{tel} {phone}{stop}{ref} {inv}",
    "{qty_lead}{sep}{qty}{end}", "{total_lead}{sep}{money}{end}",
]  # fmt: skip
QUANTITY_FRAMES = [
    "{lead}{sep}{qty}{end}", "{lead}{sep}{qty}{end}", "{qty}",
    "{ref} {inv}{stop}{lead}{sep}{qty}{end}", "{lead}{sep}{qty}{stop}{total_lead}{sep}{money}{end}",
    "{date_lead}{sep}{date}{stop}{lead}{sep}{qty}{end}",
    "{lead}{sep}{qty} ({sub_lead} {money}){end}",
]  # fmt: skip
QUANTITY_FRAMES_EN = {
    "weight": "The parcel weighs {qty}.|Max. load {qty} per shelf.",
    "length": "The cable is {qty} long.|Distance to the site: {qty}.",
    "area": "The flat has {qty} of living space.|Plot size {qty}.",
    "volume": "The tank holds {qty}.|Add {qty} of water.",
    "temp": "Store below {qty}.|Yesterday it reached {qty} in {city}.|Set the oven to {qty}.",
    "speed": "Top speed {qty}.|Wind gusts of up to {qty}.",
    "data": "The download is {qty}.|Attachment size: {qty}.|Line speed {qty}.",
    "energy": "Annual consumption {qty}.|Energy use: {qty} per cycle.",
    "power": "Rated output {qty}.|The motor delivers {qty}.",
    "freq": "Clock speed {qty}.|Tune to {qty}.", "pressure": "Operating pressure {qty}.",
    "time": "The job took {qty}.|Battery life: up to {qty}.",
    "qty": "Measured value: {qty}.|Reading {qty} at {time}.",
    "count": "Please send {qty} by {date}.|We received {qty} on {date}.|"
             "Order {inv}: {qty}, {money} in total.",
}  # fmt: skip
QUANTITY_EMPTY_FRAMES = [
    "{ref} {inv}{stop}{total_lead}{sep}{money}{end}", "{date_lead}{sep}{date}{end}",
    "{tel} {phone}{stop}{ref} {inv}", "{sub_lead}{sep}{pct} %{end}",
]  # fmt: skip


def _locale(rng: random.Random) -> str:
    return rng.choices(list(WORLD_LOCALES), weights=list(WORLD_LOCALES.values()))[0]


def _frame(rng: random.Random, local: list[str], english: list[str], empty: list[str],
           is_empty: bool, locale: str) -> tuple[str, str]:  # fmt: skip
    """A frame and the locale its cue words are in (English sentences for a quarter)."""
    if is_empty:
        return rng.choice(empty), locale
    if english and (_lang(locale) == "en" or rng.random() < 0.25):
        return rng.choice(english), "en_US"
    return rng.choice(local), locale


def _distractors(rng: random.Random, locale: str, cues: str, doc: WorldDoc) -> dict[str, Slot]:
    """Slots every world frame may hold: cue words, separators and unlabelled values."""
    lang = _lang(cues)
    day = world_day(rng)
    return {
        "sep": _separator(rng, lang), "end": rng.choice([_LANGUAGE_STOP.get(lang, "."), ""]),
        "stop": _LANGUAGE_STOP.get(lang, ". "), "ref": cue(rng, cues, "ref"),
        "inv": invoice_no(rng), "tel": phrase(rng, cues, "tel"), "phone": phone(rng),
        "date_lead": cue(rng, cues, "date"), "date": world_date(rng, day, locale),
        "other_lead": cue(rng, cues, "other"),
        "other": world_date(rng, day - dt.timedelta(days=rng.randint(3, 400)), locale),
        "total_lead": cue(rng, cues, "total"), "sub_lead": cue(rng, cues, "sub"),
        "qty_lead": cue(rng, cues, "qty"), "time": clock(rng), "city": rng.choice(CITIES),
        "room": f"{rng.randint(1, 6)}.{rng.randint(10, 40)}", "pct": pct(rng),
        "money": doc.money(doc.value()),
        "qty": world_quantity(rng, locale, rng.choice(["weight", "count", "length", "volume"])),
    }  # fmt: skip


def price_world(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A line in one of the world's locales with a price in its formats."""
    locale = _locale(rng)
    template, cues = _frame(rng, PRICE_FRAMES, PRICE_FRAMES_EN, PRICE_EMPTY_FRAMES, empty, locale)
    doc = WorldDoc(rng, locale)
    slots = _distractors(rng, locale, cues, doc)
    slots["lead"] = cue(rng, cues, "total")
    if "{total}" in template:
        value, text = doc.total()
        slots["total"] = doc.money(value, labelled=True, text=text)
        part = Decimal(str(rng.uniform(0.05, 0.9)))
        sub = (value * part).quantize(Decimal(1).scaleb(-(0 if doc.whole else doc.decimals)))
        slots["sub"] = doc.money(max(sub, Decimal(1)))
    return render(template, slots)


def date_world(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A line in one of the world's locales with a date in its CLDR formats."""
    locale = _locale(rng)
    template, cues = _frame(rng, DATE_FRAMES, DATE_FRAMES_EN, DATE_EMPTY_FRAMES, empty, locale)
    doc = WorldDoc(rng, locale)
    slots = _distractors(rng, locale, cues, doc)
    slots["lead"] = cue(rng, cues, "date")
    if "{main}" in template:
        main = world_day(rng)
        slots["main"] = [(world_date(rng, main, locale, check=True), "DATE")]
        slots["other"] = world_date(rng, main - dt.timedelta(days=rng.randint(3, 400)), locale)
    return render(template, slots)


def quantity_world(rng: random.Random, empty: bool) -> dict[str, Any]:
    """A line in one of the world's locales with a measured or counted quantity."""
    locale = _locale(rng)
    kinds = list(QUANTITY_KINDS)
    kind = rng.choices(kinds, weights=[QUANTITY_KINDS[k][0] for k in kinds])[0]
    english = QUANTITY_FRAMES_EN[kind].split("|")
    template, cues = _frame(rng, QUANTITY_FRAMES, english, QUANTITY_EMPTY_FRAMES, empty, locale)
    doc = WorldDoc(rng, locale)
    slots = _distractors(rng, locale, cues, doc)
    slots["lead"] = cue(rng, cues, kind)
    if "{qty}" in template:
        # Unit names in the text's language: an English sentence keeps to symbols.
        symbols_only = cues != locale and _lang(locale) != "en"
        slots["qty"] = world_quantity(rng, locale, kind, labelled=True, symbols_only=symbols_only)
    return render(template, slots)


# -- driver ----------------------------------------------------------------------------------


def _mixed(
    document: Callable[[random.Random, bool], dict[str, Any]],
    world: Callable[[random.Random, bool], dict[str, Any]],
) -> Callable[[random.Random, bool], dict[str, Any]]:
    def make(rng: random.Random, empty: bool) -> dict[str, Any]:
        return (document if rng.random() < DOCUMENT_SHARE else world)(rng, empty)

    return make


MAKERS: dict[str, Callable[[random.Random, bool], dict[str, Any]]] = {
    "extract_price": _mixed(price_document, price_world),
    "extract_date": _mixed(date_document, date_world),
    "extract_quantity": _mixed(quantity_document, quantity_world),
}


def _check_alignment(example: dict[str, Any]) -> None:
    tokens = tokenize(example["text"])
    starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
    for span in example["spans"]:
        if span["start"] not in starts or span["end"] not in ends:
            raise Rejected("span cuts a token", f"{span['value']!r} in {example['text']!r}")


def generate(unit: str, count: int = COUNT) -> list[dict[str, Any]]:
    """The annotated examples of ``unit``: distinct texts, ``NO_VALUE_SHARE`` of them empty.

    Candidates that fail a check are dropped and counted in ``STATS`` (reset here).
    """
    rng = random.Random(SEED + UNITS.index(unit))
    STATS.clear()
    SAMPLES.clear()
    examples: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(examples) < count:
        try:
            example = MAKERS[unit](rng, rng.random() < NO_VALUE_SHARE)
            _check_alignment(example)
        except Rejected as rejected:
            _count(f"dropped: {rejected.reason}", rejected.detail)
            continue
        if example["text"] in seen:
            continue
        seen.add(example["text"])
        examples.append(example)
    return examples


def to_jsonl(examples: list[dict[str, Any]]) -> str:
    """One compact JSON object per line, non-ASCII kept as written."""
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples)


def _print_stats(unit: str) -> None:
    print(f"{unit}: {sum(n for r, n in STATS.items() if r.startswith('dropped'))} dropped")
    for reason, number in STATS.most_common():
        print(f"  {number:5d}  {reason}")
        for sample in SAMPLES.get(reason, [])[:4]:
            print(f"           {sample[:150]}")


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) every unit's annotated examples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument(
        "--stats", action="store_true", help="print dropped candidates, write nothing"
    )
    parser.add_argument("--print-blocks", action="store_true", help="print the crf blocks")
    args = parser.parse_args(argv)
    if args.print_blocks:
        print(json.dumps(CRF_BLOCKS, indent=2))
        return 0
    status = 0
    for unit in UNITS:
        path = HERE / f"{unit}.annotated.jsonl"
        content = to_jsonl(generate(unit))
        if args.stats:
            _print_stats(unit)
        elif args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                print(f"{path} differs from the generator's output", file=sys.stderr)
                status = 1
        else:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {path} ({content.count(chr(10))} examples)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
