"""Quantities: a number and a unit, with canonical unit names and a real unit registry (pint).

**Canonical unit names.** The SI or trade symbol where one is usual, written in ASCII
exponents: ``kg g mg µg t lb oz l ml cl m km cm mm µm nm mi ft in yd m2 km2 cm2 ha acre m3 cm3
ft3 gal bbl km/h m/s mph kn °C °F K ° rad turn bit kbit Mbit B kB MB GB TB s ms min h d Hz kW kWh
Pa bar psi % ppm``; calendar units without an SI symbol in English, singular: ``week month
year``; counted things in English, singular: ``piece box pallet carton bottle bag unit pack
roll set pair case crate can sheet drum container``. These are the external benchmark's symbols
(``benchmarks/external/README.md``) and, for the units the shipped ``unit`` normalizer knew,
its names (``kg``, ``t``, ``l``, ``m2``, ``kWh``); count words are singular so that a unit's
enum of singular names can be met. "ton"/"tons" read as the metric tonne ``t`` (what business
text outside the US means; the shipped normalizer did the same); lower-case "mb"/"kb"/"gb" read
as bytes. A compound unit is its parts joined by ``/`` (``mg/kg``, ``km/h``, ``/h`` for "per
hour"), with ``mph`` for miles per hour.

**Where names come from.** Every CLDR language's unit names, plurals and "per" forms (Babel:
"kilogramos", "Kilometer", "ミリリットル", "公里", "डिग्री सेल्सियस", "fahrenhayt derece"),
the symbols and words in the tables below (ASCII spellings, "sq ft", "kuub", "°c", "dozen"),
and pint's registry for English unit expressions nothing else knows ("kilowatt hours",
"microsieverts"). Conversion (``same_quantity``) goes through pint: 1 km equals 1000 m.
"""

from __future__ import annotations

import bisect
import itertools
import re
import sys
import unicodedata
from collections.abc import Iterator, Mapping
from decimal import Decimal
from functools import cache, lru_cache
from typing import Any, NamedTuple

from aau.values import _cldr, _words, numbers
from aau.values._disk_cache import cached
from aau.values._text import MAX_SPAN, key, squash

__all__ = [
    "CANONICAL_UNITS",
    "Quantity",
    "QuantityRange",
    "QuantitySpan",
    "find_quantities",
    "is_preposition_in",
    "read_quantity",
    "read_quantity_range",
    "read_unit",
    "same_quantity",
    "unit_registry",
]


class Quantity(NamedTuple):
    """A value and its canonical unit."""

    value: numbers.Number
    unit: str


class QuantityRange(NamedTuple):
    """A range of quantities in one unit ("10-20 mg")."""

    low: numbers.Number
    high: numbers.Number
    unit: str


class QuantitySpan(NamedTuple):
    """A quantity found in a text: ``text[start:end]`` reads as ``value`` ``unit``."""

    start: int
    end: int
    text: str
    value: numbers.Number
    unit: str


# canonical symbol -> (pint expression, CLDR unit ids)
CANONICAL_UNITS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    # length
    "km": ("kilometer", ("length-kilometer",)), "m": ("meter", ("length-meter",)),
    "dm": ("decimeter", ("length-decimeter",)), "cm": ("centimeter", ("length-centimeter",)),
    "mm": ("millimeter", ("length-millimeter",)), "µm": ("micrometer", ("length-micrometer",)),
    "nm": ("nanometer", ("length-nanometer",)), "pm": ("picometer", ("length-picometer",)),
    "hm": ("hectometer", ()), "dam": ("decameter", ()),
    "mi": ("mile", ("length-mile",)), "yd": ("yard", ("length-yard",)),
    "ft": ("foot", ("length-foot",)), "in": ("inch", ("length-inch",)),
    "nmi": ("nautical_mile", ("length-nautical-mile",)),
    "ly": ("light_year", ("length-light-year",)),
    "au": ("astronomical_unit", ("length-astronomical-unit",)),
    "pc": ("parsec", ("length-parsec",)), "fur": ("furlong", ("length-furlong",)),
    "ftm": ("fathom", ("length-fathom",)), "mil": ("mil", ("length-milliinch",)),
    # area
    "km2": ("kilometer**2", ("area-square-kilometer",)), "m2": ("meter**2", ("area-square-meter",)),
    "hm2": ("hectometer**2", ()), "dam2": ("decameter**2", ()), "dm2": ("decimeter**2", ()),
    "cm2": ("centimeter**2", ("area-square-centimeter",)), "mm2": ("millimeter**2", ()),
    "ha": ("hectare", ("area-hectare",)), "acre": ("acre", ("area-acre",)),
    "mi2": ("mile**2", ("area-square-mile",)), "yd2": ("yard**2", ("area-square-yard",)),
    "ft2": ("foot**2", ("area-square-foot",)), "in2": ("inch**2", ("area-square-inch",)),
    # volume
    "km3": ("kilometer**3", ("volume-cubic-kilometer",)),
    "m3": ("meter**3", ("volume-cubic-meter",)),
    "dm3": ("decimeter**3", ()), "cm3": ("centimeter**3", ("volume-cubic-centimeter",)),
    "mm3": ("millimeter**3", ()), "mi3": ("mile**3", ("volume-cubic-mile",)),
    "yd3": ("yard**3", ("volume-cubic-yard",)), "ft3": ("foot**3", ("volume-cubic-foot",)),
    "in3": ("inch**3", ("volume-cubic-inch",)), "l": ("liter", ("volume-liter",)),
    "ml": ("milliliter", ("volume-milliliter",)), "cl": ("centiliter", ("volume-centiliter",)),
    "dl": ("deciliter", ("volume-deciliter",)), "hl": ("hectoliter", ("volume-hectoliter",)),
    "Ml": ("megaliter", ("volume-megaliter",)), "gal": ("gallon", ("volume-gallon",)),
    "gal_imp": ("imperial_gallon", ("volume-gallon-imperial",)), "qt": ("quart", ("volume-quart",)),
    "pt": ("pint", ("volume-pint",)), "cup": ("cup", ("volume-cup",)),
    "fl_oz": ("fluid_ounce", ("volume-fluid-ounce",)),
    "tbsp": ("tablespoon", ("volume-tablespoon",)), "tsp": ("teaspoon", ("volume-teaspoon",)),
    "bbl": ("oil_barrel", ("volume-barrel",)), "bu": ("bushel", ("volume-bushel",)),
    # mass
    "t": ("tonne", ("mass-tonne", "mass-ton")), "kg": ("kilogram", ("mass-kilogram",)),
    "g": ("gram", ("mass-gram",)), "mg": ("milligram", ("mass-milligram",)),
    "µg": ("microgram", ("mass-microgram",)), "ng": ("nanogram", ()),
    "lb": ("pound", ("mass-pound",)), "oz": ("ounce", ("mass-ounce",)),
    "ozt": ("troy_ounce", ("mass-ounce-troy",)), "st": ("stone", ("mass-stone",)),
    "ct": ("carat", ("mass-carat",)), "gr": ("grain", ("mass-grain",)), "dr": ("dram", ()),
    "Da": ("dalton", ("mass-dalton",)),
    # time
    "s": ("second", ("duration-second",)), "ms": ("millisecond", ("duration-millisecond",)),
    "µs": ("microsecond", ("duration-microsecond",)),
    "ns": ("nanosecond", ("duration-nanosecond",)),
    "min": ("minute", ("duration-minute",)), "h": ("hour", ("duration-hour",)),
    "d": ("day", ("duration-day",)), "week": ("week", ("duration-week",)),
    "fortnight": ("fortnight", ("duration-fortnight",)), "month": ("month", ("duration-month",)),
    "quarter": ("quarter_year", ("duration-quarter",)), "year": ("year", ("duration-year",)),
    "decade": ("decade", ("duration-decade",)), "century": ("century", ("duration-century",)),
    # speed
    "km/h": ("kilometer/hour", ("speed-kilometer-per-hour",)),
    "m/s": ("meter/second", ("speed-meter-per-second",)),
    "km/s": ("kilometer/second", ()),  # SI, though Turkish writes km/s for km/saat (hour)
    "mph": ("mile/hour", ("speed-mile-per-hour",)), "kn": ("knot", ("speed-knot",)),
    # temperature and angle
    "°C": ("degree_Celsius", ("temperature-celsius",)),
    "°F": ("degree_Fahrenheit", ("temperature-fahrenheit",)),
    "K": ("kelvin", ("temperature-kelvin",)), "°R": ("degree_Rankine", ("temperature-rankine",)),
    "°": ("degree", ("angle-degree", "temperature-generic")), "rad": ("radian", ("angle-radian",)),
    "turn": ("turn", ("angle-revolution",)), "arcmin": ("arcminute", ("angle-arc-minute",)),
    "arcsec": ("arcsecond", ("angle-arc-second",)), "sr": ("steradian", ("angle-steradian",)),
    # information
    "bit": ("bit", ("digital-bit",)), "kbit": ("kilobit", ("digital-kilobit",)),
    "Mbit": ("megabit", ("digital-megabit",)), "Gbit": ("gigabit", ("digital-gigabit",)),
    "Tbit": ("terabit", ("digital-terabit",)), "B": ("byte", ("digital-byte",)),
    "kB": ("kilobyte", ("digital-kilobyte",)), "MB": ("megabyte", ("digital-megabyte",)),
    "GB": ("gigabyte", ("digital-gigabyte",)), "TB": ("terabyte", ("digital-terabyte",)),
    "PB": ("petabyte", ("digital-petabyte",)),
    # energy, power, frequency, pressure, electricity, force
    "J": ("joule", ("energy-joule",)), "kJ": ("kilojoule", ("energy-kilojoule",)),
    "MJ": ("megajoule", ()), "cal": ("calorie", ("energy-calorie",)),
    "kcal": ("kilocalorie", ("energy-kilocalorie", "energy-foodcalorie")),
    "Wh": ("watt_hour", ()), "kWh": ("kilowatt_hour", ("energy-kilowatt-hour",)),
    "MWh": ("megawatt_hour", ()), "GWh": ("gigawatt_hour", ()),
    "eV": ("electron_volt", ("energy-electronvolt",)),
    "BTU": ("british_thermal_unit", ("energy-british-thermal-unit",)),
    "W": ("watt", ("power-watt",)), "mW": ("milliwatt", ("power-milliwatt",)),
    "kW": ("kilowatt", ("power-kilowatt",)), "MW": ("megawatt", ("power-megawatt",)),
    "GW": ("gigawatt", ("power-gigawatt",)), "hp": ("horsepower", ("power-horsepower",)),
    "Hz": ("hertz", ("frequency-hertz",)), "kHz": ("kilohertz", ("frequency-kilohertz",)),
    "MHz": ("megahertz", ("frequency-megahertz",)), "GHz": ("gigahertz", ("frequency-gigahertz",)),
    "Pa": ("pascal", ("pressure-pascal",)), "hPa": ("hectopascal", ("pressure-hectopascal",)),
    "kPa": ("kilopascal", ("pressure-kilopascal",)),
    "MPa": ("megapascal", ("pressure-megapascal",)),
    "bar": ("bar", ("pressure-bar",)), "mbar": ("millibar", ("pressure-millibar",)),
    "atm": ("atmosphere", ("pressure-atmosphere",)),
    "psi": ("psi", ("pressure-pound-force-per-square-inch",)),
    "mmHg": ("millimeter_Hg", ("pressure-millimeter-ofhg",)),
    "inHg": ("inch_Hg", ("pressure-inch-ofhg",)),
    "A": ("ampere", ("electric-ampere",)), "mA": ("milliampere", ("electric-milliampere",)),
    "V": ("volt", ("electric-volt",)), "kV": ("kilovolt", ()), "Ω": ("ohm", ("electric-ohm",)),
    "N": ("newton", ("force-newton",)), "kN": ("kilonewton", ()),
    "lbf": ("force_pound", ("force-pound-force",)),
    "N·m": ("newton*meter", ("torque-newton-meter",)),
    # radiation, amount of substance, ratios
    "Sv": ("sievert", ("energy-sievert",)), "mSv": ("millisievert", ()),
    "µSv": ("microsievert", ()), "Gy": ("gray", ("energy-gray",)), "mGy": ("milligray", ()),
    "Bq": ("becquerel", ("energy-becquerel",)),
    "mol": ("mole", ("concentr-mole",)), "mmol": ("millimole", ()),
    "%": ("percent", ("concentr-percent",)), "‰": ("permille", ("concentr-permille",)),
    "ppm": ("ppm", ("concentr-part-per-1e6",)),
    "ppb": ("parts_per_billion", ("concentr-part-per-1e9",)),
    "l/100km": ("liter/hundred_kilometer", ("consumption-liter-per-100-kilometer",)),
    "mpg": ("mile/gallon", ("consumption-mile-per-gallon",)),
    "lm": ("lumen", ("light-lumen",)), "lx": ("lux", ("light-lux",)),
    "cd": ("candela", ("light-candela",)),
    "T": ("tesla", ("magnetic-tesla",)),
    "dB": ("decibel", ()),
}  # fmt: skip
"""Canonical symbol -> (pint expression, CLDR unit ids it stands for)."""

