"""Regenerate the term dictionaries under ``termdicts/`` that are derived from public data.

Reads:

- Unicode CLDR currency display names, plural names and symbols as shipped in the ``babel``
  package (Unicode License v3), for the locales in ``CURRENCY_LOCALES``;
- the WordNet 3.0 noun database (``data.noun`` and the four ``index.*`` files) from the Debian
  package ``wordnet-base`` (``/usr/share/wordnet`` unless ``--wordnet DIR``);
- the hand-written ``*_terms.tsv`` files beside this script, whose surface forms are kept out of
  the generated files so that no surface form is shipped twice.

Writes (sorted, so a rerun over the same data yields the same bytes):
``finance/currencies.tsv``, ``finance/finance.tsv``, ``legal/legal.tsv``,
``insurance/insurance.tsv``.

Run: ``python termdicts/make_termdicts.py`` (``--check`` only reports whether the files are
up to date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# Shared row rules (the loader enforces the same ones)
# ---------------------------------------------------------------------------------------------

MIN_CHARS, MAX_CHARS, MAX_WORDS = 2, 60, 6


def surface_key(text: str) -> str:
    """The form two surface forms are compared in: case-folded, whitespace collapsed."""
    return " ".join(text.split()).casefold()


def valid_surface(text: str) -> bool:
    """Whether ``text`` may be a term or an alias."""
    return (
        MIN_CHARS <= len(text) <= MAX_CHARS
        and len(text.split()) <= MAX_WORDS
        and text == text.strip()
        and not any(c in text for c in "\t\n\r<>|")
        and not text.endswith((".", "!", "?"))
    )


@dataclass
class Row:
    """One dictionary row: a term, its canonical form, category, aliases and language."""

    term: str
    canonical: str
    category: str
    aliases: list[str] = field(default_factory=list)
    lang: str = ""

    def cells(self) -> list[str]:
        """The row's five TSV cells."""
        return [self.term, self.canonical, self.category, "|".join(self.aliases), self.lang]


def read_surfaces(path: Path) -> set[str]:
    """The surface keys (terms and aliases) of one dictionary file."""
    keys: set[str] = set()
    header_seen = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not header_seen:
            if line.startswith("#") or not line.strip():
                continue
            header_seen = True
            continue
        if not line.strip():
            continue
        cells = line.split("\t")
        keys.add(surface_key(cells[0]))
        if len(cells) > 3 and cells[3]:
            keys.update(surface_key(a) for a in cells[3].split("|"))
    return keys


def render(meta: dict[str, str], rows: list[Row]) -> str:
    """A dictionary file: metadata comments, header, rows sorted case-insensitively."""
    lines = [f"# {key}: {value}" for key, value in meta.items()]
    lines.append("term\tcanonical\tcategory\taliases\tlang")
    ordered = sorted(rows, key=lambda r: (surface_key(r.term), r.term, r.canonical))
    lines += ["\t".join(r.cells()) for r in ordered]
    return "\n".join(lines) + "\n"


