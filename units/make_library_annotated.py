"""Deterministic generator of the annotated examples of the library units' CRF paths.

Run ``python units/make_library_annotated.py`` from the repository root to (re)write
``units/<unit>.annotated.jsonl`` for ``extract_payment_terms``, ``extract_deductible``,
``validate_date_format``, ``extract_revenue_current`` and ``extract_revenue_previous``;
``--check`` compares the files with what the generator produces (exit 1 on a difference);
``--stats`` prints how many candidates were dropped, and why. One ``random.Random(SEED + unit
index)`` drives every choice, so the files are byte-for-byte reproducible.

How the texts are made: each unit draws from templates in English, German and French (invoice
lines, contract clauses, policy schedules, claim letters, report paragraphs and table pages);
slots are filled with unlabelled fillers (names, references, other amounts, other periods) and
with the value the unit returns, labelled. Distractors are what a reader must not confuse the
value with: delivery times, discount days and notice periods next to payment terms; premiums,
claimed amounts and sums insured next to a deductible; reference numbers and times next to a
date; EBITDA, net income and the other period's revenue next to a revenue. About a sixth of the
texts state no value and have no spans.

Gold outputs are derivable: a unit's answer is its field normalizers applied to the labelled
spans. Every labelled span is checked: it must start and end on a token of the CRF tokenizer and
normalize (with the unit's own tables) to the value the generator meant; a candidate that fails
is dropped and counted. The held-out files (``units/<unit>.heldout.jsonl``) are written by hand,
apart from this generator, and nothing here reads them.
"""

from __future__ import annotations

import argparse
import calendar
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The script runs as `python units/make_library_annotated.py`; the package is at the root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aau.fallbacks.crf_features import tokenize  # noqa: E402
from aau.fallbacks.fields import field_normalizers  # noqa: E402
from aau.spec.model import UnitSpec  # noqa: E402

SEED = 20240518
COUNT = 360
NO_VALUE_SHARE = 0.17
UNITS = (
    "extract_payment_terms",
    "extract_deductible",
    "validate_date_format",
    "extract_revenue_current",
    "extract_revenue_previous",
)
HERE = Path(__file__).resolve().parent

Part = str | tuple[str, str]  # plain text, or (text, label)
STATS: Counter[str] = Counter()


class Rejected(Exception):  # noqa: N818  # a control-flow signal, not an error
    """A candidate the generator drops: a labelled span does not read as meant."""


def render(parts: list[Part]) -> dict[str, Any]:
    """Join ``parts``; labelled ones become spans with their surface value."""
    text, spans = "", []
    for part in parts:
        if isinstance(part, tuple):
            surface, label = part
            spans.append({"start": len(text), "end": len(text) + len(surface), "label": label,
                          "value": surface})  # fmt: skip
            text += surface
        else:
            text += part
    return {"text": text, "spans": spans}


_SLOT = re.compile(r"\{(\w+)\}")


def fill(template: str, slots: dict[str, Part | list[Part]]) -> list[Part]:
    """The parts of ``template`` with its ``{slot}``s replaced."""
    out: list[Part] = []
    for index, piece in enumerate(_SLOT.split(template)):
        if index % 2 == 0:
            if piece:
                out.append(piece)
            continue
        value = slots[piece]
        out.extend(value if isinstance(value, list) else [value])
    return out


# -- fillers ---------------------------------------------------------------------------------

NAMES = ["Anna Weber", "Marc Dubois", "Sofia Rossi", "Jonas Berg", "Lena Vogel",
         "Pierre Martin", "David Clarke", "Priya Shah", "Tom Baker", "Chloé Bernard",
         "Lukas Meier", "Grace Hall"]  # fmt: skip
CITIES = ["Berlin", "Lyon", "Zurich", "Leeds", "Hamburg", "Vienna", "Paris", "Munich", "Bristol"]


def ref(rng: random.Random) -> str:
    return (
        rng.choice(["INV", "RE", "PO", "F", "No."])
        + rng.choice(["-", " ", ""])
        + str(rng.randint(1000, 99999))
    )


def small_date(rng: random.Random) -> str:
    day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(2021, 2025)
    return rng.choice([f"{day:02d}.{month:02d}.{year}", f"{year}-{month:02d}-{day:02d}",
                       f"{day} {calendar.month_name[month]} {year}"])  # fmt: skip


