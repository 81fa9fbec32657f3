"""Money: markers from every CLDR locale, ambiguous markers, amounts with their markers."""

from __future__ import annotations

import time

import pytest

from aau import values
from aau.values import currency_codes, currency_renderings, read_currency, read_money
from tests.conftest import value_within


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [
        ("EUR 1.250,00", 1250, "EUR"),
        ("1 250,50 Kč", 1250.5, "CZK"),
        ("R$ 10,00", 10, "BRL"),
        ("75 million dollars", 75_000_000, "USD"),
        ("¥1,000", 1000, "JPY"),
        ("12,5 тыс. руб.", 12500, "RUB"),
        ("Rp 50.000", 50000, "IDR"),
        ("₹ 1,20,000", 120000, "INR"),
        ("€5,90", 5.9, "EUR"),
        ("12 zł", 12, "PLN"),
        ("150 грн.", 150, "UAH"),
        ("25 TL", 25, "TRY"),
        ("TL 25", 25, "TRY"),
        ("R 100", 100, "ZAR"),
        ("US$ 3.5M", 3_500_000, "USD"),
        ("CHF 1'250.50", 1250.5, "CHF"),
        ("c $ 16,4 milioni", 16_400_000, "CAD"),
        ("hk $ 10,05 miliardi", 10_050_000_000, "HKD"),
        ("16,4 miljoner us$", 16_400_000, "USD"),
        ("sek 30 miljoner", 30_000_000, "SEK"),
        ("75 usd milhões", 75_000_000, "USD"),
        ("1,280円", 1280, "JPY"),
        ("35億円", 3_500_000_000, "JPY"),
        ("1000万人民元", 10_000_000, "CNY"),
        ("1.0092スイス・フラン", 1.0092, "CHF"),
        ("5306億ニュー台湾ドル", 530_600_000_000, "TWD"),
        ("一ドル", 1, "USD"),
        ("七万円", 70000, "JPY"),
        ("5만 원", 50000, "KRW"),
        ("\\100", 100, "JPY"),
        ("125 milioni di dollari australiani", 125_000_000, "AUD"),
        ("10050 milhões de dólares de hong kong", 10_050_000_000, "HKD"),
        ("420 milioni di marchi finlandesi", 420_000_000, "FIM"),
        ("2 miljarder amerikanska dollar", 2_000_000_000, "USD"),
        ("30 spänn", 30, "SEK"),
        ("(USD 5)", 5, "USD"),
    ],
)
def test_amounts_with_markers(text: str, amount: float, currency: str) -> None:
    money = read_money(text)
    assert money is not None, text
    assert money.amount == pytest.approx(amount)
    assert money.currency == currency


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [
        ("2222円13銭", 2222.13, "JPY"),
        ("2ドル3セント", 2.03, "USD"),
        ("545ドルと5セント", 545.05, "USD"),
        ("5人民元と3角", 5.3, "CNY"),
        ("50元6角3分", 50.63, "CNY"),
        ("五元三角", 5.3, "CNY"),
        # after the yuan one numeral alone is 角 (tenths), 半 a half; 零 keeps 分 (hundredths)
        ("两块五", 2.5, "CNY"),
        ("三块半", 3.5, "CNY"),
        ("两块零五", 2.05, "CNY"),
        ("100ユーロと30", 100.3, "EUR"),
        ("5 euro och 50 cent", 5.5, "EUR"),
        ("25 euros com 50", 25.5, "EUR"),
        ("3 euros com 99 centavos", 3.99, "EUR"),
        ("15 usd 50", 15.5, "USD"),
        ("tredici euro e quarantacinque cent", 13.45, "EUR"),
        ("treze euros e quarenta e cinco centavos", 13.45, "EUR"),
        ("cinque milioni di yen", 5_000_000, "JPY"),
        ("um yen", 1, "JPY"),
        ("पचास डॉलर", 50, "USD"),
        ("सौ रुपये", 100, "INR"),
        ("15 पाउंड", 15, "GBP"),
        ("$ 300 मिलियन", 300_000_000, "USD"),
        # the hundredths of other currencies, joined by their languages' "and" (Duckling's
        # corpora), and cents written against their number
        ("15лв и 50ст", 15.5, "BGN"),
        ("10 lei si 50 bani", 10.5, "RON"),
        ("2 kune i 23 lipe", 2.23, "HRK"),
        ("10 zł 50 gr", 10.5, "PLN"),
        ("$20 and 43c", 20.43, "USD"),
        ("20 ringgit and 43c", 20.43, "MYR"),
        # a minor part in words that starts with a letter that is "and" somewhere ("y", "e")
        ("yüz lira yetmiş beş kuruş", 100.75, "TRY"),
        ("iki lira elli kuruş", 2.5, "TRY"),
    ],
)
def test_minor_units_and_words(text: str, amount: float, currency: str) -> None:
    money = read_money(text)
    assert money is not None, text
    assert money.amount == pytest.approx(amount)
    assert money.currency == currency