class Claims:
    """Surface forms already shipped by some file; a later file may not reuse them."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def row(self, surfaces: list[str], canonical: str, category: str, lang: str = "") -> Row | None:
        """A row of the ``surfaces`` nobody has claimed yet (first one is the term), or None."""
        free: list[str] = []
        seen: set[str] = set()
        for s in surfaces:
            key = surface_key(s)
            if key in self.taken or key in seen or not valid_surface(s):
                continue
            seen.add(key)
            free.append(s)
        if not free:
            return None
        self.taken.update(seen)
        return Row(free[0], canonical, category, free[1:], lang)


# ---------------------------------------------------------------------------------------------
# Currencies from CLDR (via babel)
# ---------------------------------------------------------------------------------------------

CURRENCY_LOCALES = ("en", "de", "fr", "es", "it", "zh", "ja")
# Currencies that are legal tender in some territory on this day count as current.
REFERENCE_DATE = dt.date(2025, 7, 1)
# ISO codes that are also everyday English words or names; as bare surface forms they would
# match ordinary text ("all", "cup", "top", "try"), so only the currency's names are kept.
CODES_NOT_AS_SURFACE = frozenset(
    "ALL BAM BOB CAD CUP DOP GEL GIP MAD MOP NAD PEN RON SOS TOP TRY".split()
)


def currency_rows(claims: Claims, verbose: bool = False) -> tuple[list[Row], dict[str, str]]:
    """One row per (currency, locale): the display name, plural names, ISO code and symbols."""
    import babel
    import babel.core
    import babel.numbers
    from babel import Locale

    english = Locale("en")
    codes: set[str] = set()
    for territory in english.territories:
        if territory.isdigit():  # regions such as 150 (Europe) are not territories
            continue
        codes.update(
            babel.numbers.get_territory_currencies(
                territory, start_date=REFERENCE_DATE, end_date=REFERENCE_DATE, tender=True
            )
        )

    # surface -> {(code, locale)} over every locale, to find forms shared by two currencies.
    found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for lang in CURRENCY_LOCALES:
        locale = Locale(lang)
        plurals = locale._data["currency_names_plural"]
        for code in sorted(codes):
            forms: list[str] = []
            name = locale.currencies.get(code)
            if name:
                forms.append(name)
            if code in plurals:
                forms += [plurals[code][k] for k in sorted(plurals[code])]
            if lang == "ja":  # CLDR spaces katakana names ("スイス フラン"); text often does not
                forms += [f.replace(" ", "") for f in forms if " " in f]
            for form in forms:
                form = " ".join(form.split())
                found[surface_key(form)].append((code, lang, form))
            # Codes and symbols are not words of one language: they go on the English row.
            # Symbols made only of letters ("kr", "Ft", "Br") read as words; keep "US$", "CN¥".
            symbol = " ".join(locale.currency_symbols.get(code, "").split())
            if symbol and symbol != code and not symbol.isalpha():
                found[surface_key(symbol)].append((code, "en", symbol))
            if code not in CODES_NOT_AS_SURFACE:
                found[surface_key(code)].append((code, "en", code))

    ambiguous = {k for k, uses in found.items() if len({c for c, _, _ in uses}) > 1}
    if verbose:
        print("currency forms shared by two currencies, left out:", ", ".join(sorted(ambiguous)))
    per_row: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, uses in found.items():
        if key in ambiguous:
            continue
        order = {lang: i for i, lang in enumerate(CURRENCY_LOCALES)}
        code, lang, form = min(uses, key=lambda u: order[u[1]])  # the first locale owns it
        per_row[(code, lang)].append(form)

    rows: list[Row] = []
    for code, lang in sorted(per_row, key=lambda cl: (cl[0], CURRENCY_LOCALES.index(cl[1]))):
        name = Locale(lang).currencies.get(code, "")
        forms = sorted(per_row[(code, lang)], key=lambda f: (f != name, f.casefold(), f))
        row = claims.row(forms, code, "currency", "" if lang == "en" else lang)
        if row:
            rows.append(row)
    meta = {
        "name": "currencies",
        "lang": "en",
        "source": (
            f"Unicode CLDR {babel.core.get_cldr_version()} currency names, plural names and "
            f"symbols via babel {babel.__version__}; locales {', '.join(CURRENCY_LOCALES)}; "
            f"currencies that are legal tender somewhere on {REFERENCE_DATE.isoformat()}"
        ),
        "license": "Unicode-3.0",
        "copyright": "Copyright © 2004-2025 Unicode, Inc. See termdicts/LICENSE-Unicode-3.0.txt",
    }
    return rows, meta


# ---------------------------------------------------------------------------------------------
# WordNet 3.0
# ---------------------------------------------------------------------------------------------


@dataclass
class Synset:
    """A noun synset of ``data.noun``."""

    offset: str
    lexfile: int
    lemmas: list[str]
    hyponyms: list[str]
    domains: list[str]


class WordNet:
    """The parts of the WordNet noun database the dictionaries use."""

    def __init__(self, root: Path) -> None:
        self.synsets: dict[str, Synset] = {}
        for line in (root / "data.noun").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):  # licence header
                continue
            fields = line.split(" | ")[0].split()
            offset, lexfile = fields[0], int(fields[1])
            count = int(fields[3], 16)
            lemmas = [fields[4 + 2 * i] for i in range(count)]
            i = 4 + 2 * count
            hyponyms: list[str] = []
            domains: list[str] = []
            for k in range(int(fields[i])):
                symbol, target, pos = fields[i + 1 + 4 * k : i + 4 + 4 * k]
                if symbol == "~" and pos == "n":  # instance hyponyms (~i) are names: skipped
                    hyponyms.append(target)
                elif symbol == ";c" and pos == "n":
                    domains.append(target)
            self.synsets[offset] = Synset(offset, lexfile, lemmas, hyponyms, domains)
        # Senses per lemma over all parts of speech: how generic a single word is.
        self.senses: dict[str, int] = defaultdict(int)
        for pos in ("noun", "verb", "adj", "adv"):
            for line in (root / f"index.{pos}").read_text(encoding="latin-1").splitlines():
                if line.startswith("  "):
                    continue
                fields = line.split()
                self.senses[fields[0].lower()] += int(fields[2])

    def below(self, offset: str, prune: frozenset[str]) -> list[str]:
        """``offset`` and all its (non-instance) hyponyms, depth first, minus pruned subtrees."""
        out: list[str] = []
        seen: set[str] = set()
        stack = [offset]
        while stack:
            current = stack.pop()
            if current in seen or current in prune:
                continue
            seen.add(current)
            out.append(current)
            stack.extend(reversed(self.synsets[current].hyponyms))
        return out


@dataclass(frozen=True)
class Domain:
    """How one domain's dictionary is drawn from WordNet (offsets are ``data.noun`` synsets)."""

    name: str
    description: str
    roots: tuple[tuple[str, str], ...]  # (synset, category): the synset and all its hyponyms
    singles: tuple[tuple[str, str], ...] = ()  # (synset, category): the synset alone
    topics: tuple[str, ...] = ()  # topic-domain synsets: their noun members (pointer ;c)
    topic_categories: dict[int, str] = field(default_factory=dict)  # lexicographer file -> category
    prune: frozenset[str] = frozenset()  # synsets left out together with their hyponyms