_COUNTS = {
    "piece": ("piece", "pieces", "pc", "pcs", "pce", "pcs.", "stk", "stk.", "stück", "stueck",
              "pièce", "pièces", "pieza", "piezas", "pezzo", "pezzi", "peça", "peças", "stuk",
              "stuks", "st.", "styck", "stycken", "szt", "szt.", "adet", "件", "个", "個", "개",
              "штук", "шт", "шт.", "штуки", "item", "items", "ea", "each", "nos", "nos."),
    "box": ("box", "boxes", "bx", "karton", "kartons", "boîte", "boîtes", "caja", "cajas",
            "scatola", "scatole", "caixa", "caixas", "doos", "dozen_box"),
    "pallet": ("pallet", "pallets", "palette", "paletten", "palettes", "palet", "palets",
               "pallet", "pallets", "pallett", "plt", "paleta", "paletas", "bancale", "bancali"),
    "carton": ("carton", "cartons", "ctn", "ctns", "cartón", "cartones", "cartone", "cartoni"),
    "bottle": ("bottle", "bottles", "flasche", "flaschen", "bouteille", "bouteilles", "botella",
               "botellas", "bottiglia", "bottiglie", "garrafa", "garrafas", "fles", "flessen"),
    "bag": ("bag", "bags", "sack", "sacks", "sacke", "säcke", "sac", "sacs", "bolsa", "bolsas",
            "saco", "sacos", "sacco", "sacchi", "zak", "zakken"),
    "unit": ("unit", "units", "einheit", "einheiten", "unité", "unités", "unidad", "unidades",
             "unità", "unidade", "eenheid", "eenheden"),
    "pack": ("pack", "packs", "package", "packages", "packet", "packets", "pkg", "pkt",
             "packung", "packungen", "paquet", "paquets", "paquete", "paquetes", "pacco",
             "pacchi", "pacote", "pacotes", "pak", "pakken"),
    "roll": ("roll", "rolls", "rolle", "rollen", "rouleau", "rouleaux", "rollo", "rollos",
             "rotolo", "rotoli", "rolo", "rolos"),
    "set": ("set", "sets", "satz", "sätze", "juego", "juegos", "jogo", "jogos"),
    "pair": ("pair", "pairs", "paar", "paare", "paire", "paires", "par", "pares", "paio", "paia"),
    "case": ("case", "cases", "kiste", "kisten", "caisse", "caisses"),
    "crate": ("crate", "crates", "kasten", "kästen", "cajón", "cajones", "krat", "kratten"),
    "can": ("can", "cans", "dose", "dosen", "lata", "latas", "blik", "blikken", "canette"),
    "sheet": ("sheet", "sheets", "blatt", "blätter", "feuille", "feuilles", "hoja", "hojas",
              "foglio", "fogli", "folha", "folhas", "vel", "vellen"),
    "drum": ("drum", "drums", "fass", "fässer", "fût", "fûts", "tambor", "tambores", "bidone"),
    "container": ("container", "containers", "conteneur", "conteneurs", "contenedor",
                  "contenedores", "contenitore", "contêiner"),
    "person": ("person", "persons", "people", "personen", "personnes", "personas", "persone",
               "pessoas", "人", "명"),
}  # fmt: skip
"""Counted things -> their English singular name (the canonical name of a count)."""

_SYMBOLS = {
    # Case-sensitive symbols and spellings, checked before anything else.
    "µm": "µm", "μm": "µm", "um": "µm", "µg": "µg", "μg": "µg", "mcg": "µg", "ug": "µg",
    "L": "l", "mL": "ml", "cL": "cl", "dL": "dl", "lt": "l", "ltr": "l", "ltrs": "l",
    "m²": "m2", "km²": "km2", "cm²": "cm2", "mm²": "mm2", "ft²": "ft2", "in²": "in2", "mi²": "mi2",
    "m³": "m3", "cm³": "cm3", "ft³": "ft3", "km³": "km3", "dm³": "dm3", "mm³": "mm3",
    "sqm": "m2", "sq m": "m2", "sq. m": "m2", "sq.m": "m2", "sq ft": "ft2", "sq. ft": "ft2",
    "sq.ft": "ft2", "sqft": "ft2", "sq in": "in2", "sq mi": "mi2", "sq km": "km2", "qm": "m2",
    "cbm": "m3", "cc": "cm3", "ccm": "cm3", "cu ft": "ft3", "cu. ft": "ft3", "cuft": "ft3",
    "cu m": "m3", "kuub": "m3", "vaten": "bbl", "vat": "bbl",
    "℃": "°C", "℉": "°F", "°c": "°C", "°f": "°F", "°k": "K", "degC": "°C", "degF": "°F",
    "deg C": "°C", "deg F": "°F", "K": "K", "k": "K",
    "kph": "km/h", "kmh": "km/h", "kmph": "km/h", "km/hr": "km/h", "kms/h": "km/h",
    "km/u": "km/h", "km/t": "km/h", "knots": "kn", "kt": "kn", "kts": "kn",
    "Mb": "Mbit", "Gb": "Gbit", "Tb": "Tbit", "Kb": "kbit", "kb": "kB", "mb": "MB", "gb": "GB",
    "tb": "TB", "KB": "kB", "kbps": "kbit/s", "Mbps": "Mbit/s", "Gbps": "Gbit/s",
    "mbps": "Mbit/s", "MB/s": "MB/s", "bits": "bit", "byte": "B", "bytes": "B",
    "kwh": "kWh", "KWh": "kWh", "kWH": "kWh", "KWH": "kWh", "mwh": "MWh", "MWH": "MWh",
    "kw": "kW", "KW": "kW", "mw": "MW", "hz": "Hz", "khz": "kHz", "mhz": "MHz", "ghz": "GHz",
    "sec": "s", "secs": "s", "hr": "h", "hrs": "h", "Std.": "h", "Std": "h", "std": "h",
    "mins": "min", "Min.": "min", "pct": "%", "percent": "%", "per cent": "%",
    "ton": "t", "tons": "t", "tonne": "t", "tonnes": "t", "Ton": "t", "Tons": "t",
    "lbs": "lb", "lbs.": "lb", "#": "lb", "ozs": "oz", "kgs": "kg", "Kg": "kg", "KG": "kg",
    "kilo": "kg", "kilos": "kg", "chilo": "kg", "quilo": "kg",
    "quilos": "kg", "gms": "g", "gm": "g", "grs": "g", "Gr": "g",
    "mts": "m", "mtr": "m", "mtrs": "m", "Mtr": "m", "kms": "km", "KM": "km", "Km": "km",
    "CM": "cm", "MM": "mm", "cms": "cm", "mms": "mm", "mls": "ml", "in.": "in", "ft.": "ft",
    "yds": "yd", "″": "in", '"': "in", "′": "ft", "'": "ft", "mph": "mph", "MPH": "mph",
    "mSv": "mSv", "µSv": "µSv", "μSv": "µSv",
    "uSv": "µSv", "Sv": "Sv", "mGy": "mGy", "Gy": "Gy", "Bq": "Bq", "Ω": "Ω", "ohm": "Ω",
    "ohms": "Ω", "rpm": "turn/min", "RPM": "turn/min", "gal.": "gal", "gals": "gal",
    "bbls": "bbl", "fl oz": "fl_oz", "fl. oz.": "fl_oz", "floz": "fl_oz", "imp gal": "gal_imp",
}  # fmt: skip

