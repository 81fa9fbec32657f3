"""Deterministic generator of the annotated examples the shipped units' CRF paths learn from.

Run ``python units/make_annotated.py`` from the repository root to (re)write
``units/<unit>.annotated.jsonl`` for ``extract_price``, ``extract_date`` and ``extract_quantity``;
``--check`` only compares the files with what the generator produces and exits 1 on a difference.
The output depends on nothing but ``SEED`` and this file: one ``random.Random(SEED + unit index)``
drives every choice, so the files are byte-for-byte reproducible.

How the texts are made. Each unit has document templates written as real documents are:
invoices, reminders, receipts, e-mails, contract clauses, quotes, order confirmations and table
rows, in English with some German, French and Spanish. A template is a string with slots; a slot
is filled with text (names, companies, items, cities) or with a value that is labelled. Values
vary as documents do: amounts as ``1,250.00``, ``1.250,00``, ``1 250,00`` (also with no-break
spaces), ``1'250.00``, ``1250.00`` or ``1,250``, with the currency as a code or a symbol before or
after, or as a word (``EUR 5``, ``5 €``, ``$5``, ``5 dollars``), or stated once for the whole
document ("All amounts in EUR"); dates as ``2024-03-14``, ``14.03.2024``, ``14/03/2024``,
``March 14, 2024``, ``14 March 2024``, ``14th Mar 2024``, ``14. März 2024``, ``14 mars 2024``,
``14 de marzo de 2024`` (numeric dates are always day first, as the unit reads them);
quantities as integers, grouped thousands or decimals, with a unit word or symbol in the text's
language, or none (``12 x chairs``).

Distractors surround the value: invoice, order and customer numbers, phone numbers, IBAN-like
references, times, percentages, other dates (order dates, earlier letters), other amounts
(subtotals, VAT, shipping, unit prices) and quantities next to prices. Only the value the unit
should return is labelled: for ``extract_price`` the total or amount due (or the one price a
text states); for ``extract_date`` the document's main date (invoice, due, signature, event or
delivery date), not the earlier dates it refers to; for ``extract_quantity`` the ordered,
delivered or billed quantity, not prices, dates, durations or pack counts. About 15% of the
texts state no value at all and have no spans.

Gold outputs are derivable: a unit's answer is its field normalizers
(``aau.fallbacks.normalize``) applied to the labelled spans. The generator asserts, for every
example, that the normalized span equals the value it meant to write, and that every span starts
and ends on a token boundary of the CRF tokenizer.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The script runs as `python units/make_annotated.py`; its normalizers and tokenizer live in the
# package at the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aau.fallbacks.crf_features import tokenize  # noqa: E402
from aau.fallbacks.normalize import NORMALIZERS  # noqa: E402

SEED = 20240314
COUNT = 400
NO_VALUE_SHARE = 0.15
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

    def amount_text(self, value: float) -> str:
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
        if NORMALIZERS["amount"](text) != value:
            raise AssertionError(f"{text!r} does not normalize to {value}")
        return text

    def money(self, value: float, *, labelled: bool = False) -> list[Part]:
        """An amount with its currency marker, labelled when it is the unit's answer."""
        amount: Part = (self.amount_text(value), "AMOUNT") if labelled else self.amount_text(value)
        if not self.has_marker:
            return [amount]
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


def date_text(rng: random.Random, day: dt.date, lang: str = "en") -> str:
    """``day`` written as a document in ``lang`` would write it."""
    d, m, y = day.day, day.month, day.year
    numeric = [
        f"{y}-{m:02d}-{d:02d}",
        f"{d:02d}.{m:02d}.{y}",
        f"{d}.{m}.{y}",
        f"{d:02d}/{m:02d}/{y}",
        f"{y}/{m:02d}/{d:02d}",
    ]
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
    if NORMALIZERS["date"](text) != day.isoformat():
        raise AssertionError(f"{text!r} does not normalize to {day}")
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


def price_example(rng: random.Random, empty: bool) -> dict[str, Any]:
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
        "total": doc.money(total, labelled=True),
        "cur": [(doc.marker if doc.marker.isalpha() and doc.marker.isupper() else doc.iso,
                 "CURRENCY")],
        "sub_n": doc.amount_text(sub), "ship_n": doc.amount_text(ship),
        "total_n": [(doc.amount_text(round(sub + ship, 2)), "AMOUNT")],
    })  # fmt: skip
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


