"""Deterministic generator of ``extract_penalty_clauses``' annotated examples (its CRF's data).

Run ``python units/make_records_annotated.py`` from the repository root to (re)write
``units/extract_penalty_clauses.annotated.jsonl``; ``--check`` compares instead and exits 1 on a
difference. One ``random.Random(SEED)`` drives every choice, so the file is reproducible.

Each text is a contract excerpt in English, German or French: an optional heading, zero to three
penalty clauses and distracting sentences (the contract price, payment terms, liability caps,
insurance sums, delivery dates, delays without a penalty), in prose, numbered lists, hard-wrapped
paragraphs or tables (pipes, tabs or aligned columns; the currency sometimes only in the header).
Labelled are the penalty amount (``AMOUNT``), its currency (``CURRENCY``) and what triggers it
(``TRIGGER``: "late delivery", "per day of delay", "Verletzung der Geheimhaltungspflicht"); a
cap, a price or a sum insured is never labelled. A clause may lack a trigger or a currency.

The texts of ``extract_penalty_clauses.heldout.jsonl`` are written separately, by hand, and
never pass through this file.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 1807
COUNT = 700
OUT = Path(__file__).with_name("extract_penalty_clauses.annotated.jsonl")


@dataclass
class _Text:
    """A text being written, with its labelled spans."""

    parts: list[str] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    length: int = 0

    def add(self, piece: str, label: str | None = None) -> None:
        if label is not None and piece:
            self.spans.append(
                {"start": self.length, "end": self.length + len(piece), "label": label,
                 "value": piece}
            )  # fmt: skip
        self.parts.append(piece)
        self.length += len(piece)

    def extend(self, other: _Text) -> None:
        for span in other.spans:
            self.spans.append(
                {
                    **span,
                    "start": int(span["start"]) + self.length,
                    "end": int(span["end"]) + self.length,
                }
            )
        self.parts.append("".join(other.parts))
        self.length += other.length

    @property
    def text(self) -> str:
        return "".join(self.parts)


# -- values --------------------------------------------------------------------------------


def _amount(rng: random.Random, language: str) -> str:
    value = rng.choice([50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 800, 1000, 1200, 1500,
                        2000, 2500, 3000, 5000, 7500, 10000, 12500, 15000, 20000, 25000, 50000,
                        100000, 250000])  # fmt: skip
    if rng.random() < 0.3:
        value = rng.randint(2, 999) * rng.choice([1, 5, 10, 50])
    cents = rng.random() < 0.35
    style = {"en": ["1,250.00", "1250"], "de": ["1.250,00", "1250"], "fr": ["1 250,00", "1250"]}
    pattern = rng.choice(style[language] + (["1'250.00"] if rng.random() < 0.05 else []))
    whole = f"{value:,}" if value >= 1000 else str(value)
    if pattern == "1250":
        whole = str(value) if rng.random() < 0.6 or value < 1000 else whole
        if language != "en" and value >= 1000 and "," in whole:
            whole = whole.replace(",", "." if language == "de" else "\u202f")
        return whole + (("." if language == "en" else ",") + "00" if cents else "")
    if pattern == "1.250,00":
        return whole.replace(",", ".") + (",00" if cents else "")
    if pattern == "1 250,00":
        return whole.replace(",", rng.choice([" ", "\u202f", "."])) + (",00" if cents else "")
    if pattern == "1'250.00":
        return whole.replace(",", "'") + (".00" if cents else "")
    return whole + (".00" if cents else "")


_CURRENCIES = {
    "en": [("EUR", "code"), ("€", "symbol"), ("euros", "word"), ("USD", "code"), ("$", "symbol"),
           ("US$", "symbol"), ("GBP", "code"), ("£", "symbol"), ("CHF", "code"), ("pounds", "word"),
           ("dollars", "word")],
    "de": [("EUR", "code"), ("€", "symbol"), ("Euro", "word"), ("CHF", "code"), ("USD", "code")],
    "fr": [("EUR", "code"), ("€", "symbol"), ("euros", "word"), ("CHF", "code"),
           ("francs suisses", "word")],
}  # fmt: skip


def _money(rng: random.Random, language: str, *, label: bool = True) -> _Text:
    """An amount with its currency, in one of the orders that language writes."""
    text = _Text()
    amount = _amount(rng, language)
    currency, kind = rng.choice(_CURRENCIES[language])
    before = kind == "code" and rng.random() < (0.6 if language == "en" else 0.35)
    before |= currency in {"$", "US$", "£"} or (currency == "€" and language == "en"
                                                 and rng.random() < 0.7)  # fmt: skip
    if currency == "francs suisses" or kind == "word":
        before = False
    gap = "" if kind == "symbol" and before else " "
    if kind == "symbol" and not before and rng.random() < 0.2:
        gap = ""
    if before:
        text.add(currency, "CURRENCY" if label else None)
        text.add(gap)
        text.add(amount, "AMOUNT" if label else None)
    else:
        text.add(amount, "AMOUNT" if label else None)
        text.add(gap)
        text.add(currency, "CURRENCY" if label else None)
    return text


# -- triggers ------------------------------------------------------------------------------

# Events ("In the event of ___"), rates written after the money ("___" = "per day of delay").
_EVENTS = {
    "en": ["late delivery", "delay in delivery", "late completion of the works",
           "a breach of the confidentiality obligations",
           "failure to meet the agreed service levels",
           "non-compliance with the safety regulations", "early termination by the Customer",
           "delay in handing over the documentation", "a missed milestone",
           "unauthorised subcontracting", "a violation of the non-solicitation clause",
           "failure to provide the performance bond", "late submission of the monthly report",
           "each missed delivery date", "non-delivery", "a breach of the exclusivity clause",
           "delayed commissioning of the plant", "late return of the rented equipment",
           "each hour of unplanned downtime", "a data protection breach"],
    "de": ["verspäteter Lieferung", "Lieferverzug", "Verletzung der Geheimhaltungspflicht",
           "Überschreitung des Fertigstellungstermins", "Nichteinhaltung der Service-Level",
           "Verstoß gegen das Wettbewerbsverbot", "verspäteter Abnahme", "Nichterfüllung",
           "Verstoß gegen die Sicherheitsvorschriften", "unerlaubter Weitergabe von Daten",
           "verspäteter Rückgabe der Mietsache", "Verzug mit der Dokumentation"],
    "fr": ["retard de livraison", "retard dans l'exécution des travaux",
           "violation de l'obligation de confidentialité", "non-respect des niveaux de service",
           "résiliation anticipée", "non-respect des consignes de sécurité",
           "retard de mise en service", "défaut de livraison", "sous-traitance non autorisée",
           "retard dans la remise des documents"],
}  # fmt: skip
_RATES = {
    "en": ["per day of delay", "for each day of delay", "per calendar day of delay",
           "for each week of delay", "per working day of delay", "for each commenced week of delay",
           "per day of late delivery", "per hour of downtime",
           "for each day the deadline is exceeded",
           "per late shipment", "for every day of late completion", "per incident"],
    "de": ["je Kalendertag des Verzugs", "pro Tag der Verspätung",
    "für jede angefangene Woche des Verzugs",
           "je Werktag der Überschreitung", "pro Verstoß", "je Tag verspäteter Lieferung"],
    "fr": ["par jour de retard", "par jour calendaire de retard", "par semaine de retard entamée",
           "par infraction constatée", "par jour ouvré de retard", "pour chaque jour de retard"],
}  # fmt: skip

# Conditions written as a clause ("If the Supplier ___"): the clause is the trigger.
_CONDITIONS = {
    "en": ["fails to deliver the goods by the agreed delivery date",
           "does not complete the works by the completion date",
           "discloses confidential information to a third party",
           "replaces key personnel without prior written consent",
           "fails to submit the as-built drawings on time", "misses the agreed response time",
           "does not return the equipment at the end of the rental period",
           "fails to remedy a defect within the agreed period",
           "breaches the exclusivity undertaking", "fails to maintain the required insurance"],
    "de": ["den vereinbarten Liefertermin nicht einhält",
    "gegen die Geheimhaltungspflicht verstößt",
           "die Frist zur Mängelbeseitigung überschreitet", "die Unterlagen verspätet vorlegt",
           "ohne Zustimmung Subunternehmer einsetzt"],
    "fr": ["ne respecte pas le délai de livraison", "divulgue des informations confidentielles",
           "ne remet pas les documents dans les délais",
           "ne corrige pas un défaut dans le délai convenu"],
}  # fmt: skip
_NOUNS = {  # what the text calls the penalty
    "en": ["a penalty", "liquidated damages", "a contractual penalty", "a service credit",
           "a late charge", "a flat-rate compensation", "a fixed indemnity", "delay damages"],
    "de": ["eine Vertragsstrafe", "eine Pönale", "einen pauschalierten Schadensersatz",
           "eine Konventionalstrafe"],
    "fr": ["une pénalité", "une indemnité forfaitaire", "une astreinte", "des pénalités"],
}  # fmt: skip
_SHORT_RATES = {"en": ["per day", "per week", "a day", "per occurrence"],
                "de": ["pro Tag", "je Woche", "pro Fall"],
                "fr": ["par jour", "par semaine", "par manquement"]}  # fmt: skip

_PARTIES = {
    "en": ["the Supplier", "the Contractor", "the Seller", "the Service Provider", "the Vendor",
           "the Licensee", "the Carrier", "the Subcontractor"],
    "de": ["der Auftragnehmer", "der Lieferant", "der Verkäufer", "der Dienstleister",
           "der Unternehmer"],
    "fr": ["le Fournisseur", "le Prestataire", "le Titulaire", "l'Entrepreneur", "le Vendeur"],
}  # fmt: skip


def _label(text: _Text, template: str, slots: dict[str, _Text | tuple[str, str | None]]) -> None:
    """Write ``template``, filling ``{name}`` slots with labelled or plain pieces."""
    rest = template
    while "{" in rest:
        before, _, tail = rest.partition("{")
        name, _, rest = tail.partition("}")
        text.add(before)
        slot = slots[name]
        if isinstance(slot, _Text):
            text.extend(slot)
        else:
            text.add(*slot)
    text.add(rest)


_EVENT_CLAUSES = {
    "en": [
        "In the event of {E}, {P} shall pay liquidated damages of {M}.",
        "If {P} is responsible for {E}, it shall pay a contractual penalty of {M}.",
        "{P} shall pay the Buyer a penalty of {M} for {E}.",
        "For {E}, a penalty of {M} shall be payable by {P}.",
        "Liquidated damages of {M} apply in case of {E}.",
        "{Ecap} will result in a penalty of {M}, payable within 30 days of written notice.",
        "{P} agrees to pay {M} as liquidated damages for {E}, without prejudice to further claims.",
        "Should {E} occur, {P} shall owe the Customer a fixed penalty of {M}.",
    ],
    "de": [
        "Bei {E} zahlt {P} eine Vertragsstrafe in Höhe von {M}.",
        "Für den Fall der {E} verpflichtet sich {P} zur Zahlung einer Vertragsstrafe von {M}.",
        "Im Falle von {E} wird eine Konventionalstrafe von {M} fällig.",
        "Wegen {E} schuldet {P} eine pauschale Vertragsstrafe von {M}.",
    ],
    "fr": [
        "En cas de {E}, {P} versera une pénalité de {M}.",
        "Tout {E} donnera lieu à une pénalité forfaitaire de {M}.",
        "{Pcap} sera redevable d'une indemnité de {M} en cas de {E}.",
        "Une pénalité de {M} sera appliquée en cas de {E}.",
    ],
}  # fmt: skip
_RATE_CLAUSES = {
    "en": [
        "{P} shall pay a penalty of {M} {R}.",
        "Liquidated damages shall amount to {M} {R}, capped at {CAP}.",
        "If the delivery date is missed, {P} shall pay {M} {R}.",
        "A contractual penalty of {M} {R} applies, up to a maximum of 10% of the order value.",
        "The penalty for late completion is {M} {R}.",
        "{P} shall be liable for liquidated damages of {M} {R}, not exceeding {CAP} in total.",
    ],
    "de": [
        "Die Vertragsstrafe beträgt {M} {R}, höchstens jedoch {CAP}.",
        "{Pcap} zahlt eine Vertragsstrafe von {M} {R}.",
        "Überschreitet {P} den Liefertermin, so schuldet er {M} {R}.",
        "Es wird eine Vertragsstrafe von {M} {R} vereinbart, insgesamt maximal 5 % des "
        "Auftragswerts.",
    ],
    "fr": [
        "{Pcap} devra une pénalité de {M} {R}, plafonnée à {CAP}.",
        "Les pénalités de retard sont fixées à {M} {R}.",
        "Une pénalité de {M} {R} sera due par {P}.",
        "Passé ce délai, {P} versera {M} {R}.",
    ],
}  # fmt: skip
_CONDITION_CLAUSES = {
    "en": ["If {P} {C}, it shall pay {N} of {M}.", "Where {P} {C}, {N} of {M} becomes due.",
           "{Pcap} shall pay {M} as {Nbare} if it {C}.",
           "The Customer may claim {N} of {M} where {P} {C}."],
    "de": ["Falls {P} {C}, zahlt er {N} von {M}.", "Wenn {P} {C}, ist {N} von {M} verwirkt."],
    "fr": ["Si {P} {C}, il versera {N} de {M}.", "Lorsque {P} {C}, {N} de {M} est due."],
}  # fmt: skip
_EVENT_RATE_CLAUSES = {  # an event and a short rate: the event is the trigger
    "en": ["In the event of {E}, {P} shall pay {N} of {M} {S}.", "{Ecap}: {M} {S}.",
           "{Ecap} – {N} of {M} {S}", "For {E}, {P} owes {M} {S}."],
    "de": ["Bei {E} zahlt {P} {M} {S}.", "{Ecap}: {M} {S}."],
    "fr": ["En cas de {E}, {P} versera {M} {S}.", "{Ecap} : {M} {S}."],
}  # fmt: skip
_LINE_CLAUSES = {  # a list line: the event, then the amount
    "en": ["{Ecap}: {M}", "{Ecap} – {M}", "{Ecap}: {N} of {M}"],
    "de": ["{Ecap}: {M}", "{Ecap} – {M}"],
    "fr": ["{Ecap} : {M}", "{Ecap} – {M}"],
}  # fmt: skip
_BARE_CLAUSES = {  # a penalty with no trigger stated
    "en": ["{P} shall pay a contractual penalty of {M}.", "The agreed penalty is {M}."],
    "de": ["Die Vertragsstrafe beträgt {M}.", "{Pcap} zahlt eine Vertragsstrafe von {M}."],
    "fr": ["La pénalité est fixée à {M}.", "{Pcap} versera une pénalité de {M}."],
}  # fmt: skip
_PAIR_CLAUSES = {  # two penalties in one sentence
    "en": ["{Pcap} shall pay {M} {R} and {M2} for {E2}.",
           "Penalties: {M} {R}; {M2} for {E2}.",
           "The penalty is {M} for {E} and {M2} for {E2}."],
    "de": ["{Pcap} zahlt {M} {R} sowie {M2} bei {E2}.",
           "Vertragsstrafen: {M} {R}; {M2} bei {E2}."],
    "fr": ["{Pcap} versera {M} {R} et {M2} en cas de {E2}.",
           "Pénalités : {M} {R} ; {M2} en cas de {E2}."],
}  # fmt: skip

_DISTRACTORS = {
    "en": ["The total contract price is {X}, payable in three instalments.",
           "Invoices are payable within 30 days of receipt.",
           "The Supplier's total liability under this Agreement is limited to {X}.",
           "The Contractor shall maintain liability insurance with a sum insured of at least {X}.",
           "Delivery shall take place no later than 15 March at the Buyer's warehouse.",
           "In the event of delay, the Buyer may set a reasonable grace period.",
           "A deposit of {X} is due on signature.",
           "The monthly service fee amounts to {X} excluding VAT.",
           "Force majeure events suspend the obligations of both parties.",
           "Either party may terminate this Agreement with three months' notice.",
           "The Buyer shall inspect the goods within 5 working days of delivery.",
           "Late payment interest accrues at 8 percentage points above the base rate.",
           "Any amendment must be made in writing and signed by both parties.",
           "A penalty of 0.5% of the order value applies for each day of delay.",
           "The Buyer shall refund the advance of {X} on termination.",
           "Overtime is invoiced at {X} per hour.", "Spare parts cost {X} per unit.",
           "Rates start at {X} per night.",
           "Liquidated damages shall not exceed 10% of the contract price in aggregate."],
    "de": ["Der Gesamtpreis beträgt {X} zuzüglich Mehrwertsteuer.",
           "Rechnungen sind innerhalb von 30 Tagen ohne Abzug zahlbar.",
           "Die Haftung des Auftragnehmers ist auf {X} begrenzt.",
           "Der Liefertermin ist der 30. Juni.",
           "Bei Verzug kann der Auftraggeber eine angemessene Nachfrist setzen.",
           "Der Auftragnehmer unterhält eine Haftpflichtversicherung über {X}.",
           "Eine Anzahlung von {X} ist bei Vertragsschluss fällig.",
           "Änderungen dieses Vertrages bedürfen der Schriftform.",
           "Die Vertragsstrafe beträgt 0,2 % des Auftragswerts je Werktag.",
           "Stundensätze: {X} pro Stunde.", "Der Mietzins beträgt {X} pro Monat."],
    "fr": ["Le prix global du marché s'élève à {X} hors taxes.",
           "Les factures sont payables à 30 jours.",
           "La responsabilité du Prestataire est limitée à {X}.",
           "La livraison aura lieu au plus tard le 15 mars.",
           "En cas de retard, l'Acheteur peut accorder un délai supplémentaire.",
           "Un acompte de {X} est versé à la signature.",
           "Le Titulaire souscrit une assurance responsabilité civile d'un montant de {X}.",
           "Les pénalités sont plafonnées à 10 % du montant du marché.",
           "Le taux horaire est de {X} par heure."],
}  # fmt: skip
_HEADINGS = {
    "en": ["Liquidated damages", "Penalties", "12. Delay and penalties", "Clause 9 – Penalties",
           "SUPPLY AGREEMENT (excerpt)", "Schedule 4: Service credits and penalties",
           "Terms of delivery", "Article 7 Late delivery"],
    "de": ["§ 8 Vertragsstrafe", "Vertragsstrafen", "§ 12 Verzug", "Liefervertrag (Auszug)",
           "Ziffer 5 – Lieferfristen"],
    "fr": ["Article 9 – Pénalités", "Pénalités de retard", "Conditions de livraison",
           "CONTRAT DE FOURNITURE (extrait)"],
}  # fmt: skip
_TABLE_HEADS = {
    "en": [("Event", "Penalty", "Currency"), ("Breach", "Amount", "Currency"),
           ("Trigger", "Liquidated damages", "Cur.")],
    "de": [("Tatbestand", "Vertragsstrafe", "Währung"), ("Verstoß", "Betrag", "Währung")],
    "fr": [("Manquement", "Pénalité", "Devise"), ("Événement", "Montant", "Devise")],
}  # fmt: skip


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _clause(rng: random.Random, language: str, *, lines: bool = False) -> _Text:
    party = rng.choice(_PARTIES[language])
    slots: dict[str, _Text | tuple[str, str | None]] = {
        "P": (party, None), "Pcap": (_cap(party), None), "M": _money(rng, language),
        "M2": _money(rng, language), "CAP": _money(rng, language, label=False),
    }  # fmt: skip
    event = rng.choice(_EVENTS[language])
    slots["E"] = (event, "TRIGGER")
    slots["Ecap"] = (_cap(event), "TRIGGER")
    slots["R"] = (rng.choice(_RATES[language]), "TRIGGER")
    slots["E2"] = (rng.choice([e for e in _EVENTS[language] if e != event]), "TRIGGER")
    slots["C"] = (rng.choice(_CONDITIONS[language]), "TRIGGER")
    noun = rng.choice(_NOUNS[language])
    slots["N"] = (noun, None)
    slots["Nbare"] = (noun.split(" ", 1)[1] if noun.startswith(("a ", "an ")) else noun, None)
    slots["S"] = (rng.choice(_SHORT_RATES[language]), None)
    families = [
        (_EVENT_CLAUSES, 0.26),
        (_RATE_CLAUSES, 0.24),
        (_CONDITION_CLAUSES, 0.16),
        (_EVENT_RATE_CLAUSES, 0.12),
        (_BARE_CLAUSES, 0.07),
        (_PAIR_CLAUSES, 0.08),
    ]
    if lines:
        families.append((_LINE_CLAUSES, 0.2))
    family = rng.choices([f for f, _ in families], [w for _, w in families])[0]
    template = rng.choice(family[language])
    text = _Text()
    _label(text, template, slots)
    return text


def _distractor(rng: random.Random, language: str) -> _Text:
    text = _Text()
    _label(text, rng.choice(_DISTRACTORS[language]), {"X": _money(rng, language, label=False)})
    return text


def _table(rng: random.Random, language: str, rows: int) -> _Text:
    """A penalty schedule as a table; the currency in its own column or only in the header."""
    head = rng.choice(_TABLE_HEADS[language])
    style = rng.choice(["pipe", "tab", "spaces"])
    in_header = rng.random() < 0.35
    extra = rng.random() < 0.3  # a column between the trigger and the amount
    inline = not in_header and rng.random() < 0.25  # the currency inside the amount cell
    currency, _ = rng.choice([c for c in _CURRENCIES[language] if c[1] == "code"])
    text = _Text()

    def row(cells: list[list[tuple[str, str | None]]]) -> None:
        widths = [34, 18, 18]
        written = 0
        for index, cell in enumerate(cells):
            if index:
                gap = max(3, widths[index - 1] - written) if style == "spaces" else 0
                text.add({"pipe": " | ", "tab": "\t"}.get(style, " " * gap))
            elif style == "pipe":
                text.add("| ")
            for piece, label in cell:
                text.add(piece, label)
            written = sum(len(piece) for piece, _ in cell)
        text.add(" |\n" if style == "pipe" else "\n")

    middle = rng.choice(["Due date", "Threshold", "Ref."]) if language == "en" else "Ref."
    header: list[list[tuple[str, str | None]]]
    if in_header:
        header = [[(head[0], None)], [(f"{head[1]} (", None), (currency, "CURRENCY"), (")", None)]]
    elif inline:
        header = [[(head[0], None)], [(head[1], None)]]
    else:
        header = [[(h, None)] for h in head]
    if extra:
        header.insert(1, [(middle, None)])
    row(header)
    if style == "pipe":
        text.add("|---" * len(header) + "|\n")
    events = rng.sample(_EVENTS[language] + _RATES[language], rows)
    for number, event in enumerate(events, start=1):
        amount: tuple[str, str | None] = (_amount(rng, language), "AMOUNT")
        cells: list[list[tuple[str, str | None]]] = [[(_cap(event), "TRIGGER")], [amount]]
        if inline:
            cells[1] = [(currency, "CURRENCY"), (" ", None), amount]
        elif not in_header:
            cells.append([(currency, "CURRENCY")])
        if extra:
            cells.insert(1, [(rng.choice([f"{number * 7} days", f"{number}.{rng.randint(1, 9)}",
                                         f"{rng.randint(1, 28)} March"]), None)])  # fmt: skip
        row(cells)
    return text


def _wrap(text: _Text, width: int) -> _Text:
    """Hard-wrap at spaces outside amounts and currencies (prose printed in narrow columns)."""
    raw = list(text.text)
    keep = [False] * len(raw)
    for span in text.spans:
        if span["label"] != "TRIGGER":
            for i in range(int(span["start"]), int(span["end"])):
                keep[i] = True
    column = 0
    for i, char in enumerate(raw):
        column = 0 if char == "\n" else column + 1
        if char == " " and column > width and not keep[i]:
            raw[i], column = "\n", 0
    out = _Text()
    out.parts, out.spans, out.length = ["".join(raw)], text.spans, text.length
    for span in out.spans:
        span["value"] = out.parts[0][int(span["start"]) : int(span["end"])]
    return out


def example(rng: random.Random) -> dict[str, Any]:
    """One annotated contract excerpt."""
    language = rng.choices(["en", "de", "fr"], [0.55, 0.25, 0.2])[0]
    count = rng.choices([0, 1, 2, 3], [0.22, 0.4, 0.24, 0.14])[0]
    pieces: list[_Text] = []
    listing = rng.choice(["prose", "lines", "numbered", "bullets"])
    tabled = count >= 2 and rng.random() < 0.3
    table = _table(rng, language, count) if tabled else None
    if table is not None:
        pieces.append(table)
    else:
        pieces += [_clause(rng, language, lines=listing != "prose") for _ in range(count)]
    distractors = rng.choices([0, 1, 2, 3], [2, 4, 3, 1])[0]
    pieces += [_distractor(rng, language) for _ in range(distractors)]
    rng.shuffle(pieces)
    text = _Text()
    if rng.random() < 0.55:
        breaks = ["\n", "\n\n"] if tabled and pieces[0] is table else ["\n", "\n\n", ". "]
        text.add(rng.choice(_HEADINGS[language]) + rng.choice(breaks))
    for index, piece in enumerate(pieces):
        if index and ("\n" in piece.text or text.text.endswith("\n")):
            text.add("" if text.text.endswith("\n") else "\n")  # a table starts on its own line
        elif index:
            text.add({"prose": " ", "lines": "\n", "numbered": "\n", "bullets": "\n"}[listing])
        if listing == "numbered" and "\n" not in piece.text:
            text.add(rng.choice([f"{index + 1}. ", f"({chr(97 + index)}) ", f"9.{index + 1} "]))
        elif listing == "bullets" and "\n" not in piece.text:
            text.add(rng.choice(["- ", "• "]))
        text.extend(piece)
    if listing == "prose" and not tabled and rng.random() < 0.3:
        text = _wrap(text, rng.choice([60, 72, 80]))
    return {"text": text.text.rstrip("\n"), "spans": sorted(text.spans, key=lambda s: s["start"])}


def render() -> str:
    """The whole file's content."""
    rng = random.Random(SEED)
    seen: set[str] = set()
    lines: list[str] = []
    while len(lines) < COUNT:
        item = example(rng)
        if item["text"] in seen:
            continue
        seen.add(str(item["text"]))
        lines.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write (or with ``--check`` compare) the annotated examples file."""
    content = render()
    if "--check" in sys.argv[1:]:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == content
        print(f"{OUT.name}: {'up to date' if same else 'differs; rerun without --check'}")
        return 0 if same else 1
    OUT.write_text(content, encoding="utf-8")
    print(f"wrote {COUNT} examples to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