def words(text: str) -> frozenset[str]:
    """A set of lemmas written one a line (so that multiword lemmas read naturally)."""
    return frozenset(line.strip().casefold() for line in text.strip().splitlines())


# Single words are kept only when WordNet gives them few senses; these are kept all the same,
# being the usual names of their concepts in the domains' documents.
SINGLE_WORDS = words(
    """
    affidavit
    annuity
    audit
    codicil
    coinsurance
    collateral
    commission
    debit
    deductible
    defendant
    dividend
    easement
    equity
    escrow
    indemnity
    injunction
    invoice
    lawsuit
    lien
    mortgage
    overdraft
    plaintiff
    refund
    reinsurance
    subpoena
    surcharge
    tort
    verdict
    warranty
    """
)

# Lemmas left out wherever they occur: archaic, slang, offensive, generic or off-domain.
DROP = words(
    """
    advowson
    affairs
    alcalde
    alienation of affection
    ambulance chaser
    amercement
    ante
    apanage
    appanage
    astuteness
    atonement
    awarding
    backsheesh
    bakshis
    bakshish
    bastardy proceeding
    bean counter
    bearing false witness
    bigamy
    bill-me order
    bja
    blame game
    blood bank
    blood money
    book token
    bootlegging
    bottle bill
    budget items
    buffered aspirin
    calling card
    cash in hand
    chance-medley
    chantry
    chit
    cinema
    city man
    combat pay
    comforts
    committal
    conjugal visitation
    conjugal visitation right
    consistory
    costs
    courthouse
    courtroom
    cozenage
    crown jewel
    deadbeat
    deadbeat dad
    deep pocket
    divvy
    doge
    dole
    drug war
    drumhead court-martial
    easy street
    expending
    expiation
    extradition
    eye bank
    farm bill
    fatwa
    fatwah
    fbi
    filer
    finger-pointing
    fingerpointing
    fisa
    fisc
    fishing licence
    fishing license
    fishing permit
    fly-by-night
    food bank
    footage
    frs
    fsb
    fuel level
    gambling den
    gambling hell
    gambling house
    game law
    game license
    gaming house
    gatherer
    general agent
    government issue
    ground rent
    grubstake
    guerdon
    gunrunning
    gyp
    handclasp
    handshake
    handshaking
    hawking
    heirloom
    hole card
    horse trade
    horse trading
    hunting licence
    hunting license
    hunting permit
    hush money
    imposition
    imprecation
    indecent exposure
    infrastructure
    innuendo
    insinuation
    jackpot
    jointure
    justiciar
    justiciary
    kangaroo court
    kidnapping
    killer bee
    king's ransom
    learner's permit
    lease-lend
    legal jointure
    lend-lease
    letter of mark and reprisal
    letter of marque
    letters of marque
    liberty chit
    library fine
    linage
    loan shark
    lodgement
    lodgment
    lucre
    luncheon voucher
    lying under oath
    m1
    m2
    m3
    marriage brokerage
    marriage mart
    meal ticket
    meed
    messuage
    military issue
    moneyman
    msb
    murder charge
    murder conviction
    murder indictment
    nafta
    nest egg
    never-never
    on-license
    ordeal
    overappraisal
    overestimation
    overvaluation
    own right
    palimony
    paper gold
    pavage
    payola
    peanuts
    peddling
    peppercorn rent
    perpetration
    perspicaciousness
    perspicacity
    phone card
    pipage
    pittance
    poor rates
    pourboire
    praetor
    prebend
    pretor
    privy purse
    promulgator
    public nudity
    pump priming
    qadi
    quaestor
    quarter sessions
    rack rent
    rake-off
    rape conviction
    rates
    redraft
    rente
    requital
    riches
    rip-off
    robbery conviction
    rundown
    scot and lot
    secularisation
    secularization
    seed corn
    seed grain
    seed stock
    sergeant-at-law
    serjeant
    serjeant-at-law
    sex crime
    sex offense
    sexual abuse
    sexual assault
    shahadah
    ship money
    shipping room
    shopping
    shrewdness
    shylock
    sidebar
    simony
    smart money
    smuggling
    soil bank
    spillover
    stakes
    stash
    subtreasury
    suer
    summing up
    swop
    terms
    transcript
    treasure trove
    trial by ordeal
    trier
    trove
    twofer
    uxor
    verification
    viatication
    viaticus
    vigorish
    villeinage
    vouchee
    wherewithal
    """
)