def date_example(rng: random.Random, empty: bool) -> dict[str, Any]:
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
        "main": [(date_text(rng, main, lang), "DATE")], "other": date_text(rng, other, lang),
        "money": doc.money(doc.value(10, 9000)), "company2": rng.choice(COMPANIES),
        "version": f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "room": f"{rng.randint(1, 6)}.{rng.randint(10, 40)}", "ext": str(rng.randint(2000, 2099)),
        "year": str(rng.randint(2019, 2026)),
    })  # fmt: skip
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
    if NORMALIZERS["number"](text) != value:
        raise AssertionError(f"{text!r} does not normalize to {value}")
    return text, value


def quantity(rng: random.Random, lang: str, units: list[str]) -> list[Part]:
    text, _ = _number_text(rng, lang)
    unit = rng.choice(units)
    # "5kg" is written tight as often as not; words keep their space.
    gap = "" if unit in {"kg", "kgs", "t", "m", "lbs", "kWh", "m²"} and rng.random() < 0.4 else " "
    return [(text, "VALUE"), gap, (unit, "UNIT")]


def quantity_example(rng: random.Random, empty: bool) -> dict[str, Any]:
    lang, template = rng.choice(QUANTITY_EMPTY if empty else QUANTITY_TEMPLATES)
    doc = Doc(rng, lang)
    slots = _common(rng, lang)
    bare, _ = _number_text(rng, lang)
    item = rng.choice(list(ITEM_UNITS))
    tail = rng.choice(QUANTITY_TAILS if lang == "en" else ["", "."])
    for name in ("item", "city", "inv"):
        tail = tail.replace("{" + name + "}", item if name == "item" else str(slots[name]))
    slots.update({
        "lead": rng.choice(QUANTITY_LEADS[lang]) + " ", "tail": tail,
        "item": item, "qty": quantity(rng, lang, UNIT_WORDS.get(lang, ITEM_UNITS[item])),
        "hours": quantity(rng, lang, ["hours", "hrs", "h"]),
        "energy": quantity(rng, lang, ["kWh", "MWh"]),
        "bare": [(bare, "VALUE")], "money": doc.money(doc.value(2, 9000)),
        "pallets": str(rng.randint(1, 9)), "item_de": rng.choice(ITEMS_DE),
        "item_es": rng.choice(ITEMS_ES),
    })  # fmt: skip
    return render(with_fillers(rng, template, lang, dates=True), slots)


# -- driver ----------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[random.Random, bool], dict[str, Any]]] = {
    "extract_price": price_example,
    "extract_date": date_example,
    "extract_quantity": quantity_example,
}


def _check_alignment(example: dict[str, Any]) -> None:
    tokens = tokenize(example["text"])
    starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
    for span in example["spans"]:
        if span["start"] not in starts or span["end"] not in ends:
            raise AssertionError(f"span {span} cuts a token in {example['text']!r}")


def generate(unit: str, count: int = COUNT) -> list[dict[str, Any]]:
    """The annotated examples of ``unit``: distinct texts, ``NO_VALUE_SHARE`` of them empty."""
    rng = random.Random(SEED + UNITS.index(unit))
    examples: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(examples) < count:
        example = MAKERS[unit](rng, rng.random() < NO_VALUE_SHARE)
        if example["text"] in seen:
            continue
        _check_alignment(example)
        seen.add(example["text"])
        examples.append(example)
    return examples


def to_jsonl(examples: list[dict[str, Any]]) -> str:
    """One compact JSON object per line, non-ASCII kept as written."""
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) every unit's annotated examples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--print-blocks", action="store_true", help="print the crf blocks")
    args = parser.parse_args(argv)
    if args.print_blocks:
        print(json.dumps(CRF_BLOCKS, indent=2))
        return 0
    status = 0
    for unit in UNITS:
        path = HERE / f"{unit}.annotated.jsonl"
        content = to_jsonl(generate(unit))
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                print(f"{path} differs from the generator's output", file=sys.stderr)
                status = 1
        else:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {path} ({content.count(chr(10))} examples)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
