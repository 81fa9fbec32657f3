"""Writes the example documents that need generating: ``contract.pdf``, ``financial_report.png``
and ``claim_thread.txt`` in ``examples/docs/``.

Run ``python examples/make_docs.py`` from the repository root. The output is deterministic (a
fixed creation date in the PDF, no randomness), so re-running it changes no file.

- ``contract.pdf``: a two-page supply contract with a real text layer (fpdf2, DejaVu Sans so
  that "€" and accents are text, not images): parties, payment terms ("net 30"), a notice
  period and two penalty clauses, one of them in a small table.
- ``financial_report.png``: a quarterly report page rendered as an image (Pillow, DejaVu Sans)
  with a revenue table for the current and the previous quarter; it is read through tesseract
  OCR, as a scan would be.
- ``claim_thread.txt``: an insurance claim e-mail thread (four messages) in which the customer
  complains about the deductible taken off the payment.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

DOCS = Path(__file__).resolve().parent / "docs"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
CREATED = dt.datetime(2024, 9, 2, 9, 0, tzinfo=dt.UTC)

CONTRACT_CLAUSES = [
    (
        "1. Subject",
        "The Supplier shall deliver 2,400 industrial LED panels (type NL-60, 40 W) "
        "to the Buyer's warehouse in Hamburg in four monthly lots of 600 panels each, starting on "
        "1 October 2024, in accordance with the specification in Annex 1.",
    ),
    (
        "2. Prices",
        "The price is EUR 86.50 per panel, EUR 207,600.00 in total, excluding VAT, "
        "delivered DAP Hamburg (Incoterms 2020).",
    ),
    (
        "3. Payment terms",
        "Each lot is invoiced on delivery. Payment terms: net 30 days from the "
        "invoice date. For payment within 10 days the Buyer may deduct a 2% cash discount.",
    ),
    (
        "4. Delivery delay",
        "If a lot is delivered late, the Supplier shall pay a contractual "
        "penalty of EUR 1,500 for each calendar day of delay, capped at 10% of the price of the "
        "lot concerned.",
    ),
    (
        "5. Quality defects",
        "The penalties for defective lots are set out in the table below; "
        "they are due in addition to the Buyer's statutory warranty rights.",
    ),
]
PENALTY_TABLE = [
    ("Trigger", "Penalty", "Currency"),
    ("Defect rate above 2% in a lot", "5,000", "EUR"),
    ("Missing test certificate", "750", "EUR"),
]
CONTRACT_END = [
    (
        "6. Term and termination",
        "This contract runs until 31 March 2025. Either party may "
        "terminate it for convenience with a notice period of three months to the end of a "
        "calendar month, in writing.",
    ),
    (
        "7. Governing law",
        "This contract is governed by German law. Place of jurisdiction is Hamburg.",
    ),
]


def contract_pdf(path: Path) -> None:
    """A two-page supply contract with a text layer."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(CREATED)
    pdf.set_title("Supply Contract SC-2024-118")
    pdf.add_font("DejaVu", "", str(FONT))
    pdf.add_font("DejaVu", "B", str(BOLD))
    pdf.set_margins(22, 22, 22)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 16)
    pdf.cell(0, 10, "Supply Contract No. SC-2024-118", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", "", 10.5)
    pdf.multi_cell(0, 6, "between\nNordlicht Components GmbH, Industriestraße 12, 20457 Hamburg, "
                   "Germany (the \"Supplier\")\nand\nMeridian Facilities BV, Keizersgracht 88, "
                   "1015 CT Amsterdam, the Netherlands (the \"Buyer\")\n"
                   "dated 2 September 2024.")  # fmt: skip
    pdf.ln(4)

    def clause(title: str, body: str) -> None:
        pdf.set_font("DejaVu", "B", 11)
        pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", "", 10.5)
        pdf.multi_cell(0, 6, body)
        pdf.ln(2)

    for title, body in CONTRACT_CLAUSES:
        clause(title, body)
    pdf.set_font("DejaVu", "", 10)
    with pdf.table(col_widths=(90, 40, 30), text_align=("LEFT", "RIGHT", "LEFT")) as table:
        for cells in PENALTY_TABLE:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    pdf.add_page()
    for title, body in CONTRACT_END:
        clause(title, body)
    pdf.ln(10)
    pdf.multi_cell(0, 6, "Hamburg, 2 September 2024\n\n"
                   "For the Supplier: Jonas Berg, Managing Director\n"
                   "For the Buyer: Sofia Rossi, Head of Procurement")  # fmt: skip
    pdf.output(str(path))


REPORT_LINES = [
    ("title", "Meridian Foods Group – Quarterly Report Q3 2024"),
    ("text", "Third-quarter results (unaudited). All figures in EUR million unless stated."),
    ("gap", ""),
    ("text", "Revenue grew 6.1% against the previous quarter, driven by volume gains in the"),
    ("text", "Benelux and price increases in Germany. EBITDA margin improved to 14.2%."),
    ("gap", ""),
]
REPORT_TABLE = [
    ("in EUR million", "Q3 2024", "Q2 2024"),
    ("Revenue", "412.5", "388.9"),
    ("Cost of sales", "271.8", "259.0"),
    ("Gross profit", "140.7", "129.9"),
    ("EBITDA", "58.6", "52.1"),
    ("Net income", "21.4", "18.7"),
]
REPORT_END = [
    ("gap", ""),
    ("text", "Outlook: for the full year 2024 we expect revenue of EUR 1.55 to 1.60 billion."),
    ("text", "Headcount at 30 September 2024: 3,214 employees."),
]


def report_png(path: Path) -> None:
    """A report page as an image: a heading, two paragraphs and the quarter table."""
    width, height, margin = 1700, 1100, 90
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    text_font = ImageFont.truetype(str(FONT), 30)
    title_font = ImageFont.truetype(str(BOLD), 38)
    y = margin
    for kind, line in REPORT_LINES:
        if kind == "gap":
            y += 24
            continue
        font = title_font if kind == "title" else text_font
        draw.text((margin, y), line, font=font, fill=0)
        y += 58 if kind == "title" else 44
    columns = (margin, margin + 640, margin + 900)
    right_edges = (None, columns[1] + 200, columns[2] + 200)
    for index, cells in enumerate(REPORT_TABLE):
        font = ImageFont.truetype(str(BOLD), 30) if index == 0 else text_font
        for column, cell in enumerate(cells):
            edge = right_edges[column]
            if edge is None:
                x = columns[column]
            else:  # figures right-aligned, as statements print them
                x = edge - int(draw.textlength(cell, font=font))
            draw.text((x, y), cell, font=font, fill=0)
        y += 48
        if index == 0:
            draw.line((margin, y - 6, right_edges[2], y - 6), fill=0, width=2)
    for kind, line in REPORT_END:
        if kind == "gap":
            y += 24
            continue
        draw.text((margin, y), line, font=text_font, fill=0)
        y += 44
    image.save(path, optimize=True)


CLAIM_THREAD = """\
From: Daniel Hofmann <d.hofmann@example.net>
To: claims@helvetia-direct.example
Date: Mon, 7 Oct 2024 08:12:44 +0200
Subject: Water damage claim – policy HH-204-55731

Dear claims team,

on 4 October 2024 a burst pipe flooded our kitchen. The plumber's invoice and the quote for
the new flooring come to EUR 4,860.00 in total; both are attached, with photos.
Please let me know what else you need.

Kind regards,
Daniel Hofmann

-----

From: Claims Service <claims@helvetia-direct.example>
To: Daniel Hofmann <d.hofmann@example.net>
Date: Wed, 9 Oct 2024 14:30:02 +0200
Subject: RE: Water damage claim – policy HH-204-55731 (claim 2024-CL-88412)

Dear Mr Hofmann,

thank you for your report. We have registered it as claim 2024-CL-88412. Your household
policy covers water damage; the deductible under your policy is EUR 500 per claim.
We will review the documents within ten working days.

Yours sincerely,
Claims Service

-----

From: Claims Service <claims@helvetia-direct.example>
To: Daniel Hofmann <d.hofmann@example.net>
Date: Fri, 18 Oct 2024 10:05:19 +0200
Subject: RE: Water damage claim – claim 2024-CL-88412 settled

Dear Mr Hofmann,

we accept the claimed amount of EUR 4,860.00. After the deductible of EUR 500 we will
transfer EUR 4,360.00 to your account within five working days.

Yours sincerely,
Claims Service

-----

From: Daniel Hofmann <d.hofmann@example.net>
To: claims@helvetia-direct.example
Date: Sat, 19 Oct 2024 09:41:57 +0200
Subject: RE: Water damage claim – claim 2024-CL-88412 settled

Hello,

I am very unhappy with how this claim was handled. Nobody told me about a EUR 500 deductible
when I took out the policy, it took almost two weeks to get an answer, and my calls on
15 October were never returned. I want a written explanation of the deduction and I am
considering filing a formal complaint and cancelling the policy.

Daniel Hofmann
"""


def main() -> int:
    """Write the three documents."""
    DOCS.mkdir(parents=True, exist_ok=True)
    contract_pdf(DOCS / "contract.pdf")
    report_png(DOCS / "financial_report.png")
    (DOCS / "claim_thread.txt").write_text(CLAIM_THREAD, encoding="utf-8")
    for name in ("contract.pdf", "financial_report.png", "claim_thread.txt"):
        print(f"wrote {DOCS / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