_WORDS = {
    # Words CLDR leaves out (ASCII spellings, colloquial names); compared case-insensitively.
    "kilometre": "km", "kilometres": "km", "metre": "m", "metres": "m", "centimetre": "cm",
    "centimetres": "cm", "millimetre": "mm", "millimetres": "mm", "litre": "l", "litres": "l",
    "millilitre": "ml", "millilitres": "ml", "kilogramme": "kg", "kilogrammes": "kg",
    "gramme": "g", "grammes": "g", "metric ton": "t", "metric tons": "t", "metric tonne": "t",
    "metric tonnes": "t", "metrische ton": "t", "toneladas metricas": "t", "lichtjahr": "ly",
    "light year": "ly", "light years": "ly", "light-year": "ly", "light-years": "ly",
    "picometre": "pm", "picometres": "pm", "nanometre": "nm", "micrometre": "µm",
    "micron": "µm", "microns": "µm", "degree": "°", "degrees": "°", "graden": "°", "grad": "°",
    "grade": "°", "grados": "°", "grado": "°", "graus": "°", "grau": "°", "gradi": "°",
    "gradi sessagesimali": "°", "degré": "°", "degrés": "°", "derece": "°", "grader": "°",
    "graders": "°", "度": "°", "도": "°", "डिग्री": "°", "градус": "°", "градусов": "°",
    "градуса": "°", "draai": "turn", "draaien": "turn", "slag": "turn", "slagen": "turn",
    "vuelta": "turn", "vueltas": "turn", "giro": "turn", "giri": "turn", "volta": "turn",
    "voltas": "turn", "tour": "turn", "tours": "turn", "revolution": "turn", "revolutions": "turn",
    "rev": "turn", "revs": "turn", "umdrehung": "turn", "umdrehungen": "turn", "varv": "turn",
    "ons": "oz", "kilo's": "kg", "pond": "lb", "millas": "mi", "mijl": "mi", "mijlen": "mi",
    "voet": "ft", "barrel": "bbl", "barrels": "bbl", "barril": "bbl", "barriles": "bbl",
    "barile": "bbl", "barili": "bbl", "baril": "bbl", "barils": "bbl", "fass": "bbl",
    "hour": "h", "hours": "h", "uur": "h", "uren": "h", "stunde": "h", "stunden": "h",
    "heure": "h", "heures": "h", "hora": "h", "horas": "h", "ora": "h", "ore": "h",
    "timme": "h", "timmar": "h", "saat": "h", "day": "d", "days": "d", "tag": "d", "tage": "d",
    "tagen": "d", "jour": "d", "jours": "d", "día": "d", "días": "d", "dia": "d", "dias": "d",
    "giorno": "d", "giorni": "d", "dag": "d", "dagen": "d", "dagar": "d", "gün": "d",
    "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year",
    "years": "year", "minute": "min", "minutes": "min", "second": "s", "seconds": "s",
    "celsius": "°C", "centigrade": "°C", "centigrado": "°C", "centígrado": "°C",
    "centígrados": "°C", "centigradi": "°C", "centigradio": "°C", "santigrat": "°C",
    "сельсия": "°C", "सेल्सियस": "°C", "से": "°C", "सें": "°C", "सेंटिग्रेड": "°C",
    "摄氏": "°C", "摄氏温度": "°C", "攝氏": "°C", "fahrenheit": "°F", "farenheit": "°F",
    "fahrenhayt": "°F", "farenhayt": "°F", "фаренгейта": "°F", "फ़ॉरेनहाइट": "°F",
    "फॉरेनहाइट": "°F", "फ़ॉ": "°F", "फॉ": "°F", "华氏": "°F", "华氏温度": "°F", "華氏": "°F",
    "kelvin": "K", "kelvins": "K", "c": "°C", "f": "°F", "decibel": "dB", "decibels": "dB",
    "センチ": "cm", "ミリ": "mm", "센티": "cm", "센치": "cm", "메터": "m", "미리리터": "ml",
    "갤론": "gal", "सेल्सीयस": "°C", "फारेनहाइट": "°F", "फ़ारेनहाइट": "°F", "fahrenayt": "°F",
    # a Chinese count word (个) before a duration, and the forms of Japanese か月
    "个小时": "h", "個小時": "h", "钟头": "h", "个钟头": "h", "鐘頭": "h", "個鐘頭": "h",
    "个星期": "week", "個星期": "week", "礼拜": "week", "个礼拜": "week", "禮拜": "week",
    "個禮拜": "week", "ヶ月": "month", "ケ月": "month", "カ月": "month", "ヵ月": "month",
    "箇月": "month",
    "千米": "km", "公里": "km", "米": "m", "公尺": "m", "厘米": "cm", "公分": "cm", "毫米": "mm",
    "千克": "kg", "公斤": "kg", "克": "g", "毫克": "mg", "微克": "µg", "吨": "t", "噸": "t",
    "升": "l", "公升": "l", "公裏": "km", "加侖": "gal", "毫升": "ml", "千比特": "kbit",
    "兆比特": "Mbit", "比特": "bit", "stundenkilometer": "km/h", "stundenkilometern": "km/h",
    "평방미터": "m2", "평방킬로미터": "km2", "평방센티미터": "cm2", "cuarto de galón": "qt",
    "cuartos de galón": "qt", "cuarto de galon": "qt", "cuartos de galon": "qt",
    "字节": "B", "千字节": "kB", "兆字节": "MB", "吉字节": "GB", "千兆字节": "GB",
    "平方米": "m2", "平方公里": "km2", "平方千米": "km2", "立方米": "m3", "英里": "mi",
    "英尺": "ft", "英寸": "in", "磅": "lb", "盎司": "oz", "加仑": "gal", "桶": "bbl",
    "dozen": "piece", "dozens": "piece", "doz": "piece", "dz": "piece", "dutzend": "piece",
    "douzaine": "piece", "docena": "piece", "dozzina": "piece", "dúzia": "piece",
    "dozijn": "piece", "dussin": "piece",
    # Italian: the plural of chilo, the etto (100 g), a speed "per hour" as an adjective
    "chili": "kg", "etto": "hg", "etti": "hg", "km orari": "km/h", "chilometri orari": "km/h",
}  # fmt: skip
_DEGREE_WORDS = frozenset(key(w) for w in (
    "°", "º", "degree", "degrees", "deg", "grad", "grade", "graden", "grados", "grado", "graus",
    "grau", "gradi", "degré", "degrés", "degre", "degres", "derece", "dereceyi", "derecede",
    "grader", "度", "도",
    "डिग्री", "градус", "градусов", "градуса", "temperatura", "温度",
))  # fmt: skip
_SQUARE = frozenset(key(w) for w in (
    "square", "sq", "sq.", "quadrat", "carré", "carrés", "cuadrado", "cuadrados", "quadrato",
    "quadrati", "quadrado", "quadrados", "vierkante", "kvadrat",
))  # fmt: skip
_CUBIC = frozenset(key(w) for w in ("cubic", "cu", "cu.", "kubik", "cube", "cubes", "cúbico",
                                    "cúbicos", "cubo", "cubi", "kubieke", "kubik"))  # fmt: skip
_PER = frozenset({"per", "pro", "por", "par", "a", "al", "all'", "alla", "à", "je", "на", "в",
                  "i", "om", "în", "pr.", "/", "per uur", "ad"})  # fmt: skip
# fmt: off
_STOPWORDS = frozenset({"to", "a", "an", "at", "on", "or", "of", "de", "da", "do", "la", "le",
                        "el", "et", "en", "es", "is", "it", "no", "so", "as", "by", "am", "og",
                        "och", "und", "y", "e", "i", "o", "u", "se", "si", "te", "me", "mi",
                        "ma", "al", "be", "he", "we", "us", "im", "um", "ein", "die", "der",
                        "das", "the", "and", "per", "pro", "por", "par", "met", "mit", "von"})
# fmt: on
"""Common words that some CLDR language also writes as a unit ("To" is a French terabyte);
only their exact symbols count (``mi`` stays a mile in ``5 mi``)."""
_COMPOUND_NAMES = {"mi/h": "mph", "kbit/s": "kbit/s"}
_LENGTHS = frozenset({"km", "m", "dm", "cm", "mm", "µm", "nm", "mi", "yd", "ft", "in", "hm", "dam"})


@cache
def _cldr_units() -> dict[str, str]:
    """CLDR unit-name key -> canonical symbol (the id most languages write it for)."""
    by_id = {cldr_id: symbol for symbol, (_, ids) in CANONICAL_UNITS.items() for cldr_id in ids}
    out: dict[str, str] = {}
    for name, ids in _cldr.tables().units.items():
        known = [(len(langs - _cldr.CONSTRUCTED_LANGUAGES), cldr_id)
                 for cldr_id, langs in ids.items()
                 if cldr_id in by_id and langs - _cldr.CONSTRUCTED_LANGUAGES]  # fmt: skip
        if known:
            out[name] = by_id[max(known)[1]]
    return out


@cache
def _lexicon() -> tuple[dict[str, str], dict[str, str]]:
    """(case-sensitive symbols, key -> canonical) with CLDR names under the tables above."""
    exact = {symbol: symbol for symbol in CANONICAL_UNITS}
    exact.update(_SYMBOLS)
    folded = dict(_cldr_units())
    for canonical, words in _COUNTS.items():
        for word in words:
            folded[key(word)] = canonical
    for word, canonical in _WORDS.items():
        folded[key(word)] = canonical
    for symbol in CANONICAL_UNITS:
        folded.setdefault(key(symbol), symbol)
    for spelling, canonical in _SYMBOLS.items():
        folded.setdefault(key(spelling), canonical)
    for word in _STOPWORDS:
        folded.pop(word, None)
    for spelling, canonical in (("mb", "MB"), ("kb", "kB"), ("gb", "GB"), ("tb", "TB"),
                                ("m", "m"), ("t", "t"), ("k", "K"), ("h", "h"),
                                ("db", "dB")):  # fmt: skip
        folded[spelling] = canonical
    return exact, folded


_CURRENCY_MARKS = frozenset(key(w) for w in (
    "eur", "kr", "kr.", "zl", "zł", "kc", "kč", "tl", "лв", "лв.", "руб", "руб.", "грн", "грн.",
))  # fmt: skip
"""Currency abbreviations that some CLDR locale also writes for a unit ("kr" carat, "tl"
teaspoon, "eur" hour): in text they are kronor, lira and euros, so they name no unit."""


def _canonical(unit: str) -> str | None:
    """One unit name (no compounds) -> canonical symbol, else None."""
    exact, folded = _lexicon()
    unit = unit.strip().strip(",;:")
    if not unit:
        return None
    if unit in exact:
        return exact[unit]
    stripped = unit.rstrip(".")
    if stripped in exact:
        return exact[stripped]
    if len(unit) == 3 and unit.isascii() and unit.isupper() and unit in _cldr.iso_currency_codes():
        return None  # "500 EUR", "20 SEK": a currency, whatever word some language spells so
    unit_key = key(unit)
    if unit_key in _CURRENCY_MARKS:
        return None
    if unit_key in folded and not _letter_apart(unit):
        return folded[unit_key]
    temperature = _temperature(unit)
    if temperature is not None:
        return temperature
    powered = _power(unit)
    if powered is not None:
        return powered
    return _inflected(unit_key, folded) if " " not in unit else None


def _temperature(unit: str) -> str | None:
    """Degree words around a scale: "gradi celsius", "°celsius", "º c", "derece fahrenhaytı"."""
    spaced = re.sub(r"([°º])", r" \1 ", unit.replace("º", "°"))
    parts = [p for p in re.split(r"[\s.]+", spaced) if p]
    if len(parts) < 2 and "度" not in unit:
        return None
    degree = [
        p
        for p in parts
        if key(p) in _DEGREE_WORDS or _inflected(key(p), {k: "°" for k in _DEGREE_WORDS})
    ]
    rest = [p for p in parts if p not in degree]
    if not degree and unit.endswith("度"):
        rest, degree = [unit[:-1]], ["度"]
    if not degree:
        return None
    if not rest:
        return "°"
    _exact, folded = _lexicon()
    scale = folded.get(key(" ".join(rest))) or _inflected(key(" ".join(rest)), folded)
    return scale if scale in ("°C", "°F", "K", "°R") else None