# Roots are listed most specific first: a synset reachable from two roots takes the category of
# the first. Lexicographer files: 4 act, 7 attribute, 9 cognition, 10 communication, 14 group,
# 18 person, 21 possession, 23 quantity, 24 relation, 26 state, 28 time.
FINANCE = Domain(
    name="finance",
    description="finance, banking, accounting, securities, taxation and commerce",
    roots=(
        ("06480506", "instrument"),  # derivative instrument
        ("13241600", "instrument"),  # option
        ("06481156", "instrument"),  # negotiable instrument
        ("13416345", "instrument"),  # security, certificate
        ("13333833", "instrument"),  # stock (capital raised through shares)
        ("13342135", "instrument"),  # share
        ("13381734", "instrument"),  # check, cheque
        ("13377268", "instrument"),  # draft, bill of exchange
        ("06526004", "instrument"),  # debenture
        ("06516955", "document"),  # bill, invoice
        ("06516595", "document"),  # financial statement
        ("13403964", "document"),  # balance sheet
        ("13354985", "document"),  # account statement
        ("06529219", "document"),  # order, purchase order
        ("06518068", "document"),  # coupon, voucher
        ("06528783", "document"),  # appraisal, estimate
        ("13319032", "rate"),  # interest rate
        ("13325010", "rate"),  # rate, charge per unit
        ("13318584", "interest"),
        ("13352138", "loan"),  # mortgage
        ("13398953", "loan"),
        ("13397174", "debt"),
        ("14490319", "liability"),  # indebtedness, financial obligation
        ("13374281", "credit"),  # credit, deferred payment
        ("13378518", "credit"),
        ("13929037", "account"),  # account, business relationship
        ("13381145", "deposit"),  # bank deposit
        ("13308999", "tax"),
        ("13261916", "tax"),  # tax revenue
        ("13320168", "fee"),
        ("13306870", "fee"),  # charge (price of a service)
        ("13303315", "price"),
        ("13408023", "income"),  # dividend
        ("13349834", "payment"),  # down payment
        ("13296899", "benefit"),
        ("13279262", "payment"),  # wage, pay
        ("13278375", "payment"),  # payment (a sum)
        ("01120448", "payment"),  # payment (the act)
        ("13275495", "expense"),
        ("13275847", "expense"),  # cost
        ("13258362", "income"),  # net income, profit
        ("13256691", "income"),  # revenue, gross
        ("13255145", "income"),
        ("13327231", "loss"),
        ("13354420", "capital"),  # working capital
        ("13353607", "capital"),
        ("13358549", "fund"),
        ("13356112", "fund"),  # funds, finances
        ("13333237", "fund"),  # investment funds
        ("13330283", "asset"),  # receivables
        ("13407208", "asset"),  # accounts receivable
        ("13330764", "asset"),  # reserve assets
        ("13332670", "asset"),  # intangible asset
        ("13333047", "asset"),  # liquid assets
        ("13333696", "asset"),  # equity
        ("00079398", "transaction"),  # trading
        ("01091905", "transaction"),  # trade
        ("01093085", "transaction"),  # exchange of currencies
        ("01094575", "transaction"),  # initial public offering
        ("01111750", "transaction"),  # importing
        ("01111952", "transaction"),  # exporting
        ("01113068", "transaction"),  # selling
        ("01114824", "transaction"),  # sale
        ("00079018", "transaction"),  # purchase
        ("01107932", "transaction"),  # transfer, conveyance
        ("01111133", "transaction"),  # borrowing
        ("01120855", "transaction"),  # evasion, nonpayment
        ("13411157", "accounting"),  # audit
        ("14478433", "insolvency"),  # bankruptcy, failure
        ("08054721", "institution"),  # financial institution
        ("08070850", "institution"),  # investment company
        ("08072837", "market"),  # securities industry
        ("04323026", "market"),  # stock exchange
        ("09761403", "party"),  # accountant
        ("09837824", "party"),  # banker
        ("09777012", "party"),  # broker, agent
        ("10216106", "party"),  # investor
        ("10090020", "party"),  # financier
        ("09976728", "party"),  # creditor
        ("09997622", "party"),  # debtor
    ),
    singles=(
        ("13329641", "asset"),  # assets
        ("15281329", "ratio"),  # return on investment
        ("13309776", "asset"),  # tax base
        ("13344462", "instrument"),  # hedge
        ("13375891", "credit"),  # cash advance
        ("13412877", "accounting"),  # payroll
        ("13285619", "instrument"),  # tranche
        ("13289020", "payment"),  # profit sharing
        ("01092974", "transaction"),  # e-commerce
        ("01110274", "transaction"),  # deal, business deal
    ),
    topics=(
        "06150633",  # finance
        "01100658",  # banking
        "01100273",  # banking (the business)
        "06149484",  # economics
        "01090446",  # commerce
        "13308999",  # tax
        "04323026",  # stock exchange
        "05662532",  # accounting
        "00618734",  # accountancy
        "01099436",  # investing
        "13333237",  # investment funds
        "01098968",  # corporate finance
    ),
    topic_categories={
        4: "activity",
        9: "concept",
        10: "document",
        14: "organization",
        18: "party",
        21: "amount",
        23: "measure",
        24: "ratio",
        26: "market_condition",
        28: "period",
    },
    prune=frozenset(
        {
            "06518719",  # ticket (tickets for travel and theatres)
            "13308147",  # fare
            "13284048",  # ransom
            "01121585",  # ransom (the act)
            "13304927",  # highway robbery
            "13281925",  # blood money
            "13283187",  # conscience money
            "13283764",  # reward
            "13290676",  # damages (kept for the legal dictionary)
            "13255883",  # easy money
            "13255713",  # double dipping
            "13259797",  # killing, cleanup
            "13260510",  # fast buck
            "13260645",  # filthy lucre
            "13258167",  # box office
            "13258269",  # gate
            "13353858",  # means, substance
            "13356774",  # pocket
            "13356569",  # bankroll
            "01113867",  # traffic (drug traffic, gunrunning)
            "06078088",  # gambling house, placeholder if absent
        }
    ),
)