CURRENCIES = {
    "EUR": ["EUR", "€", "euros", "Euro"],
    "USD": ["USD", "$", "US$"],
    "GBP": ["GBP", "£"],
    "CHF": ["CHF"],
}
_PRE = {"$", "US$", "£", "€"}


class Money:
    """Per-text choices of currency and number style, consistent within one text."""

    def __init__(self, rng: random.Random, lang: str) -> None:
        self.rng = rng
        weights = {"en": [4, 3, 3, 1], "de": [8, 0, 0, 2], "fr": [8, 0, 0, 2]}[lang]
        self.iso = rng.choices(list(CURRENCIES), weights=weights)[0]
        self.marker = rng.choice(CURRENCIES[self.iso])
        if lang != "en" and self.marker in {"$", "US$", "£"}:
            self.marker = self.iso
        styles = {"en": ["en", "en", "plain", "en0"], "de": ["de", "de", "de0"],
                  "fr": ["fr", "fr0", "de"]}[lang]  # fmt: skip
        self.style = "ch" if self.iso == "CHF" and rng.random() < 0.5 else rng.choice(styles)
        self.lang = lang

    def value(self, low: float, high: float) -> float:
        amount = math.exp(self.rng.uniform(math.log(low), math.log(high)))
        return float(round(amount / 50) * 50) if self.rng.random() < 0.6 else round(amount, 2)

    def number(self, value: float) -> str:
        style = self.style
        whole = value == int(value)
        if style.endswith("0") and not whole:
            style = style[:-1]
        en = f"{int(value):,}" if style.endswith("0") else f"{value:,.2f}"
        if style == "plain":
            return f"{int(value)}" if whole and self.rng.random() < 0.5 else f"{value:.2f}"
        table = {
            "en": en, "en0": en, "de": en.translate(str.maketrans(",.", ".,")),
            "de0": en.translate(str.maketrans(",.", ".,")),
            "fr": en.replace(",", " ").replace(".", ","), "fr0": en.replace(",", " "),
            "ch": en.replace(",", "'"),
        }  # fmt: skip
        return table[style]

    def parts(self, value: float, labelled: bool, *, marker: bool = True) -> list[Part]:
        """The amount with its marker before or after it, labelled or not."""
        number = self.number(value)
        amount: Part = (number, "AMOUNT") if labelled else number
        if not marker:
            return [amount]
        cur: Part = (self.marker, "CURRENCY") if labelled else self.marker
        if self.marker in _PRE or (self.marker in {"EUR", "USD", "GBP", "CHF"} and
                                   self.lang == "en" and self.rng.random() < 0.6):  # fmt: skip
            return [cur, "" if len(self.marker) == 1 else " ", amount]
        return [amount, "\u00a0" if self.rng.random() < 0.15 else " ", cur]


# -- extract_payment_terms -------------------------------------------------------------------