def _power(unit: str) -> str | None:
    """Powers of lengths: "square feet" -> ft2, "km2", "cubic metres" -> m3, "vierkante meter"."""
    words = unit.split()
    if len(words) >= 2:
        head, rest = key(words[0]), " ".join(words[1:])
        tail_head, tail = " ".join(words[:-1]), key(words[-1])
        for marks, power in ((_SQUARE, "2"), (_CUBIC, "3")):
            for marker, base_text in ((head, rest), (tail, tail_head)):
                if marker in marks:
                    base = _canonical(base_text)
                    if base in _LENGTHS:
                        return base + power
    match = re.fullmatch(r"([a-zµ]{1,3})\^?([23])", unit)
    if match and match.group(1) in _LENGTHS:
        return match.group(1) + match.group(2)
    return None


def _letter_apart(unit: str) -> bool:
    """Whether ``unit`` has a one-letter word beside others.

    Its look-up key (spaces dropped) would join a symbol to the next word: in "1,65m en 70
    kilo", "m en" is no "men" (minutes in some language).
    """
    words = unit.split()
    return len(words) > 1 and any(len(word) == 1 and word.isalpha() for word in words)


def _inflected(unit_key: str, table: Mapping[str, str]) -> str | None:
    """A known word with an inflection after it ("fahrenhaytı", "santigratta", "kilometern")."""
    if len(unit_key) < 6 or not unit_key.isalpha() or len(unit_key) > 24:
        return None
    for cut in range(1, 5):
        stem = unit_key[:-cut]
        if len(stem) >= 5 and stem in table:
            return table[stem]
    return None


_DIGITS_IN_UNIT = re.compile(r"[^\d]*[23]?(?:/[^\d]*[23]?)?|l/100\s?km")


def read_unit(text: str) -> str | None:
    """The canonical name of a written unit ("kilogramos" -> kg, "sq ft" -> ft2, "km/h"), or None.

    Compound units are read part by part ("mg/kg", "Kilometer pro Stunde", "per hour" -> /h).
    """
    if not isinstance(text, str) or len(text) > 64:
        return None
    return _read_unit(text)


@lru_cache(maxsize=1 << 15)  # every number's following words are tried as a unit, cut by cut
def _read_unit(text: str) -> str | None:
    unit = squash(text).strip(" ,;:()[]")
    if not unit or len(unit) > 48:
        return None
    if not unit.strip("."):
        return None  # a full stop is no unit (its look-up key is the foot mark's, empty)
    if any(c.isdigit() for c in unit) and not _DIGITS_IN_UNIT.fullmatch(unit):
        return None  # digits only as an exponent ("km2", "m3/h") or in "l/100 km"
    if unit in _TIMES_SIGNS:
        return None  # "2 x 3 m": a product's sign, not a unit (some CLDR language's century)
    direct = _canonical(unit)
    if direct is not None:
        return direct
    compound = _compound(unit)
    if compound is not None:
        return compound
    return _from_pint(unit)


def _cldr_per(unit: str) -> str | None:
    """A unit and a CLDR "per" pattern after it ("Kilometer in der Stunde"), or None.

    The pattern names the denominator only: without a unit before it ("31 euro per vierkante
    meter" is a price per area) there is no quantity.
    """
    if " " not in unit:
        return None
    numerator, pattern = unit.split(None, 1)
    below = _cldr_units().get(key("/" + pattern))
    above = _canonical(numerator) if below is not None else None
    if above is None or below is None:
        return None
    name = f"{above}/{below}"
    return _COMPOUND_NAMES.get(name, name)


@cache
def _joiners() -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """The "per" words, longest first, each with its pattern (compiled once)."""
    words = sorted(_PER | _cldr.tables().per_connectors, key=len, reverse=True)
    return (("/", None), *((w, re.compile(rf"(?:^|\s){re.escape(w)}\s")) for w in words))


_ELIDED_ARTICLE = re.compile(r"^l['’]", re.IGNORECASE)
"""French elides the article before a unit it is per: "kilomètres à l'heure"."""


def _compound(unit: str) -> str | None:
    cldr_per = _cldr_per(unit)
    for joiner, pattern in _joiners():
        if pattern is None:
            parts = unit.split("/", 1) if "/" in unit else None
        elif joiner not in unit:
            continue
        else:
            match = pattern.search(unit + " ")
            parts = [unit[: match.start()], unit[match.end() :]] if match else None
        if not parts:
            continue
        numerator, denominator = parts[0].strip(), _ELIDED_ARTICLE.sub("", parts[1].strip())
        below = _canonical(denominator) or (
            _COMPOUND_NAMES.get(denominator) if denominator else None
        )
        if below is None:
            continue
        if not numerator:
            return "/" + below
        above = _canonical(numerator)
        if above is None:
            continue
        if above in _TEMPERATURES and below in _TEMPERATURES:
            continue  # "10 celsius a fahrenheit": a conversion asked for, not a unit
        name = f"{above}/{below}"
        return _COMPOUND_NAMES.get(name, name)
    return cldr_per


@cache
def unit_registry() -> Any:
    """The pint registry with the counts defined (built once; pint loads its definitions)."""
    import pint

    registry: Any = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    registry.define("piece = [count] = pcs")
    registry.define("quarter_year = 3 * month")
    registry.define("parts_per_billion = 1e-9")
    registry.define("hundred_kilometer = 100 * kilometer")
    return registry


@cache
def _pint_symbols() -> dict[str, str]:
    """Pint's canonical unit string -> our symbol, for units read through pint."""
    registry = unit_registry()
    out: dict[str, str] = {}
    for symbol, (expression, _ids) in CANONICAL_UNITS.items():
        try:
            out.setdefault(str(registry.parse_units(expression)), symbol)
        except Exception:  # noqa: BLE001  # an expression this pint version lacks
            continue
    return out


@cache
def _pint_words() -> tuple[frozenset[str], frozenset[str]]:
    """(unit names, symbols and aliases; prefixes) of the registry, case-folded.

    Kept on disk: a process that reads only words no unit could be does not build the
    registry (0.5 s).
    """
    from importlib.metadata import version

    return cached(f"pint-words-{version('pint')}", (sys.modules[__name__],), _build_pint_words)


def _build_pint_words() -> tuple[frozenset[str], frozenset[str]]:
    # A registry of its own: the shared one also names each prefixed unit it has read
    # ("deciliter"), which would make the words depend on what this process read first.
    registry = unit_registry.__wrapped__()
    return (frozenset(name.lower() for name in registry._units),
            frozenset(name.lower() for name in registry._prefixes))  # fmt: skip


def _may_be_pint_unit(word: str) -> bool:
    """Whether a new registry could read the bare word ``word``: a prefix, a unit, "s" or not.

    That is how pint reads a name; folding case makes this a superset. A registry in use reads
    more: it defines each prefixed unit it has read ("deciliter") and then takes a prefix
    before that too ("Mdeciliter"). Such words are turned away here, so whether a word is a
    unit no longer depends on what the process read before.
    """
    units, prefixes = _pint_words()
    folded = word.lower()
    for cut in range(len(folded)):
        if folded[:cut] in prefixes:
            rest = folded[cut:]
            if rest in units or (rest.endswith("s") and rest[:-1] in units):
                return True
    return False


@lru_cache(maxsize=1 << 14)  # every number's following words are read as a unit
def _from_pint(unit: str) -> str | None:
    """English unit expressions no table names ("kilowatt hours"), read by pint."""
    if len(unit) < 3 or not re.fullmatch(r"[A-Za-z µ*/^\-]+", unit):
        return None
    if unit.isalpha() and unit.isascii() and not _may_be_pint_unit(unit):
        return None
    registry = unit_registry()
    expression = re.sub(r"\s+", " * ", re.sub(r"\bper\b", "/", unit.strip()))
    expression = expression.replace("* / *", "/")
    try:
        parsed = registry.parse_units(expression)
    except Exception:  # noqa: BLE001  # pint raises several kinds for what it cannot read
        return None
    if " * " in expression and _repeats_a_unit(registry, expression.split(" * ")):
        return None  # "inches in (the box)": the preposition, not square inches
    symbols = _pint_symbols()
    name = str(parsed)
    if name in symbols:
        return symbols[name]
    if parsed.dimensionless or " * " in expression:
        # Words side by side make a product only as a named unit ("kilowatt hours" is kWh);
        # otherwise the next word is no unit: "hours at" is not hours times atmospheres.
        return None
    return format(parsed, "~C").replace("**", "").replace("*", "·")


def _repeats_a_unit(registry: Any, words: list[str]) -> bool:
    """Whether two of ``words`` name the same unit (a product no one writes as words)."""
    seen: set[str] = set()
    for word in words:
        try:
            name = str(registry.parse_units(word))
        except Exception:  # noqa: BLE001  # as above
            return False
        if name in seen:
            return True
        seen.add(name)
    return False


# -- quantities ----------------------------------------------------------------------------------

_HALF = frozenset({"half", "halve", "halb", "halbe", "halben", "halbes", "halber", "demi", "demie",
                   "media", "medio", "mezzo", "mezza", "meia", "meio", "halv", "halva", "halvt",
                   "yarım", "आधा", "आधी", "半"})  # fmt: skip
_HALF_WORDS = "|".join(sorted(_HALF - {"半"}, key=len, reverse=True))
_HALF_START = re.compile(rf"(?<!\w)(?:{_HALF_WORDS})(?!\w)", re.IGNORECASE)
"""A half that starts a quantity without a number before it ("half a kilo", "Medio kilo")."""
_CJK_HALF = re.compile(
    r"(?<![\d〇零一二三四五六七八九十两兩个個])半(?=\S)|(?<![가-힣])반(?= ?[가-힣])"
)
"""A CJK half glued to its unit ("半公升", "半加侖"), or Korean 반 before one ("반 리터")."""
_ARTICLES = frozenset({"a", "an", "een", "ein", "eine", "einen", "un", "une", "una", "uno", "um",
                       "uma", "en", "ett", "bir", "一"})  # fmt: skip
_LEAD_CONNECTORS = frozenset({"de", "di", "of", "d'", "van", "du", "des", "del", "do", "da"})