@pytest.mark.parametrize(
    "text",
    ["", "   ", "1250", "1.250,00", "twenty", "EUR", "EUR 1.250,00 and 5 USD", "the real estate",
     "24703L202", "12:30", "x" * 300],
)  # fmt: skip
def test_not_money(text: str) -> None:
    assert read_money(text) is None


def test_unresolved_marker_keeps_the_amount() -> None:
    money = read_money("kr 30")
    assert money is not None
    assert (money.amount, money.currency) == (30, None)
    assert read_money("kr 30", locale="sv") == (30, "SEK")
    assert read_money("30 kr", context="Oslo, Norway") == (30, "NOK")


def test_currency_codes() -> None:
    assert currency_codes("kr") >= {"SEK", "NOK", "DKK", "ISK"}
    assert "USD" in currency_codes("$")
    assert "CAD" in currency_codes("$")
    assert currency_codes("R$") == {"BRL"}
    assert currency_codes("Kč") == {"CZK"}
    assert currency_codes("złotych") == {"PLN"}
    assert currency_codes("dollari australiani") == {"AUD"}
    assert currency_codes("no currency") == frozenset()
    assert currency_codes("") == frozenset()


@pytest.mark.parametrize(
    ("marker", "kwargs", "expected"),
    [
        ("$", {}, "USD"),
        ("$", {"context": "a flat in Toronto"}, "CAD"),
        ("$", {"context": "prices in CAD"}, "CAD"),
        ("$", {"context": "NZ$ and others"}, "NZD"),
        ("$", {"locale": "en_CA"}, "CAD"),
        ("$", {"locale": "es_MX"}, "MXN"),
        ("$", {"context": "Sydney"}, "AUD"),
        ("kr", {}, None),
        ("kr", {"locale": "sv"}, "SEK"),
        ("kr", {"locale": "da_DK"}, "DKK"),
        ("kr", {"context": "Oslo"}, "NOK"),
        ("¥", {}, "JPY"),
        ("¥", {"context": "北京 中国"}, "CNY"),
        ("元", {}, "CNY"),
        ("Rs", {}, "INR"),
        ("Rs", {"context": "Karachi"}, "PKR"),
        ("R", {}, "ZAR"),
        ("R$", {}, "BRL"),
        ("C$", {}, "CAD"),
        ("US$", {}, "USD"),
        ("franc", {}, None),
        ("francs", {"context": "Zürich"}, "CHF"),
        ("peso", {}, None),
        # the stem "oland" is the Dutch and the Antillean guilder's: the whole name decides
        ("fiorini", {"context": "250 milioni di fiorini olandesi"}, "NLG"),
        ("fiorini", {"context": "fiorini delle Antille olandesi"}, "ANG"),
        ("EUR", {}, "EUR"),
        ("eur", {}, "EUR"),
        ("Euro", {}, "EUR"),
        ("nothing", {}, None),
    ],
)
def test_read_currency(marker: str, kwargs: dict[str, str], expected: str | None) -> None:
    assert read_currency(marker, **kwargs) == expected