LEGAL = Domain(
    name="legal",
    description="law, contracts, litigation and legal documents",
    roots=(
        ("06520944", "contract"),
        ("06527851", "contract"),  # sale, sales agreement
        ("06771653", "contract"),  # written agreement
        ("06564387", "legislation"),  # statute, legislative act
        ("06532330", "legislation"),  # law (a document setting forth rules)
        ("06536853", "legislation"),  # bill, measure
        ("06552984", "court_order"),  # writ
        ("06532095", "court_order"),  # act, enactment (decrees, injunctions)
        ("01181902", "proceeding"),  # legal action
        ("01182654", "proceeding"),  # lawsuit
        ("01184814", "proceeding"),  # legal proceeding
        ("01186397", "proceeding"),  # bankruptcy (the legal process)
        ("06733939", "evidence"),
        ("06734467", "evidence"),  # testimony under oath
        ("06559365", "pleading"),
        ("01187810", "decision"),  # judgment, judicial decision
        ("06551784", "decision"),  # legal opinion
        ("06479665", "legal_document"),  # legal document, legal instrument
        ("03649459", "court"),  # court of law
        ("08329453", "court"),  # court, tribunal
        ("05177285", "right"),  # legal right
        ("13341756", "right"),  # right (interest possessed by law)
        ("13286801", "right"),  # interest, stake
        ("13290676", "remedy"),  # damages, indemnification
        ("13353004", "obligation"),  # guarantee, guaranty
        ("00733883", "offense"),  # tort, civil wrong
        ("00766234", "offense"),  # crime
        ("10249950", "professional"),  # lawyer, attorney
        ("10225219", "professional"),  # judge
        ("10266848", "party"),  # litigant
        ("10437852", "party"),  # plaintiff
        ("09762101", "party"),  # defendant
        ("10149527", "party"),  # guarantor, surety
    ),
    topics=(
        "08441203",  # law, jurisprudence
        "00611143",  # law, practice of law
        "06539178",  # criminal law
        "06520944",  # contract
        "06535222",  # legislation, statute law
        "01125693",  # legislation, lawmaking
        "06535035",  # case law, common law
        "08453464",  # civil law
        "08454191",  # maritime law
        "06162223",  # corporation law
        "06162042",  # contract law
        "06162377",  # matrimonial law
    ),
    topic_categories={
        4: "legal_act",
        7: "legal_concept",
        9: "legal_concept",
        10: "legal_document",
        14: "legal_body",
        15: "legal_concept",
        18: "party",
        21: "property",
        24: "legal_relation",
        26: "legal_status",
    },
    prune=frozenset(
        {
            "06500937",  # passport
            "06501748",  # ship's papers
            "06501918",  # manifest
            "06531908",  # working papers
            "06558678",  # ticket (traffic summons)
            "06548110",  # lettre de cachet
            "06726761",  # papal bull
            "06541167",  # imperial decree
            "06541578",  # pragmatic sanction
            "06541301",  # ukase
            "06541726",  # programma
            "06540527",  # curfew
            "06773434",  # treaty (international treaties)
            "06772260",  # covenant, concordat
            "06772094",  # submission
            "06773684",  # alliance
            "00782241",  # vice crime
            "00774796",  # statutory offense (sexual offences)
            "00773814",  # attack, attempt
            "00768701",  # felony (violent and property crime)
            "00770151",  # mayhem
            "00775006",  # thuggery
            "00782518",  # war crime
            "00769944",  # hijack
            "00780731",  # shell game
            "00780615",  # swiz
            "00779248",  # bunco
            "00769401",  # barratry
        }
    ),
)