def _unit_after(text: str) -> tuple[str, int] | None:
    """The longest unit at the start of ``text``: (canonical, characters used)."""
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    if not lead and stripped[:2] in ("''", "′′") and not stripped[2:3].isalnum():
        return "in", 2  # two foot marks for the inch mark ″, as a keyboard writes it: 5''
    if not lead and stripped[:1] in _MARKS and not stripped[1:2].isalnum():
        return _MARKS[stripped[0]], 1  # inch and foot marks against the number: 9", 6'
    if not lead and numbers.is_height_metre(stripped):
        return "m", 1  # "1m80": the centimetres follow
    if stripped.startswith("-") and not stripped[1:2].isdigit():
        stripped, lead = stripped[1:], lead + 1  # "10-liter", "776-voet"
    words = re.match(r"(\S+)\s+(.*)", stripped)
    if words and words.group(1).casefold() in _LEAD_CONNECTORS and words.group(2):
        found = _unit_after(words.group(2))
        if found is not None and not found[0].startswith("/"):  # "of a mile" is no "per mile"
            return found[0], lead + words.start(2) + found[1]
    ends = []
    for word in itertools.islice(re.finditer(r"\S+", stripped), 5):
        ends.append(word.end())
        if word.group()[-1] in ",;":
            break  # "a mile, a quarter": a clause ends the unit ("a" is no "per" across it)
    if ends and _UNSPACED.search(stripped[: ends[0]]):
        ends += list(range(min(ends[0], 10), 0, -1))  # scripts without spaces: "米半", "公斤"
    for end in sorted(set(ends), reverse=True):
        candidate = stripped[:end].rstrip(",;:?!)\"'»")
        if key(candidate.rstrip(".")) in _AFTER_DEGREE_ONLY:
            continue  # Hindi "से" is "from" ("5 से 10"): Celsius only after "डिग्री"
        if candidate.casefold() in _LEAD_CONNECTORS or numbers.is_scale_word(candidate):
            continue  # "3 miliardi di", "iki milyar": a scale word or "of", never a unit
        last = candidate.rsplit(None, 1)
        if len(last) == 2 and last[1].isdigit():
            continue  # "5 ft 3 in": the next number, not feet cubed
        if (
            len(last) == 2 and len(last[1]) == 1 and last[1].islower() and stripped[end:].strip()
            and not (last[1] in "fc" and key(last[0].split()[-1]) in _DEGREE_WORDS)
        ):  # fmt: skip
            # "106 K a grados": a one-letter word between words is a word; after a degree
            # word, "f" and "c" are its scale ("98,6 graus f é uma temperatura normal")
            continue
        unit = read_unit(candidate)
        if unit is None and "-" in candidate.strip("-"):
            unit = read_unit(candidate.replace("-", " "))  # "a 2,000 square-foot house"
        suffixed = (
            _SUFFIX.search(candidate)
            if unit is None and not _FRENCH_ELISION.search(candidate)
            else None
        )
        if (
            suffixed is not None
            and suffixed.start() >= 2  # "d'œufs" is French elision, not days
            and read_unit(candidate[: suffixed.start()]) is not None
        ):
            candidate = candidate[: suffixed.start()]  # Turkish "40 °C'ye", "5 km'lik"
            unit = read_unit(candidate)
        if unit is None and candidate.endswith("."):
            candidate = candidate[:-1]  # "190 km2.": the sentence's full stop
            unit = read_unit(candidate)
        if unit is not None:
            if candidate.endswith(".") and read_unit(candidate[:-1]) == unit:
                candidate = candidate[:-1]  # the sentence's full stop, not an abbreviation's
            return unit, lead + len(candidate)
    return None


_TIMES_SIGNS = frozenset({"x", "X", "×"})
_TIMES_BEFORE_DIGIT = re.compile(r" ?[xX×] ?\d")
_AFTER_DEGREE_ONLY = frozenset(key(w) for w in ("से", "सें", "फ़ॉ", "फॉ"))
"""Scale abbreviations that are common words alone: a scale only after a degree word."""
_MARKS = {'"': "in", "″": "in", "'": "ft", "′": "ft"}
_OPENING_QUOTES = frozenset("\"'“‘«")


_SUFFIX = re.compile(r"['’][^\W\d_A-Z]{1,5}$")
"""A case suffix after an apostrophe, as Turkish writes it after a symbol ("km'lik", "°C'ye")."""
_FRENCH_ELISION = re.compile(r"(?<!\S)[ld]['’][^\W\d_]+$", re.IGNORECASE)
"""An elided article or "de" ("à l'heure", "d'eau"): a word of its own, not a case suffix."""
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3\u0e00-\u0e7f]")


def _prepare(text: str) -> str | None:
    if not isinstance(text, str) or len(text) > MAX_SPAN:
        return None
    prepared = numbers._prepare(text.replace("º", "°"))  # noqa: SLF001  # one package
    return prepared


def read_quantity(text: str) -> Quantity | None:
    """The one quantity ``text`` writes ("2,5 kg", "10 1/2 kilometer", "三百米", "-5 °F"), or None.

    A range ("10-20 mg") is not one quantity: ``read_quantity_range`` reads it. A number glued
    to letters is a code ("24703L202", "scp-173m"), not a quantity; a number without a unit is
    no quantity either. "2 dozen" is 24 pieces.
    """
    prepared = _prepare(text)
    if prepared is None:
        return None
    found = _read(prepared)
    if found is None:
        return None
    value, unit, start, end = found
    rest = prepared[end:].strip(" .,;:!?)")
    if prepared[:start].strip() or (rest and not (unit == "piece" and len(rest.split()) <= 2)):
        return None
    return Quantity(numbers._number(value), unit)  # noqa: SLF001


def _read(text: str) -> tuple[Decimal, str, int, int] | None:
    """(value, unit, start, end) of the first quantity in ``text``.

    The unit follows the number, or stands around it in a few scripts ("华氏温度98.6度").
    """
    # the first two numbers: the second only to tell a range ("10-20 mg")
    hits = list(itertools.islice(numbers._scan(text, letters=False), 2))  # noqa: SLF001
    if hits:
        hit = hits[0]
        if len(hits) > 1 and _is_range(text, hits[0], hits[1]):
            return None
        value, start, end = hit.value, hit.start, hit.end
        # A CJK scale that is really the unit's prefix: 12千米 is 12 km, 三千比特 3 kbit.
        if end - start >= 2 and text[end - 1] in "千兆百万":
            shorter = _unit_after(text[end - 1 :])
            base = numbers._read_decimal(text[start : end - 1], None, None)  # noqa: SLF001
            if shorter is not None and base is not None:
                return base, shorter[0], start, end - 1 + shorter[1]
        return _unit_for(text, value, start, end, hit.scale)
    return _in_words(text)


def _unit_for(
    text: str, value: Decimal, start: int, end: int, scale: Decimal
) -> tuple[Decimal, str, int, int] | None:
    half = _AND_A_HALF.match(text, end)
    if half is not None:
        value, end = value + Decimal("0.5"), half.end()  # Turkish "2 buçuk kilo"
    uncertainty = _PLUS_MINUS.match(text, end)
    if uncertainty is not None:
        end = uncertainty.end()  # "2,000.45±0.01 pounds": the value, not its uncertainty
    # "一个半小时": one and a half hours, not 1.5 pieces
    duration = _unit_after(text[end + 2 :]) if _COUNT_WORD_HALF.match(text, end) else None
    after: tuple[str, int] | None
    if duration is not None and duration[0] != "piece":
        value, after = value + Decimal("0.5"), (duration[0], 2 + duration[1])
    else:
        after = _unit_after(text[end:])
    of_a = _OF_AN.match(text, end) if after is None and 0 < value < 1 else None
    if of_a is not None:  # "3/4 of an inch": a fraction of one unit
        unit_of = _unit_after(text[of_a.end() :])
        if unit_of is not None:
            after = unit_of[0], of_a.end() - end + unit_of[1]
    if after is not None and after[0] == "K" and text[end : end + after[1]].strip() == "k":
        then = _unit_after(text[end + after[1] :])
        if then is not None and then[0] != "K":  # "0.5k miles": a thousand, not kelvin
            value, after = value * 1000, (then[0], after[1] + then[1])
    if after is not None:
        unit, used = after
        finish = end + used
        if text[finish:].strip() in _HALF:
            value, finish = value + Decimal("0.5"), len(text)
        elif text[finish : finish + 1] == "半" and _UNSPACED.search(text[end:finish]):
            value, finish = value + Decimal("0.5"), finish + 1  # "两米半。": two and a half metres
        elif unit == "m" and value % 1 == 0 and text[end:finish].strip() in ("米", "m"):
            value, finish = _metre_decimals(text, value, finish)  # "一米八", "1m80": 1.8 m
        before = text[:start].strip()
        if before and not _CLAUSE_MARK.search(before):  # "일, 3분의 1": no unit across a comma
            joined = read_unit(before + text[end:finish])
            if joined is not None:
                return value, joined, 0, finish
        return value, unit, start, finish
    before = text[:start].strip()
    if before and not _CLAUSE_MARK.search(before):
        around = read_unit(before) or read_unit(before + text[end:].strip())
        if around is not None:
            return value, around, 0, len(text)
    if scale == 12:
        return value, "piece", start, end  # "2 dozen" (eggs): a count of 24
    return None


_CLAUSE_MARK = re.compile("[,;，；、。]")
_OF_AN = re.compile(r"\s+of\s+an?(?=\s)", re.IGNORECASE)
_METRE_DIGITS = "〇零一二两兩三四五六七八九"
_METRE_DECIMALS = re.compile(rf"(?:\d{{1,2}}|[{_METRE_DIGITS}]{{1,2}})(?![\d{_METRE_DIGITS}]|\.\d)")


def _metre_decimals(text: str, value: Decimal, finish: int) -> tuple[Decimal, int]:
    """The decimals written after 米 or m: "一米八" is 1.8 m, "1米75" 1.75 m, "1m80" 1.8 m.

    Not where a unit follows them: in "5米10个" the 10 is a count.
    """
    latin = text[finish - 1 : finish] == "m"
    digits = (_CENTIMETRES if latin else _METRE_DECIMALS).match(text, finish)
    if digits is None or _unit_after(text[digits.end() : digits.end() + 8]) is not None:
        return value, finish
    written = "".join(str(_words.cjk_value(c)) for c in digits.group().strip())
    return value + Decimal(f"0.{written}"), digits.end()


_CENTIMETRES = re.compile(r" ?\d{2}(?![\d.,]?\d)")
"""The centimetres after "1m" or "1 m" in a height ("1m80", "1 m 80"): two digits, no more."""


_COUNT_WORD_HALF = re.compile("[个個]半")
"""Chinese count word and half between a number and its unit ("两个半月": two and a half months)."""
_PLUS_MINUS = re.compile(r"\s*(?:±|\+/-|\+-)\s*\d+(?:[.,]\d+)?")
"""An uncertainty after a value, before its unit."""
_AND_A_HALF = re.compile(r"\s+buçuk(?!\w)", re.IGNORECASE)
"""Turkish "and a half" between a number and its unit ("iki buçuk saat": two and a half hours)."""
_RANGE_WORDS = frozenset({"-", "to", "bis", "à", "a", "al", "tot", "till", "~", "–", "hasta",
                          "até", "到", "至", "から", "and", "und", "et", "y", "e", "och", "en",
                          "ve"})  # fmt: skip


def _is_range(text: str, first: Any, second: Any) -> bool:
    return text[first.end : second.start].strip().casefold() in _RANGE_WORDS