DAYS = [7, 8, 10, 14, 15, 20, 21, 28, 30, 30, 30, 45, 45, 60, 60, 75, 90, 120]
BASIS = {
    "en": {
        "invoice_date": ["invoice date", "the invoice date", "date of invoice"],
        "invoice_receipt": ["receipt of invoice", "receipt of the invoice"],
        "end_of_month": ["end of month", "EOM", "end of the month"],
        "delivery": ["delivery", "receipt of goods", "date of delivery"],
    },
    "de": {
        "invoice_date": ["Rechnungsdatum", "Rechnungsstellung"],
        "invoice_receipt": ["Rechnungseingang", "Rechnungserhalt", "Erhalt der Rechnung"],
        "end_of_month": ["Monatsende", "Ende des Monats"],
        "delivery": ["Lieferung", "Wareneingang", "Lieferdatum"],
    },
    "fr": {
        "invoice_date": ["date de facture", "date de facturation", "date d'émission de la facture"],
        "invoice_receipt": ["réception de facture", "réception de la facture"],
        "end_of_month": ["fin de mois"],
        "delivery": ["livraison", "date de livraison", "réception des marchandises"],
    },
}
PAY_TEMPLATES = {
    "en": [
        ("Payment terms: net {days}.", False), ("Terms: Net {days} days.", False),
        ("Invoices are payable within {days} days of {basis}.", True),
        ("Payment is due {days} days after {basis}.", True),
        ("Please pay within {days} days.", False),
        ("Payment: {days} days from {basis}, without deduction.", True),
        ("2% discount if paid within {disc} days, otherwise net {days}.", False),
        ("Terms of payment: {days} days {basis}.", True),
        ("The Buyer shall pay each invoice within {days} days following {basis}.", True),
        ("Amount due: {money}. Payable {days} days net from {basis}.", True),
        ("Payment terms {disc}/2 net {days}.", False),
        ("Our terms are strictly {days} days net.", False),
    ],
    "de": [
        ("Zahlbar innerhalb von {days} Tagen nach {basis}.", True),
        ("Zahlungsziel: {days} Tage netto.", False),
        ("{days} Tage netto, {disc} Tage 2 % Skonto.", False),
        ("Zahlungsbedingungen: {days} Tage ab {basis}.", True),
        ("Der Rechnungsbetrag ist {days} Tage nach {basis} ohne Abzug fällig.", True),
        ("Bitte überweisen Sie den Betrag von {money} innerhalb von {days} Tagen.", False),
        ("Zahlung: {days} Tage zum {basis}.", True),
        ("Zahlbar binnen {days} Tagen netto ab {basis}.", True),
    ],
    "fr": [
        ("Paiement à {days} jours {basis}.", True),
        ("Payable à {days} jours date de facture.", "invoice_date_fixed"),
        ("Règlement sous {days} jours à {basis}.", True),
        ("Délai de paiement : {days} jours à compter de la {basis}.", True),
        ("Conditions de paiement : {days} jours nets.", False),
        ("Nos factures sont payables à {days} jours, escompte de 2 % à {disc} jours.", False),
        ("Montant : {money}, à régler sous {days} jours.", False),
    ],
}  # fmt: skip
PAY_FILLERS = {
    "en": ["Delivery within {n} days of order.", "Warranty: {m} months from delivery.",
           "Either party may terminate with {n} days' notice.", "Invoice {ref} dated {date}.",
           "Quote valid for {n} days.", "Contact {name} for questions."],
    "de": ["Lieferzeit: {n} Werktage.", "Gewährleistung {m} Monate.", "Rechnung {ref} vom {date}.",
           "Kündigungsfrist: {n} Tage zum Quartalsende.", "Angebot gültig {n} Tage."],
    "fr": ["Livraison sous {n} jours ouvrés.", "Garantie : {m} mois.", "Facture {ref} du {date}.",
           "Préavis de résiliation : {n} jours.", "Offre valable {n} jours."],
}  # fmt: skip
PAY_EMPTY = {
    "en": ["Delivery within {n} days of order.", "Please find attached invoice {ref} of {money}.",
           "The contract may be terminated with {n} days' notice.",
           "Goods remain our property until paid in full.", "Warranty period: {m} months."],
    "de": ["Lieferung innerhalb von {n} Tagen nach Auftragseingang.",
           "Anbei erhalten Sie die Rechnung {ref} über {money}.",
           "Die Kündigungsfrist beträgt {n} Tage."],
    "fr": ["Livraison sous {n} jours après commande.",
           "Veuillez trouver ci-joint la facture {ref}.",
           "Le contrat peut être résilié avec un préavis de {n} jours."],
}  # fmt: skip
_DAY_WORDS = {7: "seven", 10: "ten", 14: "fourteen", 30: "thirty", 60: "sixty", 90: "ninety"}


def _fillers(rng: random.Random, lang: str, pool: dict[str, list[str]]) -> dict[str, Part]:
    money = Money(rng, lang)
    return {
        "n": str(rng.choice([3, 5, 10, 14, 21, 30, 60, 90])), "m": str(rng.choice([6, 12, 24, 36])),
        "ref": ref(rng), "date": small_date(rng), "name": rng.choice(NAMES),
        "money": "".join(p if isinstance(p, str) else p[0]
                         for p in money.parts(money.value(50, 90000), False)),
    }  # fmt: skip


def _around(
    rng: random.Random, lang: str, core: list[Part], pool: dict[str, list[str]]
) -> list[Part]:
    """``core`` with zero to two filler sentences before or after it."""
    slots = _fillers(rng, lang, pool)
    before = [fill(t, slots) for t in rng.sample(pool[lang], rng.randint(0, 1))]
    after = [fill(t, slots) for t in rng.sample(pool[lang], rng.randint(0, 1))]
    out: list[Part] = []
    for sentence in before:
        out += [*sentence, rng.choice([" ", "\n"])]
    out += core
    for sentence in after:
        out += [rng.choice([" ", "\n"]), *sentence]
    return out