def test_currency_renderings() -> None:
    czk = currency_renderings("CZK")
    assert "Kč" in czk
    assert "CZK" in czk
    assert "€" in currency_renderings("EUR")
    assert "$" in currency_renderings("CAD")
    assert currency_renderings("XXZ") == ("XXZ",)


def test_lookups_are_fast_once_built() -> None:
    read_money("EUR 1")
    started = time.perf_counter()
    for _ in range(200):
        read_money("1 250,50 Kč")
        read_currency("$", context="Toronto")
    assert time.perf_counter() - started < 2.0


# -- finding money in running text -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the price of the second simulator ranges between c $ 16.4 million",
         [("c $ 16.4 million", 16400000, "CAD")]),
        ("Celkem k úhradě 1 250,50 Kč do pátku.", [("1 250,50 Kč", 1250.5, "CZK")]),
        ("Preis: 49,90 € inkl. MwSt., Versand 4,90 €.",
         [("49,90 €", 49.9, "EUR"), ("4,90 €", 4.9, "EUR")]),
        ("これは 7万円です", [("7万円", 70000, "JPY")]),
        ("कंपनी ने तीन लाख पचास हज़ार रुपये का निवेश किया।",
         [("तीन लाख पचास हज़ार रुपये", 350000, "INR")]),
        ("मुझे दो किताबें दो", []),  # "दो" (two, also "give") with no marker is no money
        # units and words that CLDR also lists as some currency's symbol, as written here
        ("Le colis pèse 2,5 kg.", []),
        ("De wandeling is 12 km lang.", []),
        ("Die Preise stiegen um 5 Prozent.", []),
        ("a 10 ft pole and 5 g of salt", []),
        ("5 KM na granici, 5 Ft a pultnál",
         [("5 KM", 5, "BAM"), ("5 Ft", 5, "HUF")]),
        # a word after an amount in digits is no minor unit, whatever language counts with it
        ("US$82.15 on Monday", [("US$82.15", 82.15, "USD")]),
        ("커피 한 잔에 4,500원이에요", [("4,500원", 4500, "KRW")]),
        ("1.134 euros en 14 pagas", [("1.134 euros", 1134, "EUR")]),
        ("Der Eintritt kostet zwölf Euro fünfzig.", [("zwölf Euro fünfzig", 12.5, "EUR")]),
        # elision, Turkish endings, Korean and Hindi words, names CLDR leaves out
        ("Le club a payé 5,3 millions d'euros.", [("5,3 millions d'euros", 5_300_000, "EUR")]),
        ("Fiyatı 17.002 TL'ye çıktı", [("17.002 TL'ye", 17002, "TRY")]),
        ("Şirket 255 milyar dolara.", [("255 milyar dolara", 255_000_000_000, "USD")]),
        ("1,2 milyar Amerikan doları", [("1,2 milyar Amerikan doları", 1_200_000_000, "USD")]),
        ("Bilet 250 lirası.", [("250 lirası", 250, "TRY")]),
        ("책값은 삼만 원입니다", [("삼만 원", 30000, "KRW")]),
        # Sino-Korean numerals glued to the currency name; "조금" (a little) is no amount
        ("일조원의 정부 예산", [("일조원", 1_000_000_000_000, "KRW")]),
        ("삼만 오천원짜리 가방, 조금 비싸요", [("삼만 오천원", 35000, "KRW")]),
        ("만원 주세요", [("만원", 10000, "KRW")]),
        # the old Japanese and Korean encodings print the yen and won signs as a backslash
        ("そのシュークリームは1個\\100です", [("\\100", 100, "JPY")]),
        ("가격은 \\5,000입니다", [("\\5,000", 5000, "KRW")]),
        ("copy C:\\100 files", []),
        ("ढाई सौ रुपये", [("ढाई सौ रुपये", 250, "INR")]),
        ("300万英镑", [("300万英镑", 3_000_000, "GBP")]),
        ("500 Millionen britischen Pfund",
         [("500 Millionen britischen Pfund", 500_000_000, "GBP")]),
        ("1,200 येन लगे", [("1,200 येन", 1200, "JPY")]),
        ("一株あたり1.95香港ドル", [("1.95香港ドル", 1.95, "HKD")]),
        # Chinese names a currency before the amount and counts it in 元 after (was CNY)
        ("他花了港币100元买书", [("港币100元", 100, "HKD")]),
        ("日币1000元，韩币5万元", [("日币1000元", 1000, "JPY"), ("韩币5万元", 50000, "KRW")]),
        # Chinese short names (加元 was CNY; 卢比 and 法郎 name several currencies) and minor
        # units of one currency (were nothing)
        ("五十加元，五百卢比，一百兰特", [("五十加元", 50, "CAD"), ("五百卢比", 500, None),
                                        ("一百兰特", 100, "ZAR")]),
        ("十五美分的硬币，五十欧分，50便士，5分钱",
         [("十五美分", 0.15, "USD"), ("五十欧分", 0.5, "EUR"), ("50便士", 0.5, "GBP"),
          ("5分钱", 0.05, "CNY")]),
        # a demonym before a generic marker in Hindi (was nothing)
        ("5 अमेरिकी डॉलर", [("5 अमेरिकी डॉलर", 5, "USD")]),
        ("Order 2024-117 for 12 boxes, phone +49 30 1234567.", []),
        # a comma ends an amount: the marker after it belongs to the next one
        ("scesa del 19 % rispetto al 1978, a hk $ 10,05 miliardi.",
         [("hk $ 10,05 miliardi", 10050000000, "HKD")]),
        # lower-case words that are also ISO codes are words ("che" is not CHE)
        ("ha annunciato che 8 ministri hanno ricevuto cinque milioni di yen",
         [("cinque milioni di yen", 5000000, "JPY")]),
        # English press forms: glued scale letters, fractions of a scale, decimals in words
        ("he owes $1.5m in taxes; losses of £3bn", [("$1.5m", 1_500_000, "USD"),
                                                    ("£3bn", 3_000_000_000, "GBP")]),
        ("the firm lost half a million dollars",
         [("half a million dollars", 500_000, "USD")]),
        ("a quarter of a million pounds was stolen",
         [("a quarter of a million pounds", 250_000, "GBP")]),
        ("two and a half million dollars", [("two and a half million dollars", 2_500_000, "USD")]),
        ("the settlement totals one point two billion dollars",
         [("one point two billion dollars", 1_200_000_000, "USD")]),
        ("a 500-dollar fine", [("500-dollar", 500, "USD")]),
        # a number word the digits stand between is no part of the number ("to" is 2 in Danish)
        ("exports rose to 8 billion lira", [("8 billion lira", 8_000_000_000, "TRY")]),
        # the verb "won", the article "a", a bill and a weight are no currency or scale
        ("he won 50,000 danish kroner", [("50,000 danish kroner", 50000, "DKK")]),
        ("a $ 1.5 billion bond", [("$ 1.5 billion", 1_500_000_000, "USD")]),
        # finance's million in capitals, glued or apart; millimetres are no scale
        ("a US$ 5 MM loan, fees of USD 2MM", [("US$ 5 MM", 5_000_000, "USD"),
                                              ("USD 2MM", 2_000_000, "USD")]),
        ("a 5 mm screw costs $3", [("$3", 3, "USD")]),
        # an amount in words with an elided marker, and a whole and a half
        ("un million et demi d'euros, anderthalb Millionen Euro",
         [("un million et demi d'euros", 1_500_000, "EUR"),
          ("anderthalb Millionen Euro", 1_500_000, "EUR")]),
        # a count before the next amount's marker is no qualifier of it (read 5.03, 12.80)
        ("5 apples cost $3", [("$3", 3, "USD")]),
        ("Order 12 items for $40; room 12 costs $ 80 per night",
         [("$40", 40, "USD"), ("$ 80", 80, "USD")]),
        # words that name the currency whatever the locale still qualify it
        ("20 American dollars and 5 hong kong dollars", [("20 American dollars", 20, "USD"),
                                                         ("5 hong kong dollars", 5, "HKD")]),
        ("the $ 20 bill", [("$ 20", 20, "USD")]),
        ("5 pounds of flour cost 3 pounds", [("3 pounds", 3, "GBP")]),
        # generic names with their country, and Swedish's plural
        ("4 billion swedish crowns and 300 kenyan shillings",
         [("4 billion swedish crowns", 4_000_000_000, "SEK"),
          ("300 kenyan shillings", 300, "KES")]),
        ("the apartment costs 2.3 million kronor", [("2.3 million kronor", 2_300_000, "SEK")]),
        ("150 dirhams or 20 riyals", [("150 dirhams", 150, "AED"), ("20 riyals", 20, "SAR")]),
        # Latin American names, and a half before a scale word in other languages
        ("150 soles, 500 quetzales y 2 mil colones",
         [("150 soles", 150, "PEN"), ("500 quetzales", 500, "GTQ"),
          ("2 mil colones", 2000, "CRC")]),
        ("el premio es de medio millón de euros",
         [("medio millón de euros", 500_000, "EUR")]),
        ("eine halbe Million Euro", [("halbe Million Euro", 500_000, "EUR")]),
        # a plural scale word alone says "many", not a number
        ("repairs cost hundreds of dollars", []),
        # a number word before a marker that digits follow is no amount (Italian "due" is 2)
        ("Invoice 2291: total due EUR 1,250.00 by 3 May 2024.",
         [("EUR 1,250.00", 1250, "EUR")]),
        ("Millionen Euro flossen ab, davon 3 Millionen Euro an",
         [("3 Millionen Euro", 3_000_000, "EUR")]),
        # shop prices (price-parser's labelled strings): a marker written against the digits
        ("RM50, Rs1,599.00, R273.00, 469.00zł, EUR29.66 and 3 100р.",
         [("RM50", 50, "MYR"), ("Rs1,599.00", 1599, "INR"), ("R273.00", 273, "ZAR"),
          ("469.00zł", 469, "PLN"), ("EUR29.66", 29.66, "EUR"), ("3 100р", 3100, "RUB")]),
        # ... but not a letter that is a code or a unit, nor a Turkish case ending
        ("A4 paper, a 3D print, 5G, 12V, 24703L202; 15 Haziran 2016'da, 17'den", []),
        # a price per unit, a footnote, no minor units, a colon, the currency twice
        ("Price: $15.95/mo, $426.20/EA, $575.00*",
         [("$15.95/mo", 15.95, "USD"), ("$426.20/EA", 426.2, "USD"), ("$575.00*", 575, "USD")]),
        ("50,- Kč or US$:12.99", [("50,- Kč", 50, "CZK"), ("US$:12.99", 12.99, "USD")]),
        ("£94.50 GBP, $1,190.00 AUD, SGD4.90 $",
         [("£94.50 GBP", 94.5, "GBP"), ("$1,190.00 AUD", 1190, "AUD"),
          ("SGD4.90 $", 4.9, "SGD")]),
        # digits before a marker of several kana are the next amount, not cents (was 4.05 CNY)
        ("4人民元\u30005ドル", [("4人民元", 4, "CNY"), ("5ドル", 5, "USD")]),
        ("5ドル50セント", [("5ドル50セント", 5.5, "USD")]),
        ("bir buçuk milyon lira", [("bir buçuk milyon lira", 1_500_000, "TRY")]),
        # a number between a marker and a minor unit's word is the cents of an amount before the
        # marker (in words this reader does not know here), not 23 kuna or dollars
        ("dvije kune 23 lipe", []),
        ("to new zealand dollars 23 cents", []),
        # ... but a short word apart after it is no minor unit ("p." is per, not pence)
        ("USD 5 ct, $20 and 43c", [("USD 5", 5, "USD"), ("$20 and 43c", 20.43, "USD")]),
        # a minor unit's word after a currency's name: the amount counts it (was 10 EUR)
        ("a stamp for 10 euro cents", [("10 euro cents", 0.1, "EUR")]),
        ("It costs 5 GBP p. person", [("5 GBP", 5, "GBP")]),
        # a name after words for its country that CLDR does not write with it (were nothing)
        ("7 Brazilian reais and 42 malaysia ringgits today",
         [("7 Brazilian reais", 7, "BRL"), ("42 malaysia ringgits", 42, "MYR")]),
        ("5 apples reais", []),
        # an English plural CLDR does not list (was nothing); a common word's is none
        ("ten tugriks, 150 South African rands", [("ten tugriks", 10, "MNT"),
                                                  ("150 South African rands", 150, "ZAR")]),
        ("150 rands of the fence", []),
        # Chinese tenths and hundredths as people say prices (were 0.05, nothing, 2.3)
        ("三毛五分钱，三角五分，两块三毛五",
         [("三毛五分钱", 0.35, "CNY"), ("三角五分", 0.35, "CNY"), ("两块三毛五", 2.35, "CNY")]),
        ("三角五", []),  # a triangle's five, perhaps: 角 counts 分 only written
        ("100元港币", [("100元港币", 100, "HKD")]),  # 元 counts the currency after it (was CNY)
    ],
)  # fmt: skip
def test_find_money_reads_each_amount_with_its_marker(
    text: str, expected: list[tuple[str, float, str]]
) -> None:
    found = values.find_money(text)
    assert [(m.text, m.amount, m.currency) for m in found] == expected
    for money in found:
        assert text[money.start : money.end] == money.text