@lru_cache(maxsize=1 << 12)  # a text that repeats a form asks the same windows again
def _in_words(text: str) -> tuple[Decimal, str, int, int] | None:
    """A quantity whose number is in words ("tien kilometer", "media vuelta", "dos pies")."""
    words = list(re.finditer(r"\S+", text))
    for count in range(min(len(words) - 1, 6), 0, -1):
        head_end = words[count - 1].end()
        head = text[:head_end]
        head_words = head.casefold().split()
        value: Decimal | None
        if head_words[-1] in _HALF and all(w in _ARTICLES for w in head_words[:-1]):
            value = Decimal("0.5")
        elif len(head_words) == 2 and head_words[0] in _HALF and head_words[1] in _ARTICLES:
            value = Decimal("0.5")  # "half a kilo", "halv en liter"
        else:
            value = numbers._read_decimal(head, None, None)  # noqa: SLF001
        if value is None:
            continue
        half = _AND_A_HALF.match(text, head_end)
        if half is not None:
            value, head_end = value + Decimal("0.5"), half.end()  # "İki buçuk saat"
        dozen = re.match(r"\s*(\S+?)[.,;:!?]?(?=\s|$)", text[head_end:])
        if dozen and numbers.scale_value(dozen.group(1)) == 12:
            return value * 12, "piece", 0, head_end + dozen.end()  # "drei Dutzend", "une douzaine"
        unit = _unit_after(text[head_end:])
        if unit is not None:
            return value, unit[0], 0, head_end + unit[1]
    # CJK numerals glued to the unit ("两米半", "四十克") come through the scanner; nothing else.
    return None


def read_quantity_range(text: str) -> QuantityRange | None:
    """A range of quantities in one unit: "10-20 mg", "5 to 7 km", "10 mg - 20 mg"."""
    prepared = _prepare(text)
    if prepared is None:
        return None
    hits = list(itertools.islice(numbers._scan(prepared, letters=False), 3))  # noqa: SLF001
    if len(hits) != 2:
        return None
    first, second = hits
    middle = prepared[first.end : second.start]
    first_unit = _unit_after(middle)
    if first_unit is not None and middle[first_unit[1] :].strip().casefold() in _RANGE_WORDS:
        middle = middle[first_unit[1] :]
    else:
        first_unit = None
    if middle.strip().casefold() not in _RANGE_WORDS:
        return None
    unit = _unit_after(prepared[second.end :])
    if unit is None or prepared[second.end + unit[1] :].strip(" .,;"):
        return None
    if first_unit is not None and first_unit[0] != unit[0]:
        return None
    low = first.value * (second.scale if first.scale == 1 else 1)
    return QuantityRange(numbers._number(low), numbers._number(second.value), unit[0])  # noqa: SLF001


_TEMPERATURES = frozenset({"°C", "°F", "K", "°R", "°"})
_RATIOS = frozenset({"%", "‰"})
_BEFORE_CHARS = 8  # "华氏温度98.6度": a scale word may stand a few characters before the number


def find_quantities(text: str) -> list[QuantitySpan]:
    """Every number with its unit in ``text``, with its span, left to right.

    "12 boxes", "2,5 kg", "tien kilometer", "12千米", "华氏温度98.6度": each number of the
    text (digits, CJK numerals, number words) is read with the unit after it as
    ``read_quantity`` reads a span; a degree without its scale looks for the scale just before
    the number. Numbers glued to letters are codes, not quantities; shares ("25%") and an
    article before a count word ("een paar", "a box") are not quantities either.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    text = text[: numbers.MAX_TEXT]
    prepared = numbers.fold(text).replace("º", "°")
    out: list[QuantitySpan] = []
    covered = 0
    dates = [m.span() for m in _CJK_DATE.finditer(prepared)]
    date_starts = [start for start, _ in dates]
    for number in numbers.find_numbers(text, languages=_UNIT_LANGUAGES):
        if number.start < covered:
            continue
        in_date = bisect.bisect_right(date_starts, number.start) - 1
        if in_date >= 0 and number.start < dates[in_date][1]:
            continue  # "3月15日", "2024년 3월": a date, not three months
        if number.text == "零" and prepared.startswith("下", number.end):
            continue  # "零下5度": below zero, not zero degrees
        if _TIMES_BEFORE_DIGIT.match(prepared, number.end):
            continue  # "4x100m", "2 × 3 m": a factor, the quantity is after it
        short = numbers.is_short_word(number.text)
        spelled = short and _spelled_unit_after(prepared, number)
        if short and not spelled and not _article_before_half(prepared, number):
            continue  # "on hold": Turkish "on" (10), Norwegian "to" (2) are words here
        if number.ordinal:
            continue  # "the third box", "een tweede dek": a rank, not a count
        if number.text in numbers.LONE_FRACTIONS:  # "½ cup": no digits to scan
            follows = prepared[number.end : number.end + 2].strip()[:1]
            after = None
            if follows.isalpha():  # "½ ½ ½…" reads no unit after each
                after = _unit_after(prepared[number.end : number.end + 48])
            found = (Decimal(str(number.value)), after[0], number.start,
                     number.end + after[1]) if after else None  # fmt: skip
        else:
            found = _quantity_at(prepared, number.start, number.end)
            if (
                short
                and not spelled
                and (found is None or _HALF_AFTER_UNIT.match(prepared, found[3]) is None)
            ):
                continue  # an article is "one" only of a unit a half follows: "un kilo et demi"
            if found is None and not number.text.isdigit():  # "10 bin metre", "2 Millionen Tonnen"
                after = _unit_after(prepared[number.end : number.end + 48])
                if after is not None:
                    value = Decimal(str(number.value))
                    found = (value, after[0], number.start, number.end + after[1])
        if found is None:
            continue
        value, unit, start, end = found
        if unit in _RATIOS or unit.startswith("/"):
            continue  # "25%" is a share of something; "ett par meter" is a couple, not per metre
        half = _HALF_AFTER_UNIT.match(prepared, end)
        if half is not None and value % 1 == 0:
            value, end = value + Decimal("0.5"), half.end()  # "quatre mètres et demi"
        if number.text.casefold() in _ARTICLES or number.text.casefold() in _HALF:
            value, start = _whole_before_half(prepared, start, value)  # "vier en een halve"
        if _money_before(prepared, number.start):
            continue  # "€10M", "$2.174T": an amount of money, not ten minutes or teslas
        if unit == "s" and _DECADE.fullmatch(prepared, max(0, number.start - 1), end):
            continue  # "the 1960s", "the '90s": a decade, not seconds
        if unit in _CLOCK_SUFFIXES and _clock_time(prepared, number.start, value):
            continue  # "5 pm", "2:00 pm": a time of day, not picometres
        if unit in _COUNTS and number.text.casefold() in _ARTICLES and value == 1:
            continue  # "een paar jaar", "a box of": an article, not a count
        gap = len(prepared[number.end :]) - len(prepared[number.end :].lstrip())
        if unit in _LENGTHS:
            per = _PER_BEFORE.search(prepared, max(0, start - 12), start)
            if per is not None:  # "saatte 120 kilometre", "시속 100km", "时速120公里": a speed
                name = f"{unit}/{_PER_BEFORE_WORDS[per.group(1).casefold()]}"
                unit, start = _COMPOUND_NAMES.get(name, name), per.start()
        if _word_not_unit(prepared, end):
            continue  # "two chili peppers": English chili, not Italian kilos
        if _korean_word_not_unit(prepared, number, end):
            continue  # "삼분의 일" is a third, "일만 주세요" "give me 10,000", not weeks
        if unit == "in" and is_preposition_in(prepared, number.end + gap):
            continue  # "turned 30 in March", "5 in the morning": the preposition
        if (
            text[end - 1 : end] in _MARKS
            and number.start > 0
            and prepared[number.start - 1] in _OPENING_QUOTES
        ):
            continue  # 'he said "5"': a quoted number, not five inches
        if unit in _TEMPERATURES and value > 0:
            sign = _MINUS_BEFORE.search(prepared, max(0, start - 16), number.start)
            ahead = prepared[max(0, sign.start() - 64) : sign.start()] if sign else ""
            if sign is not None and not ahead.rstrip()[-1:].isdigit():
                # "minus 15 degrees", "零下15度", "영하 5도", "摄氏零下5度" (the scale before the
                # sign); "10 minus 5 degrees" is arithmetic
                value, start = -value, min(start, sign.start())
            else:
                below = _BELOW_ZERO.match(prepared, end)
                if below is not None:  # "5 grados bajo cero", "5 degrees below zero"
                    value, end = -value, below.end()
        out.append(QuantitySpan(start, end, text[start:end], numbers._number(value), unit))  # noqa: SLF001
        covered = end
    return _with_fractions(
        text, prepared, _with_halves(text, prepared, _with_hyphenated(text, prepared, out))
    )


_NOT_UNIT_BEFORE = {"chili": frozenset({"pepper", "peppers", "powder", "flakes", "sauce", "dog",
                                         "dogs", "con", "oil"})}  # fmt: skip
"""Unit words that before these words are another word: English "chili peppers"."""
_LAST_AND_NEXT = re.compile(r"(\S+)\s+([^\W\d_]+)")


_DURATIONS = frozenset({"h", "min", "s", "d", "week", "month", "year"})
_VERBS_TOO = frozenset({"meter", "meters"})  # English "to meter the flow"


def _spelled_unit_after(text: str, number: numbers.NumberSpan) -> bool:
    """Whether a short number word ("on", "to") stands before a unit spelled out in full.

    Turkish "on metreye" (10 m), Norwegian "to kilometer": a unit name of five letters or
    more, no duration ("on days") and no article before it ("un kilo" is one only with a half).
    """
    if number.text.casefold() in _ARTICLES:
        return False
    after = _unit_after(text[number.end : number.end + 32])
    if after is None or after[0] in _DURATIONS:
        return False
    word = text[number.end : number.end + after[1]].strip()
    return len(word) >= 5 and word.isalpha() and word.casefold() not in _VERBS_TOO


def _word_not_unit(text: str, end: int) -> bool:
    """Whether the unit word ending at ``end`` is another word before the next one.

    The words are ``_NOT_UNIT_BEFORE``'s; only a few characters around ``end`` are read.
    """
    space = text.rfind(" ", max(0, end - 16), end)
    start = space + 1 if space >= 0 else max(0, end - 16)
    pair = _LAST_AND_NEXT.match(text[start : end + 16])
    if pair is None or start + pair.end(1) != end:
        return False
    return pair.group(2).casefold() in _NOT_UNIT_BEFORE.get(pair.group(1).casefold(), ())


def _korean_word_not_unit(text: str, number: numbers.NumberSpan, end: int) -> bool:
    """Whether the Hangul syllable read as a unit after ``number`` is some other word.

    분 before 의 writes a fraction ("삼분의 일", "3분의 1"). After a Sino-Korean numeral, a
    unit of one syllable (분, 주, 일, 년, 도…) counts only glued to it ("오십이명", "이천년"):
    with a space it is as often the next word ("일만 주세요": "give me 10,000").
    """
    numeral = number.text.replace(" ", "")
    hangul_numeral = bool(numeral) and all("가" <= c <= "힣" for c in numeral)
    written = text[number.end : end]
    word = written.strip()
    if not word:  # the unit read inside the numerals: "삼백 삼십 일" is 331
        return hangul_numeral and end <= number.end
    if not "가" <= word[0] <= "힣":
        return False
    if word == "분" and text[end : end + 1] == "의":
        return True
    return (
        hangul_numeral
        and len(word) == 1
        and written[:1].isspace()
        and not numbers.is_native_korean(numeral)  # "다섯 명": native numbers, then a space
    )


_DECADE = re.compile(r"\W?(?:1\d|20)\d0s|['’]\d0s")


def _money_before(text: str, start: int) -> bool:
    """Whether a currency symbol stands right before ``start`` (one space allowed)."""
    before = text[max(0, start - 2) : start].rstrip(" ")
    return bool(before) and unicodedata.category(before[-1]) == "Sc"


_MAX_HALVES = 200
"""Half words tried per text: each is read with the words after it, so a text of them is bounded."""


_INCH_OR_PREPOSITION = re.compile(
    r"in\s+(?:[A-Z0-9]|(?:the|a|an|this|that|these|those|his|her|its|their|our|my|your|"
    r"each|every|all|which|what|total|order|advance|addition|part|time|case)\b)"
)
"""A bare "in" after a number and before a capital, a digit or a determiner is the preposition."""


def is_preposition_in(text: str, start: int) -> bool:
    """Whether the "in" at ``text[start:]`` is the preposition, not inches.

    "turned 30 in March", "3 in a row", "5 in the morning": before a capital, a digit or a
    determiner. "12 in wide", "3 in of rain" and "12 in." stay inches.
    """
    return _INCH_OR_PREPOSITION.match(text, start) is not None


_PER_BEFORE_WORDS = {"saatte": "h", "dakikada": "min", "saniyede": "s", "시속": "h", "초속": "s",
                     "時速": "h", "时速": "h", "毎時": "h", "秒速": "s", "分速": "min",
                     "每小时": "h", "每小時": "h", "每秒": "s", "每分钟": "min",
                     "每分鐘": "min"}  # fmt: skip
_PER_BEFORE = re.compile(rf"(?<!\w)({'|'.join(_PER_BEFORE_WORDS)})\s*$", re.IGNORECASE)
"""A rate's time written before the number: a length after it is a speed."""
_HALF_AFTER_UNIT = re.compile(
    r"\s+(?:et\s+demie?|y\s+medi[oa]|e\s+mezz[oa]|e\s+mei[oa]|and\s+a\s+half)(?!\w)",
    re.IGNORECASE,
)
"""French, Spanish, Italian and Portuguese write the half after its unit: "metros y medio"."""
_WHOLE_BEFORE_HALF = re.compile(r"(?<!\S)(\S+)\s+(?:och|og|en|and|und|ve)\s+$", re.IGNORECASE)
"""A whole number and a joiner before "en halv meter", "bir ve çeyrek yıl": and a half, a part."""
_BELOW_ZERO = re.compile(
    r"\s+(?:below\s+zero|en\s+dessous\s+de\s+z[ée]ro|au-dessous\s+de\s+z[ée]ro|unter\s+null"
    r"|onder\s+nul|bajo\s+cero|abaixo\s+de\s+zero|sotto\s+(?:lo\s+)?zero|under\s+noll)(?!\w)",
    re.IGNORECASE,
)
"""Below zero, after a temperature: "5 Grad unter Null" is minus five."""
_MINUS_BEFORE = re.compile(
    r"(?:(?<!\w)(?:minus|moins|menos|meno|min|eksi|минус|माइनस|sıfırın altında)\s+"
    r"|(?:零下|영하|マイナス|氷点下|마이너스)\s*)$",
    re.IGNORECASE,
)
"""A sign word just before a temperature's number."""