def payment_terms(rng: random.Random, empty: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    lang = rng.choices(["en", "de", "fr"], weights=[5, 3, 3])[0]
    slots = _fillers(rng, lang, PAY_FILLERS)
    if empty:
        core = fill(rng.choice(PAY_EMPTY[lang]), slots)
        return render(_around(rng, lang, core, PAY_FILLERS)), {"days": None, "basis": None}
    template, has_basis = rng.choice(PAY_TEMPLATES[lang])
    days = rng.choice(DAYS)
    day_text = str(days)
    if lang == "en" and days in _DAY_WORDS and "net {days}" not in template and rng.random() < 0.3:
        slots["days"] = [f"{_DAY_WORDS[days]} (", (day_text, "DAYS"), ")"]  # type: ignore[dict-item]
    else:
        slots["days"] = (day_text, "DAYS")
    slots["disc"] = str(rng.choice([8, 10, 14]))
    basis = None
    if has_basis is True:
        basis = rng.choice(list(BASIS[lang]))
        slots["basis"] = (rng.choice(BASIS[lang][basis]), "BASIS")
        if "{basis}" in template and template.endswith("{basis}.") and lang == "en":
            if basis == "end_of_month" and "of {basis}" in template:
                slots["basis"] = ("end of month", "BASIS")
    elif has_basis == "invoice_date_fixed":
        template = template.replace("date de facture", "{basis}")
        basis = "invoice_date"
        slots["basis"] = ("date de facture", "BASIS")
    core = fill(template, slots)
    return render(_around(rng, lang, core, PAY_FILLERS)), {"days": days, "basis": basis}


# -- extract_deductible ----------------------------------------------------------------------

DED_TEMPLATES = {
    "en": ["Deductible: {ded} per claim.", "A deductible of {ded} applies to each claim.",
           "The policy excess is {ded}.", "Excess: {ded}; annual premium {other}.",
           "Your claim of {other} has been approved, less the deductible of {ded}.",
           "We will pay {other} after deducting your {ded} excess.",
           "Sum insured {other}, deductible {ded} each and every loss.",
           "Premium {other} per year. Deductible {ded}.",
           "The first {ded} of every loss is borne by the insured (deductible).",
           "Policy schedule\nCover: comprehensive\nExcess: {ded}\nPremium: {other}"],
    "de": ["Selbstbeteiligung: {ded} je Schadenfall.", "Die Selbstbeteiligung beträgt {ded}.",
           "Selbstbehalt {ded}, Jahresprämie {other}.",
           "Schadensumme {other}, abzüglich Selbstbeteiligung von {ded}.",
           "Versicherungssumme {other}; vereinbarte Selbstbeteiligung {ded}.",
           "Wir erstatten {other} abzüglich Ihrer Selbstbeteiligung in Höhe von {ded}."],
    "fr": ["Franchise : {ded} par sinistre.", "Une franchise de {ded} reste à votre charge.",
           "Montant du sinistre : {other}, franchise de {ded} déduite.",
           "Prime annuelle {other}, franchise {ded}.",
           "Nous vous versons {other}, déduction faite de la franchise de {ded}."],
}  # fmt: skip
DED_EMPTY = {
    "en": ["Your annual premium is {other}.", "We received your claim for {other} on {date}.",
           "Sum insured: {other}.", "There is no deductible under this policy.",
           "Policy {ref}: your claims handler is {name}."],
    "de": ["Ihre Jahresprämie beträgt {other}.", "Wir haben Ihre Schadenmeldung über {other} "
           "erhalten.", "Versicherungssumme: {other}.", "Ohne Selbstbeteiligung."],
    "fr": ["Votre prime annuelle s'élève à {other}.", "Nous avons bien reçu votre déclaration "
           "de sinistre de {other}.", "Aucune franchise ne s'applique."],
}  # fmt: skip
DED_FILLERS = {
    "en": ["Policy {ref}.", "Claim reference {ref}, reported on {date}.", "Kind regards, {name}."],
    "de": ["Versicherungsschein {ref}.", "Schadennummer {ref} vom {date}.", "Mit freundlichen "
           "Grüßen, {name}."],
    "fr": ["Police {ref}.", "Sinistre {ref} déclaré le {date}.", "Cordialement, {name}."],
}  # fmt: skip


def deductible(rng: random.Random, empty: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    lang = rng.choices(["en", "de", "fr"], weights=[5, 3, 3])[0]
    money = Money(rng, lang)
    slots: dict[str, Part | list[Part]] = dict(_fillers(rng, lang, DED_FILLERS))
    other = money.value(400, 250000)
    slots["other"] = "".join(p if isinstance(p, str) else p[0] for p in money.parts(other, False))
    if empty:
        core = fill(rng.choice(DED_EMPTY[lang]), slots)
        return render(_around(rng, lang, core, DED_FILLERS)), {"amount": None, "currency": None}
    amount = float(rng.choice([100, 150, 200, 250, 300, 500, 500, 750, 1000, 1500, 2500, 5000]))
    marker = rng.random() > 0.07
    slots["ded"] = money.parts(amount, True, marker=marker)
    core = fill(rng.choice(DED_TEMPLATES[lang]), slots)
    wanted = {"amount": amount, "currency": money.iso if marker else None}
    return render(_around(rng, lang, core, DED_FILLERS)), wanted


# -- validate_date_format --------------------------------------------------------------------

MONTHS = {
    "en": list(calendar.month_name)[1:],
    "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
           "Oktober", "November", "Dezember"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
           "octobre", "novembre", "décembre"],
}  # fmt: skip
DATE_TEMPLATES = {
    "en": ["Invoice date: {d}.", "Date of signature: {d}", "Signed in {city} on {d}.",
           "Please confirm the delivery date {d}.", "Effective date: {d}", "Due date {d}.",
           "The policy starts on {d} (ref. {ref}).", "Date: {d}\nTo: {name}"],
    "de": ["Rechnungsdatum: {d}", "Datum: {d}", "Unterzeichnet in {city} am {d}.",
           "Liefertermin {d}, Auftrag {ref}.", "Gültig ab {d}."],
    "fr": ["Date de facture : {d}", "Fait à {city}, le {d}.", "Date d'effet : {d}.",
           "Livraison prévue le {d} (commande {ref})."],
}  # fmt: skip
DATE_EMPTY = {
    "en": ["Please send the signed copy back to {name}.", "Invoice {ref}, total {money}.",
           "Call us at 030 1234 5678 between 9:00 and 17:30.", "Order {ref}: 12 boxes."],
    "de": ["Bitte senden Sie die unterschriebene Kopie zurück.", "Rechnung {ref} über {money}."],
    "fr": ["Merci de nous retourner le contrat signé.", "Facture {ref}, montant {money}."],
}  # fmt: skip
DATE_FILLERS = {
    "en": ["Reference {ref}.", "Amount: {money}.", "Contact: {name}."],
    "de": ["Referenz {ref}.", "Betrag: {money}."],
    "fr": ["Référence {ref}.", "Montant : {money}."],
}  # fmt: skip


def _leap(year: int) -> bool:
    return calendar.isleap(year)


def _written_date(rng: random.Random, lang: str, valid: bool) -> tuple[str, str | None]:
    """A date as written and its ISO value (None for one that does not exist)."""
    year = rng.randint(2019, 2027)
    if valid:
        month = rng.randint(1, 12)
        day = rng.randint(1, calendar.monthrange(year, month)[1])
        if rng.random() < 0.15:  # the edge days people get wrong
            month, day = 2, 29
            year = rng.choice([2020, 2024, 2028])
    else:
        kind = rng.choice(["feb", "feb", "short", "short", "day", "month"])
        if kind == "feb":
            month = 2
            day = rng.choice([30, 31]) if rng.random() < 0.5 else 29
            if day == 29:
                year = rng.choice([2021, 2022, 2023, 2025, 2026, 2027])
        elif kind == "short":
            month, day = rng.choice([4, 6, 9, 11]), 31
        elif kind == "day":
            month, day = rng.randint(1, 12), rng.choice([32, 33, 35, 40, 45])
        else:
            month, day = rng.choice([13, 14, 15, 18, 20]), rng.randint(13, 28)
    iso = f"{year:04d}-{month:02d}-{day:02d}" if valid else None
    forms = ["dmy.", "dmy/", "dmy-", "iso"]
    if month <= 12:
        forms += ["name", "name"] + (["en_us"] if lang == "en" else [])
    if kind_is_iso_unsafe(month, day):
        forms = [f for f in forms if f != "iso"]
    form = rng.choice(forms)
    if form == "iso":
        return f"{year:04d}-{month:02d}-{day:02d}", iso
    if form.startswith("dmy"):
        sep = form[-1] if form[-1] in "./" else "/"
        pad = rng.random() < 0.8
        d, m = (f"{day:02d}", f"{month:02d}") if pad else (str(day), str(month))
        return f"{d}{sep}{m}{sep}{year}", iso
    name = MONTHS[lang][month - 1]
    if form == "en_us":
        return f"{name} {day}, {year}", iso
    dot = "." if lang == "de" else ""
    return f"{day}{dot} {name} {year}", iso


def kind_is_iso_unsafe(month: int, day: int) -> bool:
    """ISO dates keep to two-digit months and days (``2024-13-45`` reads as no date at all)."""
    return month > 12 or day > 31


def date_format(rng: random.Random, empty: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    lang = rng.choices(["en", "de", "fr"], weights=[5, 3, 3])[0]
    slots: dict[str, Part | list[Part]] = dict(_fillers(rng, lang, DATE_FILLERS))
    slots["city"] = rng.choice(CITIES)
    if empty:
        core = fill(rng.choice(DATE_EMPTY[lang]), slots)
        return render(_around(rng, lang, core, DATE_FILLERS)), {"date": None, "valid": None,
                                                                "written": None}  # fmt: skip
    valid = rng.random() < 0.6
    written, iso = _written_date(rng, lang, valid)
    slots["d"] = (written, "DATE")
    core = fill(rng.choice(DATE_TEMPLATES[lang]), slots)
    wanted = {"date": iso, "valid": valid, "written": written}
    return render(_around(rng, lang, core, DATE_FILLERS)), wanted


# -- extract_revenue_current / extract_revenue_previous ----------------------------------------

REV_WORDS = {
    "en": ["Revenue", "Net sales", "Sales", "Total revenue", "Turnover"],
    "de": ["Umsatz", "Umsatzerlöse", "Konzernumsatz"],
    "fr": ["Chiffre d'affaires", "Ventes"],
}
OTHER_ROWS = {
    "en": ["EBITDA", "Operating profit", "Net income", "Cost of sales", "Gross profit", "EBIT"],
    "de": ["EBITDA", "Betriebsergebnis", "Konzernergebnis", "Materialaufwand", "EBIT"],
    "fr": ["EBITDA", "Résultat opérationnel", "Résultat net", "Coût des ventes"],
}
PERIODS = [("Q3 2024", "Q3 2023"), ("Q2 2024", "Q1 2024"), ("2024", "2023"), ("H1 2025", "H1 2024"),
           ("FY 2023", "FY 2022"), ("Q4 2024", "Q3 2024"), ("9M 2024", "9M 2023")]  # fmt: skip
REV_PROSE = {
    "en": ["{rev} for {p} rose {pct}% to {cur} ({q}: {prev}).",
           "{rev}: {cur} (prior year: {prev}).",
           "{rev} amounted to {cur} in {p}, compared with {prev} in {q}.",
           "{p} {revl} of {cur} versus {prev} a year ago.",
           "{rev} declined to {cur} from {prev}.",
           "{rev} increased from {prev} in {q} to {cur} in {p}.",
           "{rev} reached {cur} in {p}; {other} was {x}.",
           "In {p}, {revl} was {cur} ({q}: {prev}), while {other} came to {x}."],
    "de": ["Der {rev} stieg im {p} um {pct} % auf {cur} (Vorjahr: {prev}).",
           "{rev}: {cur} (Vj.: {prev}).",
           "Im {p} erzielte die Gruppe {revl} von {cur} nach {prev} im {q}.",
           "{rev} {p}: {cur}; {other}: {x}."],
    "fr": ["Le {revl} s'établit à {cur} au {p} (exercice précédent : {prev}).",
           "{rev} : {cur} contre {prev} en {q}.",
           "Le {revl} atteint {cur} en {p}, après {prev} en {q}."],
}  # fmt: skip
REV_EMPTY = {
    "en": ["{other} was {x} in {p} ({q}: {y}).", "Headcount rose to 1,240 employees in {p}.",
           "The Board proposes a dividend of {x} per share.", "{other}: {x} (prior year: {y})."],
    "de": ["{other}: {x} (Vorjahr: {y}).", "Die Zahl der Mitarbeitenden stieg auf 1.240."],
    "fr": ["{other} : {x} (exercice précédent : {y}).", "L'effectif atteint 1 240 salariés."],
}  # fmt: skip
_SCALES = {"en": [("million", 1e6), ("bn", 1e9), ("thousand", 1e3), ("million", 1e6)],
           "de": [("Mio.", 1e6), ("Mrd.", 1e9)], "fr": [("millions", 1e6), ("M", 1e6)]}  # fmt: skip


def _rev_amounts(rng: random.Random) -> tuple[float, float]:
    current = round(math.exp(rng.uniform(math.log(5), math.log(9000))), 1)
    change = rng.uniform(-0.25, 0.35)
    return current, round(current / (1 + change), 1)


def _figure(value: float, lang: str) -> str:
    """A one-decimal figure in the page's language (``1,234.5``, ``1.234,5``, ``1 234,5``)."""
    text = f"{value:,.1f}"
    if lang == "de":
        return text.translate(str.maketrans(",.", ".,"))
    if lang == "fr":
        return text.replace(",", " ").replace(".", ",")
    return text


def revenue(
    rng: random.Random, empty: bool, previous: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    lang = rng.choices(["en", "de", "fr"], weights=[5, 3, 3])[0]
    money = Money(rng, lang)
    p, q = rng.choice(PERIODS)
    current, prior = _rev_amounts(rng)
    only_current = rng.random() < 0.12
    if rng.random() < 0.4:
        return _rev_table(rng, lang, money, (p, q), (current, prior), empty, previous, only_current)
    scale, factor = rng.choice(_SCALES[lang])
    pre = lang == "en" and rng.random() < 0.7

    def amount(value: float, labelled: bool) -> list[Part]:
        figure = f"{_figure(value, lang)} {scale}"
        num: Part = (figure, "AMOUNT") if labelled else figure
        cur: Part = (money.marker, "CURRENCY") if labelled else money.marker
        if pre:
            return [cur, "" if money.marker in _PRE else " ", num]
        return [num, " ", cur]

    def plain(parts: list[Part]) -> str:
        return "".join(x if isinstance(x, str) else x[0] for x in parts)

    words = rng.choice(REV_WORDS[lang])
    slots: dict[str, Part | list[Part]] = {
        "p": p, "q": q, "pct": str(rng.randint(2, 30)), "other": rng.choice(OTHER_ROWS[lang]),
        "x": plain(amount(round(current * 0.17, 1), False)),
        "y": plain(amount(round(prior * 0.15, 1), False)),
        "rev": words, "revl": words if lang == "de" else words.lower(),
    }  # fmt: skip
    if empty:
        return render(fill(rng.choice(REV_EMPTY[lang]), slots)), {"amount": None, "currency": None}
    template = rng.choice(REV_PROSE[lang])
    if only_current:
        template = {"en": "{rev} for {p}: {cur}.", "de": "{rev} im {p}: {cur}.",
                    "fr": "{rev} du {p} : {cur}."}[lang]  # fmt: skip
    slots["cur"] = amount(current, not previous)
    slots["prev"] = amount(prior, previous)
    example = render(fill(template, slots))
    if previous and only_current:
        return example, {"amount": None, "currency": None}
    value = prior if previous else current
    return example, {"amount": round(value * factor, 2), "currency": money.iso}


def _rev_table(
    rng: random.Random, lang: str, money: Money, periods: tuple[str, str],
    amounts: tuple[float, float], empty: bool, previous: bool, only_current: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """A statement page: a header with the currency and the periods (current first), then rows.

    The figures are as the table writes them: its scale heading ("in EUR million") is not
    applied, as on the page.
    """
    sep = rng.choice([" | ", "\t", "   ", "  "])
    current, prior = amounts
    unit = {"en": "in {c} million", "de": "in Mio. {c}", "fr": "en millions de {c}"}[lang]
    head_before, head_after = unit.split("{c}")
    labelled = not empty and not (previous and only_current)
    cur: Part = (money.iso, "CURRENCY") if labelled else money.iso
    header: list[Part] = [head_before, cur, head_after, sep, periods[0]]
    if not only_current:
        header += [sep, periods[1]]
    rows: list[list[Part]] = []
    for name in rng.sample(OTHER_ROWS[lang], rng.randint(1, 3)):
        row: list[Part] = [name, sep, _figure(round(current * rng.uniform(0.05, 0.4), 1), lang)]
        if not only_current:
            row += [sep, _figure(round(prior * rng.uniform(0.05, 0.4), 1), lang)]
        rows.append(row)
    if not empty:
        now, before = _figure(current, lang), _figure(prior, lang)
        row = [rng.choice(REV_WORDS[lang]), sep, now if previous else (now, "AMOUNT")]
        if not only_current:
            row += [sep, (before, "AMOUNT") if previous else before]
        rows.insert(rng.randint(0, min(1, len(rows))), row)
    title = {"en": ["Income statement", "Key figures", "Selected financial data"],
             "de": ["Konzern-Gewinn- und Verlustrechnung", "Kennzahlen"],
             "fr": ["Compte de résultat", "Chiffres clés"]}[lang]  # fmt: skip
    parts: list[Part] = [rng.choice(title), "\n", *header]
    for row in rows:
        parts += ["\n", *row]
    example = render(parts)
    if not labelled:
        return example, {"amount": None, "currency": None}
    return example, {"amount": prior if previous else current, "currency": money.iso}


# -- driver ----------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[random.Random, bool], tuple[dict[str, Any], dict[str, Any]]]] = {
    "extract_payment_terms": payment_terms,
    "extract_deductible": deductible,
    "validate_date_format": date_format,
    "extract_revenue_current": lambda rng, empty: revenue(rng, empty, previous=False),
    "extract_revenue_previous": lambda rng, empty: revenue(rng, empty, previous=True),
}


def _same(got: Any, wanted: Any) -> bool:
    if isinstance(wanted, float) and not isinstance(got, bool):
        return isinstance(got, int | float) and math.isclose(got, wanted, rel_tol=1e-9)
    return bool(got == wanted) and type(got) is type(wanted)


def _check(example: dict[str, Any], wanted: dict[str, Any], unit: UnitSpec) -> None:
    """Reject unless the spans sit on token edges and the unit's normalizers read ``wanted``."""
    tokens = tokenize(example["text"])
    starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
    for span in example["spans"]:
        if span["start"] not in starts or span["end"] not in ends:
            raise Rejected(f"span cuts a token: {span['value']!r} in {example['text']!r}")
    crf = next(f for f in unit.fallbacks if f.kind == "crf")
    functions = field_normalizers(crf.fields, unit)  # type: ignore[attr-defined]
    for field, mapping in crf.fields.items():  # type: ignore[attr-defined]
        span = next((s for s in example["spans"] if s["label"] == mapping.label), None)
        got = functions[field](span["value"]) if span else None
        if not _same(got, wanted[field]) and not (got is None and wanted[field] is None):
            raise Rejected(
                f"{field}: {span and span['value']!r} -> {got!r}, meant {wanted[field]!r}"
            )


def load_unit(name: str) -> UnitSpec:
    """The unit ``name``; one parked as ``<name>.yaml.pending`` (it names a normalizer that is
    not registered yet, so it is kept out of ``units/*.yaml``) is read as if it were in place."""
    path = HERE / f"{name}.yaml"
    pending = path.with_name(path.name + ".pending")
    if not path.is_file() and pending.is_file():
        return UnitSpec.from_text(pending.read_text(encoding="utf-8"), source=path)
    return UnitSpec.from_file(path)


def generate(name: str, count: int = COUNT) -> list[dict[str, Any]]:
    """The annotated examples of unit ``name``: distinct texts, ``NO_VALUE_SHARE`` of them empty."""
    unit = load_unit(name)
    rng = random.Random(SEED + UNITS.index(name))
    examples: list[dict[str, Any]] = []
    seen: set[str] = set()
    STATS.clear()
    while len(examples) < count:
        try:
            example, wanted = MAKERS[name](rng, rng.random() < NO_VALUE_SHARE)
            _check(example, wanted, unit)
        except Rejected as rejected:
            STATS[str(rejected).split(":")[0]] += 1
            continue
        if example["text"] in seen:
            continue
        seen.add(example["text"])
        examples.append(example)
    return examples


def to_jsonl(examples: list[dict[str, Any]]) -> str:
    """One compact JSON object per line, non-ASCII kept as written."""
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) every library unit's annotated examples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--stats", action="store_true", help="print dropped candidates")
    parser.add_argument("units", nargs="*", default=list(UNITS), help="units (default: all)")
    args = parser.parse_args(argv)
    status = 0
    for name in args.units:
        path = HERE / f"{name}.annotated.jsonl"
        content = to_jsonl(generate(name))
        if args.stats:
            print(f"{name}: {sum(STATS.values())} dropped", dict(STATS.most_common()))
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