INSURANCE = Domain(
    name="insurance",
    description="insurance products, policies, parties and claims",
    roots=(
        ("06523641", "policy_document"),  # policy, insurance policy
        ("13301620", "premium"),
        ("01062136", "claim"),  # insurance claim
        ("13348456", "coverage"),  # reinsurance
        ("13345286", "coverage"),  # assurance
        ("13344804", "coverage"),  # insurance
        ("13344664", "coverage"),  # coverage, insurance coverage
        ("14539826", "coverage"),  # indemnity, insurance (protection against loss)
        ("13294503", "product"),  # annuity
        ("13297254", "benefit"),  # death benefit
        ("08070465", "party"),  # insurer, insurance company
        ("10209731", "party"),  # insurance broker, insurance agent
        ("10449664", "party"),  # policyholder
    ),
    singles=(
        ("13269683", "amount"),  # cash surrender value
        ("13297740", "benefit"),  # disability benefit
        ("13297850", "benefit"),  # sick benefit
    ),
    prune=frozenset({"13295657"}),  # rent (a kind of annuity in WordNet): not insurance
)

# Earlier domains claim shared surface forms first: securities and cheques are financial
# instruments rather than legal documents here.
DOMAINS = (INSURANCE, FINANCE, LEGAL)


def clean_lemma(lemma: str) -> str:
    """A WordNet lemma as running text writes it: underscores to spaces, markers removed."""
    return re.sub(r"\([a-z]+\)$", "", lemma).replace("_", " ")