_HYPHENATED = re.compile(r"(?<![\w-])([^\W\d_]{3,12})-([^\W\d_]{1,16})(?![\w-])")
"""An English number word and a unit joined into an adjective: "a two-year contract"."""
_MAX_HYPHENATED = 200


def _with_hyphenated(text: str, prepared: str, found: list[QuantitySpan]) -> list[QuantitySpan]:
    """``found`` and the number words hyphenated to their unit, which no number starts."""
    joined: list[QuantitySpan] = []
    for match in _uncovered(_HYPHENATED.finditer(prepared), found, _MAX_HYPHENATED):
        unit = read_unit(match.group(2))
        if unit is None or unit in _RATIOS or numbers.find_numbers(match.group(2)):
            continue  # "twenty-fifth" is a number, not twenty bottles of a fifth
        # English writes these adjectives ("fire-box" is no Danish four boxes)
        words = numbers.find_numbers(match.group(1), languages=("en",))
        if len(words) != 1 or words[0].text != match.group(1) or words[0].ordinal:
            continue  # "second-hand", "well-known": a rank, or no number at all
        span = text[match.start() : match.end()]
        joined.append(QuantitySpan(match.start(), match.end(), span, words[0].value, unit))
    return sorted([*found, *joined], key=lambda q: q.start) if joined else found


def _uncovered(
    matches: Iterator[re.Match[str]], found: list[QuantitySpan], limit: int
) -> Iterator[re.Match[str]]:
    """The first ``limit`` of ``matches``, less those that start inside a quantity of ``found``."""
    starts = [q.start for q in found]
    for match in itertools.islice(matches, limit):
        at = bisect.bisect_right(starts, match.start()) - 1
        if not (at >= 0 and match.start() < found[at].end):
            yield match


_NO_CJK_HALF = frozenset({"min", "piece", "°"})
"""Units a CJK half does not take: Japanese 半分 is "half", 半个 a count word, 半度 rare."""


def _half_unit_glued(prepared: str, half: re.Match[str], unit: tuple[str, int]) -> bool:
    """Whether the unit after a CJK half is written against it.

    Korean: a unit name of two or more syllables, after at most a space ("반 리터", not "반 명").
    """
    written = prepared[half.end() : half.end() + unit[1]]
    if half.group() == "半":
        return not written[:1].isspace()
    name = written.strip()
    return len(name) >= 2 and name.startswith(numbers.HANGUL_UNITS)


_NOT_AFTER_HYPHEN = frozenset({"h", "min", "s", "d", "week", "month", "year", "°"})
"""Units whose hyphenated half is a word of its own ("half-time", "half-day", "demi-heure")."""


def _article_before_half(prepared: str, number: numbers.NumberSpan) -> bool:
    """Whether a short word is an article a half follows closely.

    Such an article may be "one" of the unit between ("un kilo et demi" is 1.5 kg); most are
    not, and read no unit.
    """
    return (
        number.text.casefold() in _ARTICLES
        and _HALF_AFTER_UNIT.search(prepared, number.end, number.end + 40) is not None
    )


def _whole_before_half(prepared: str, start: int, value: Decimal) -> tuple[Decimal, int]:
    """A part at ``start`` with the whole number and joiner before it: "fyra och en halv"."""
    if not 0 < value < 1:
        return value, start
    whole = _WHOLE_BEFORE_HALF.search(prepared, max(0, start - 40), start)
    if whole is None:
        return value, start
    number = numbers._read_decimal(whole.group(1), None, None)  # noqa: SLF001
    if number is None or number <= 0 or number % 1:
        return value, start
    return number + value, whole.start()


def _with_halves(text: str, prepared: str, found: list[QuantitySpan]) -> list[QuantitySpan]:
    """``found`` and the halves no number starts: "half a kilo", "ein halbes Kilo", "आधा किलो"."""
    halves: list[QuantitySpan] = []
    for match in _uncovered(_HALF_START.finditer(prepared), found, _MAX_HALVES):
        lead = prepared[max(0, match.start() - 6) : match.start()].split()
        start = match.start() - (len(lead[-1]) + 1 if lead and lead[-1].casefold() in _ARTICLES
                                 and prepared[match.start() - 1] == " " else 0)  # fmt: skip
        if prepared[match.end() : match.end() + 1] == "-":  # "un demi-litre", "half-litre"
            after = _unit_after(prepared[match.end() + 1 : match.end() + 48])
            if after is None:
                continue
            unit, end = after[0], match.end() + 1 + after[1]
            if prepared[end : end + 1].isalnum():
                continue  # the unit is the start of a longer word
            if unit in _COUNTS or unit in _NOT_AFTER_HYPHEN:
                continue  # "half-time", "half-bottle": a word, not half an hour or a bottle
        else:
            read = _in_words(prepared[start : match.end() + 48])
            if read is None or read[0] != Decimal("0.5"):
                continue
            _, unit, _, used = read
            end = start + used
        value, start = _whole_before_half(prepared, start, Decimal("0.5"))
        halves.append(
            QuantitySpan(start, end, text[start:end], numbers._number(value), unit)  # noqa: SLF001
        )
    for match in _uncovered(_CJK_HALF.finditer(prepared), found, _MAX_HALVES):
        after = _unit_after(prepared[match.end() : match.end() + 48])
        if after is None or after[0] in _NO_CJK_HALF:
            continue
        if not _half_unit_glued(prepared, match, after):
            continue
        end = match.end() + after[1]
        halves.append(QuantitySpan(match.start(), end, text[match.start() : end], 0.5, after[0]))
    for match in _uncovered(_ARTICLE_DOZEN.finditer(prepared), found, _MAX_HALVES):
        span = text[match.start() : match.end()]
        halves.append(QuantitySpan(match.start(), match.end(), span, 12, "piece"))  # "a dozen eggs"
    return sorted([*found, *halves], key=lambda q: q.start) if halves else found