def test_find_money_spares_read_money_the_windows_no_amount_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Around each number of running text, windows that start or end with a plain word no
    amount starts or ends with are not read: 20 invoice lines took 2,776 readings before."""
    from aau.values import money

    readings: list[str] = []
    real = money.read_money
    monkeypatch.setattr(
        money, "read_money", lambda text, **kw: readings.append(text) or real(text, **kw)
    )
    text = " ".join(["Invoice 2291: total due EUR 1,250.00 by 3 May 2024."] * 20)

    found = values.find_money(text)

    assert [(m.text, m.amount) for m in found] == [("EUR 1,250.00", 1250)] * 20
    assert len(readings) <= 1_200


@pytest.mark.parametrize("text", ["", " ", "\x00" * 50, "5" * 5000, "$" * 5000, "€ 5 " * 3000])
def test_find_money_is_bounded_on_odd_input(text: str) -> None:
    assert isinstance(value_within(5, lambda: values.find_money(text)), list)


def test_a_code_as_written_wins_and_bidi_marks_are_ignored() -> None:
    assert read_currency("ILS") == "ILS"
    assert read_currency("ج.م.") == read_currency("ج.م.\u200f") == "EGP"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # minor units that only one currency has name it, alone (Duckling's corpora: "אגורה")
        ("beş kuruş", [("beş kuruş", 0.05, "TRY")]),
        ("costs 30 pence", [("30 pence", 0.3, "GBP")]),
        ("50 पैसे और 100 אגורות", [("50 पैसे", 0.5, "INR"), ("100 אגורות", 1, "ILS")]),
        # each word of one currency is a minor unit too (these raised KeyError)
        ("5 पैसा, 20 haléře", [("5 पैसा", 0.05, "INR"), ("20 haléře", 0.2, "CZK")]),
        ("他给了我五毛钱，3角", [("五毛钱", 0.5, "CNY"), ("3角", 0.3, "CNY")]),
        # cents name no currency; a minor part after a joiner belongs to an unread whole
        ("twenty cents, to thai baht og 23 satang", []),
        # ideographs that are no money: a pentagram, the Pearl River Delta, a triangle
        ("五角星 珠三角 三角形", []),
        # with its whole amount the minor part is that amount's
        ("yüz lira yetmiş beş kuruş", [("yüz lira yetmiş beş kuruş", 100.75, "TRY")]),
    ],
)
def test_find_money_reads_minor_units_of_one_currency_alone(
    text: str, expected: list[tuple[str, float, str]]
) -> None:
    assert [(m.text, m.amount, m.currency) for m in values.find_money(text)] == expected


def test_every_minor_unit_of_one_currency_is_a_minor_unit() -> None:
    from aau.values import money

    assert set(money._MINOR_OF_ONE) <= set(money._MINOR)  # noqa: SLF001