# A single word with more senses than this (over all parts of speech) is too generic.
MAX_SINGLE_WORD_SENSES = 2


def keep_lemma(wn: WordNet, lemma: str) -> bool:
    """Whether a lemma is specific enough to be a dictionary surface form."""
    text = clean_lemma(lemma)
    if text.casefold() in DROP or not valid_surface(text):
        return False
    tokens = text.split()
    # Names (a capitalised word that is not an acronym) are left out: "Gresham's Law", "Dow Jones".
    if any(t[0].isupper() and not t.isupper() for t in tokens):
        return False
    if len(tokens) > 1 or "-" in text:
        return True
    if text.casefold() in SINGLE_WORDS:
        return True
    return wn.senses.get(text.lower(), 0) <= MAX_SINGLE_WORD_SENSES


def wordnet_rows(wn: WordNet, domain: Domain, claims: Claims) -> list[Row]:
    """The domain's rows: root synsets with their hyponyms, single synsets, topic members."""
    chosen: dict[str, str] = {}
    for offset, category in domain.roots:
        for member in wn.below(offset, domain.prune):
            chosen.setdefault(member, category)
    for offset, category in domain.singles:
        chosen.setdefault(offset, category)
    topics = set(domain.topics)
    for offset in sorted(wn.synsets):
        synset = wn.synsets[offset]
        if offset not in domain.prune and topics.intersection(synset.domains):
            category = domain.topic_categories.get(synset.lexfile, "concept")
            chosen.setdefault(offset, category)
    rows: list[Row] = []
    for offset in sorted(chosen):
        synset = wn.synsets[offset]
        kept = [clean_lemma(x) for x in synset.lemmas if keep_lemma(wn, x)]
        row = claims.row(kept, clean_lemma(synset.lemmas[0]), chosen[offset])
        if row:
            rows.append(row)
    return rows


def wordnet_meta(domain: Domain) -> dict[str, str]:
    """The metadata comment lines of a WordNet-derived file."""
    return {
        "name": domain.name,
        "lang": "en",
        "source": (
            f"WordNet 3.0 nouns ({domain.description}): chosen synsets with their hyponyms"
            + (" and members of their topic domains" if domain.topics else "")
            + "; Debian package wordnet-base"
        ),
        "license": "WordNet 3.0 license",
        "copyright": (
            "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. "
            "See termdicts/LICENSE-WordNet-3.0.txt"
        ),
    }


# ---------------------------------------------------------------------------------------------


def generate(wordnet_dir: Path, verbose: bool = False) -> dict[Path, str]:
    """The generated files' contents by path."""
    hand_written: set[str] = set()
    for path in sorted(HERE.glob("*/*_terms.tsv")):
        hand_written |= read_surfaces(path)
    claims = Claims(hand_written)
    outputs: dict[Path, str] = {}
    rows, meta = currency_rows(claims, verbose)
    outputs[HERE / "finance" / "currencies.tsv"] = render(meta, rows)
    wn = WordNet(wordnet_dir)
    for domain in DOMAINS:
        rows = wordnet_rows(wn, domain, claims)
        path = HERE / domain.name / f"{domain.name}.tsv"
        outputs[path] = render(wordnet_meta(domain), rows)
    return outputs


def main(argv: list[str] | None = None) -> int:
    """Write the generated files, or with ``--check`` only report which are stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    parser.add_argument("--check", action="store_true", help="only report stale files")
    parser.add_argument("--verbose", action="store_true", help="also list what was left out")
    args = parser.parse_args(argv)
    if not (args.wordnet / "data.noun").exists():
        print(f"no WordNet in {args.wordnet}: apt-get install wordnet-base", file=sys.stderr)
        return 2
    stale = 0
    for path, text in generate(args.wordnet, args.verbose).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        rows = text.count("\n") - sum(1 for x in text.splitlines() if x.startswith("#")) - 1
        if current == text:
            print(f"{path.relative_to(HERE)}: {rows} rows, up to date")
            continue
        stale += 1
        if args.check:
            print(f"{path.relative_to(HERE)}: stale")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"{path.relative_to(HERE)}: {rows} rows written")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