_QUARTER, _THIRD = Decimal(1) / 4, Decimal(1) / 3
_FRACTION_WORDS: dict[str, tuple[Decimal, frozenset[str] | None]] = {
    # word: (its value, the connectors one of which must follow it; None: none needed)
    **dict.fromkeys(("quarter", "quarters", "viertel", "kwart", "kvarts", "çeyrek"),
                    (_QUARTER, None)),
    **dict.fromkeys(("drittel",), (_THIRD, None)),
    **dict.fromkeys(("achtel",), (Decimal(1) / 8, None)),
    **dict.fromkeys(("dreiviertel", "driekwart"), (3 * _QUARTER, None)),
    **dict.fromkeys(("third", "thirds"), (_THIRD, frozenset({"of"}))),
    **dict.fromkeys(("fourth", "fourths"), (_QUARTER, frozenset({"of"}))),
    **dict.fromkeys(("fifth", "fifths"), (Decimal(1) / 5, frozenset({"of"}))),
    **dict.fromkeys(("eighth", "eighths"), (Decimal(1) / 8, frozenset({"of"}))),
    **dict.fromkeys(("tenth", "tenths"), (Decimal(1) / 10, frozenset({"of"}))),
    **dict.fromkeys(("quart", "quarts"), (_QUARTER, frozenset({"de", "d'", "du"}))),
    **dict.fromkeys(("tiers",), (_THIRD, frozenset({"de", "d'", "du"}))),
    **dict.fromkeys(("cuarto", "cuartos", "quarto", "quartos"),
                    (_QUARTER, frozenset({"de", "del", "do", "da", "di", "d'"}))),
    **dict.fromkeys(("tercio", "tercios", "terço", "terços", "terzo", "terzi"),
                    (_THIRD, frozenset({"de", "del", "do", "da", "di", "d'"}))),
    **dict.fromkeys(("quarti",), (_QUARTER, frozenset({"di", "d'"}))),
}  # fmt: skip
"""Fraction words before a unit, in the languages whose number words the finder reads: "three
quarters of a mile", "ein Viertel Liter", "trois quarts de litre", "een kwart liter". Where the
word is also an ordinal or a unit ("third", "quart", "cuarto"), a connector must follow it."""
_GLUED_FRACTIONS = frozenset({"viertel", "drittel", "achtel", "dreiviertel", "kwart", "driekwart"})
"""Fraction words German and Dutch write against their unit: "Viertelliter", "kwartliter"."""
_FRACTION_START = re.compile(
    rf"(?<![^\W\d_])(?:{'|'.join(sorted(_FRACTION_WORDS, key=len, reverse=True))})", re.IGNORECASE
)
_FRACTION_LINK = re.compile(
    r"(?:-|\s{1,3}(?:(of|de|du|di|del|do|da|van)\s{1,3}|(d['’])|)?)"
    r"(?:(?:a|an|un|une|una|uno|um|uma|ein|eine|einen|einem|een|en|ett|bir)\s{1,3})?",
    re.IGNORECASE,
)
"""What may stand between a fraction word and its unit: a hyphen, or a connector and article."""
_CANTONESE_FRACTION = re.compile(r"([一二三四五六七八九十]{1,3})分([一二三四五六七八九十]{1,3})")
"""Cantonese writes a fraction as "四分一" (a quarter): read before a unit only, as "十分一致"
is "very consistent" (the other fractions, "四分之一", "4分の1", are numbers: ``numbers``)."""


def _with_fractions(text: str, prepared: str, found: list[QuantitySpan]) -> list[QuantitySpan]:
    """``found`` with the fractions of a unit: "a quarter of an hour", "四分一升".

    A fraction that holds quantities read without it ("three quarters" as three quarter-years,
    "4分" as four minutes) replaces them; one inside a longer quantity ("one and a quarter
    miles") is left to it.
    """
    reads = [read for match in itertools.islice(_FRACTION_START.finditer(prepared), _MAX_HALVES)
             if (read := _word_fraction(prepared, match)) is not None]  # fmt: skip
    cantonese = itertools.islice(_CANTONESE_FRACTION.finditer(prepared), _MAX_HALVES)
    reads += [read for match in cantonese
              if (read := _cantonese_fraction(prepared, match)) is not None]  # fmt: skip
    if not reads:
        return found
    out = list(found)
    for value, unit, start, end in sorted(reads, key=lambda r: r[2]):
        inside = [q for q in out if q.start < end and start < q.end]
        if any(q.start < start or q.end > end for q in inside):
            continue  # part of a longer quantity, or of another fraction
        out = [q for q in out if q not in inside]
        out.append(QuantitySpan(start, end, text[start:end], numbers._number(value), unit))  # noqa: SLF001
    return sorted(out, key=lambda q: q.start)


def _word_fraction(prepared: str, match: re.Match[str]) -> tuple[Decimal, str, int, int] | None:
    """The quantity a fraction word starts or ends the numerator of: (value, unit, start, end)."""
    part, connectors = _FRACTION_WORDS[match.group().casefold()]
    start, end = match.start(), match.end()
    if prepared[end : end + 1].isalpha():  # German and Dutch write it against: "Viertelliter"
        if match.group().casefold() not in _GLUED_FRACTIONS:
            return None  # "quarterly", "quarterback"
        unit = _unit_after(prepared[end : end + 24])
        if unit is None or prepared[end + unit[1] : end + unit[1] + 1].isalnum():
            return None
        used = unit[1]
    else:
        link = _FRACTION_LINK.match(prepared, end)
        if link is None or (connectors is not None and (link.group(1) or link.group(2) or "")
                            .casefold().replace("’", "'") not in connectors):  # fmt: skip
            return None
        rest = prepared[link.end() : link.end() + 48]
        unit = _unit_after(rest)
        if unit is None or prepared[link.end() + unit[1] : link.end() + unit[1] + 1].isalnum():
            return None
        word_at = link.end() + len(rest) - len(rest.lstrip())
        if unit[0] == "in" and is_preposition_in(prepared, word_at):
            return None  # "a quarter in the lead"
        used = link.end() - end + unit[1]
    if unit[0] in _RATIOS or unit[0].startswith("/") or unit[0] in _COUNTS:
        return None
    named = read_unit(prepared[start : end + used])
    if named is not None and "/" not in named:
        return None  # "cuartos de galón" is the quart's name: a count of quarts, not a fraction
    numerator, begin = _numerator_before(prepared, start)
    if numerator is None:
        return None
    value, begin = _whole_before_half(prepared, begin, numerator * part)
    return value, unit[0], begin, end + used


def _numerator_before(prepared: str, start: int) -> tuple[Decimal | None, int]:
    """How many parts the word before a fraction word counts, and where the count starts.

    An article or no count is one, a number that many; a rank ("the first quarter of a year")
    is no count (None).
    """
    before = re.search(r"(\S+)[\s-]+$", prepared[max(0, start - 24) : start])
    if before is None:
        return Decimal(1), start
    word, begin = before.group(1), start - len(before.group())
    if word.casefold() in _ARTICLES:
        return Decimal(1), begin
    hits = numbers.find_numbers(word, languages=_UNIT_LANGUAGES)
    if len(hits) != 1 or hits[0].text != word:
        return Decimal(1), start
    if hits[0].ordinal or not 0 < hits[0].value <= 1000 or hits[0].value % 1:
        return None, start
    return Decimal(hits[0].value), begin


def _cantonese_fraction(
    prepared: str, match: re.Match[str]
) -> tuple[Decimal, str, int, int] | None:
    """A Cantonese fraction before a unit ("四分一升"): (value, unit, start, end)."""
    denominator = _words.cjk_value(match.group(1))
    numerator = _words.cjk_value(match.group(2))
    if not denominator or numerator is None or numerator > denominator:
        return None
    unit = _unit_after(prepared[match.end() : match.end() + 24])
    if unit is None or unit[0] in _RATIOS or unit[0] in _COUNTS or unit[0] == "min":
        return None
    return numerator / denominator, unit[0], match.start(), match.end() + unit[1]


_ARTICLE_DOZEN = re.compile(
    r"(?<!\w)(?:a|one|une|una|un|ein|eine|een|ett|um|uma)\s+"
    r"(?:dozen|douzaine|docena|dozzina|dúzia|dutzend|dozijn|dussin)(?!\w)",
    re.IGNORECASE,
)


_UNIT_LANGUAGES = (*_words.TEXT2NUM_LANGUAGES, *_words.TABLE_LANGUAGES, "ko")
"""Number words read before a unit: with "litre" after it, Turkish "iki" is two, not a word, and
Korean "삼 리터" three litres."""
_CJK_NUMBER = r"[\d〇一二三四五六七八九十]{1,4}"
_CJK_DATE = re.compile(
    rf"(?:{_CJK_NUMBER}\s*[年년]\s*)?{_CJK_NUMBER}\s*[月월]\s*{_CJK_NUMBER}\s*[日일号號]"
    rf"|{_CJK_NUMBER}\s*[年년]\s*{_CJK_NUMBER}\s*[月월]"
)
"""A CJK or Korean date (month and day, or year and month): its 月 and 日 are no durations."""
_CLOCK_SUFFIXES = frozenset({"pm", "am"})
"""Picometre and attometre symbols, which are also "p.m." and "a.m." after an hour."""


def _clock_time(text: str, start: int, value: Decimal) -> bool:
    """Whether the number at ``start`` is an hour or the minutes of one ("5 pm", "2:00 pm")."""
    if re.search(r"\d[:.h]$", text[max(0, start - 3) : start]):
        return True
    return value == value.to_integral_value() and 1 <= value <= 12


@cache
def _scale_names() -> re.Pattern[str]:
    """The look-up keys of temperature scales' names ("摄氏", "섭씨", "celsius"), as one pattern."""
    _, folded = _lexicon()
    names = {name for name, unit in folded.items()
             if unit in _TEMPERATURES - {"°"} and len(name) >= 2}  # fmt: skip
    return re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))


def _quantity_at(text: str, start: int, end: int) -> tuple[Decimal, str, int, int] | None:
    """The quantity whose number is ``text[start:end]``: (value, unit, start, end), or None."""
    window = text[start : min(len(text), end + 48)]
    found = _read(window)
    if found is None or found[2] != 0:
        return None
    value, unit, _, used = found
    if unit == "°" and start > 0:
        lead = max(0, start - _BEFORE_CHARS)
        clause = re.split(r"[,;.!?。，]", text[lead:start])[-1]
        sign = _MINUS_BEFORE.search(clause)
        named = clause[: sign.start()] if sign is not None else clause  # "섭씨 영하 5도"
        if not _scale_names().search(key(named)):
            named = ""  # no scale's name there: no lead to try (a reading per cut is slow)
        for cut in range(len(named)):  # the longest lead that names the scale
            if named[cut].isspace():
                continue
            if key(named[cut:].strip()) in _AFTER_DEGREE_ONLY:
                break  # "शून्य से 5 डिग्री": "from", not Celsius
            wider = _read(named[cut:] + window)
            if wider is not None and wider[1] in _TEMPERATURES - {"°"}:
                begin = start - len(clause) + cut
                return wider[0], wider[1], begin, start + wider[3] - (len(named) - cut)
    return value, unit, start, start + used


def same_quantity(a: tuple[float, str], b: tuple[float, str], *, rel_tol: float = 1e-6) -> bool:
    """Whether two (value, unit) quantities are equal, converting units through pint."""
    (value_a, unit_a), (value_b, unit_b) = a, b
    if unit_a == unit_b:
        return numbers.close(value_a, value_b, rel_tol)
    expression_a = CANONICAL_UNITS.get(unit_a, (unit_a, ()))[0]
    expression_b = CANONICAL_UNITS.get(unit_b, (unit_b, ()))[0]
    registry = unit_registry()
    try:
        converted = registry.Quantity(value_a, expression_a).to(expression_b).magnitude
    except Exception:  # noqa: BLE001  # unknown or incompatible units are not the same
        return False
    return numbers.close(float(converted), value_b, rel_tol)
