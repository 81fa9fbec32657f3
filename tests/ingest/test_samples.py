"""The synthetic scans: seeded, so the shipped example can be regenerated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from aau.ingest.samples import add_scan_noise, main, render_invoice_scan, render_page


def test_the_shipped_invoice_scan_is_what_the_script_makes(invoice_scan: Path) -> None:
    shipped = np.asarray(Image.open(invoice_scan).convert("L"))
    made = np.asarray(render_invoice_scan().convert("L"))
    assert shipped.shape == made.shape
    # Font rasterisation may shift a few edge pixels between FreeType builds; no more.
    assert np.mean(shipped != made) < 0.01


def test_noise_is_seeded_and_grows_with_the_level() -> None:
    page = render_page(["Some words"], size=(600, 200), margin=20)
    same = add_scan_noise(page, level=0.5, seed=3), add_scan_noise(page, level=0.5, seed=3)
    assert same[0].tobytes() == same[1].tobytes()
    clean = np.asarray(page, dtype=float)
    errors = [
        np.abs(np.asarray(add_scan_noise(page, level=level, seed=3), dtype=float) - clean).mean()
        for level in (0.0, 0.25, 0.5, 1.0)
    ]
    assert errors[0] == 0.0
    assert errors == sorted(errors)
    assert errors[-1] > 20
    with pytest.raises(ValueError, match="noise level must be in"):
        add_scan_noise(page, level=1.5)


def test_the_script_writes_a_300_dpi_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "scan.png"
    main([str(out), "--level", "0.1", "--seed", "5"])
    with Image.open(out) as image:
        assert image.size == (2480, 1600)
        assert image.info["dpi"] == pytest.approx((300, 300), abs=0.1)
    assert "wrote" in capsys.readouterr().out
