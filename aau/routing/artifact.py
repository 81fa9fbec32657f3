"""The fitted router on disk: one JSON file, never a pickle.

It holds the per-unit references the features compare with (embeddings as base64 float16
rows, with their texts for the explanations; keywords; learned words; term and value profiles;
each unit's heads over embeddings and character n-grams, float16 rows likewise), the two
linear models (with and without term features: weights, scaler, threshold) and the digest of
the unit data they were fitted on. Reading it checks every shape and bound, so a corrupt or
hostile file is a coded error, not a crash deep inside numpy.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from aau.errors import CalibrationError
from aau.files import write_replacing
from aau.routing.features import FEATURES, LEXICAL_DIM, UnitReference

__all__ = [
    "ARTIFACT_FORMAT",
    "LinearModel",
    "MAX_ARTIFACT_BYTES",
    "RouterArtifactError",
    "RouterStale",
    "decode_vectors",
    "encode_vectors",
    "read_artifact",
    "reference_from_json",
    "reference_to_json",
    "write_artifact",
]

ARTIFACT_FORMAT = "aau-router/1"
MAX_ARTIFACT_BYTES = 64 * 2**20
MAX_UNITS = 512
MAX_REFERENCES = 4096
"""References of one kind for one unit."""


class RouterArtifactError(CalibrationError):
    """The router artifact is missing, corrupt or not a router (``router_artifact``)."""

    code = "router_artifact"


class RouterStale(RouterArtifactError):
    """The router was fitted on other units' data than the ones routed (``router_stale``)."""

    code = "router_stale"


def encode_vectors(matrix: np.ndarray) -> dict[str, Any]:
    """Rows as little-endian float16, base64: a quarter of JSON numbers' size, exact enough."""
    data = np.ascontiguousarray(matrix, dtype="<f2").tobytes()
    return {"shape": list(matrix.shape), "f16": base64.b64encode(data).decode("ascii")}


def decode_vectors(value: Any, dim: int, where: str) -> np.ndarray:
    """The matrix ``encode_vectors`` wrote, checked: ``(n, dim)``, bounded, finite."""
    try:
        rows, cols = (int(v) for v in value["shape"])
        data = base64.b64decode(value["f16"], validate=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise RouterArtifactError(f"{where}: not an encoded matrix ({exc})") from None
    if cols != dim or not 0 <= rows <= MAX_REFERENCES or len(data) != rows * cols * 2:
        raise RouterArtifactError(f"{where}: shape {rows}x{cols} does not fit the data")
    matrix = np.frombuffer(data, dtype="<f2").astype(np.float32).reshape(rows, cols)
    if not np.isfinite(matrix).all():
        raise RouterArtifactError(f"{where}: holds a value that is not finite")
    return matrix


class LinearModel:
    """A logistic regression over standardized features, rebuilt from its JSON.

    Attributes:
        features: the names of the features it reads, in order (a subset of ``FEATURES``).
        mean, scale: the standardization.
        coef, intercept: the weights.
        threshold: the probability from which a unit applies.
    """

    def __init__(
        self, features: list[str], mean: np.ndarray, scale: np.ndarray, coef: np.ndarray,
        intercept: float, threshold: float,
    ) -> None:  # fmt: skip
        self.features, self.mean, self.scale = features, mean, scale
        self.coef, self.intercept, self.threshold = coef, intercept, threshold
        self.columns = [FEATURES.index(f) for f in features]

    def standardized(self, x: np.ndarray) -> np.ndarray:
        """Rows of full ``FEATURES`` vectors as this model's standardized inputs."""
        return (x[:, self.columns] - self.mean) / self.scale

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """P(applies) of each row of full ``FEATURES`` vectors."""
        z = self.standardized(x) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "features": self.features,
            "mean": [round(float(v), 8) for v in self.mean],
            "scale": [round(float(v), 8) for v in self.scale],
            "coef": [round(float(v), 8) for v in self.coef],
            "intercept": round(self.intercept, 8),
            "threshold": round(self.threshold, 6),
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> LinearModel:
        """Read and check the JSON form."""
        try:
            features = [str(f) for f in value["features"]]
            arrays = [np.array(value[k], dtype=float) for k in ("mean", "scale", "coef")]
            intercept, threshold = float(value["intercept"]), float(value["threshold"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RouterArtifactError(f"{where}: not a linear model ({exc})") from None
        unknown = [f for f in features if f not in FEATURES]
        if unknown or not features:
            raise RouterArtifactError(f"{where}: unknown features {unknown}")
        finite = all(np.isfinite(a).all() for a in arrays) and math.isfinite(intercept)
        if any(a.shape != (len(features),) for a in arrays) or not finite:
            raise RouterArtifactError(f"{where}: weights do not match its {len(features)} features")
        if not 0.0 < threshold < 1.0 or (arrays[1] <= 0).any():
            raise RouterArtifactError(f"{where}: threshold or scale out of range")
        return cls(features, arrays[0], arrays[1], arrays[2], intercept, threshold)


def reference_to_json(ref: UnitReference) -> dict[str, Any]:
    """One unit's references as JSON."""
    return {
        "name": ref.name,
        "description": ref.description_text,
        "description_vector": encode_vectors(ref.description[None, :]),
        "examples": {"texts": ref.example_texts, "vectors": encode_vectors(ref.examples)},
        "negatives": {"texts": ref.negative_texts, "vectors": encode_vectors(ref.negatives)},
        "requests": {"texts": ref.request_texts, "vectors": encode_vectors(ref.requests)},
        "keywords": ref.keywords,
        "learned_words": ref.learned,
        "term_profile": ref.profile,
        "needs": ref.needs,
        "value_profile": ref.values,
        "head": None if ref.head is None else encode_vectors(ref.head[None, :]),
        "lexical": None if ref.lexical is None else encode_vectors(ref.lexical[None, :]),
    }


def _texts_and_vectors(value: Any, dim: int, where: str) -> tuple[list[str], np.ndarray]:
    texts = value.get("texts") if isinstance(value, dict) else None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise RouterArtifactError(f"{where}: texts must be a list of strings")
    vectors = decode_vectors(value.get("vectors"), dim, where)
    if len(texts) != vectors.shape[0]:
        raise RouterArtifactError(f"{where}: {len(texts)} texts for {vectors.shape[0]} vectors")
    return texts, vectors


def _str_floats(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, dict) or len(value) > 100_000:
        raise RouterArtifactError(f"{where}: must be a mapping of words to numbers")
    out = {str(k): float(v) for k, v in value.items() if isinstance(v, int | float)}
    if len(out) != len(value) or not all(math.isfinite(v) for v in out.values()):
        raise RouterArtifactError(f"{where}: must be a mapping of words to finite numbers")
    return out


def reference_from_json(value: Any, dim: int, where: str) -> UnitReference:
    """One unit's references, read and checked."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise RouterArtifactError(f"{where}: a unit entry must be a mapping with a name")
    where = f"{where} ({value['name']})"
    keywords = value.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise RouterArtifactError(f"{where}: keywords must be a list of strings")
    needs = value.get("needs", [])
    if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
        raise RouterArtifactError(f"{where}: needs must be a list of unit names")
    examples = _texts_and_vectors(value.get("examples"), dim, f"{where}: examples")
    negatives = _texts_and_vectors(value.get("negatives"), dim, f"{where}: negatives")
    requests = _texts_and_vectors(value.get("requests"), dim, f"{where}: requests")
    description = decode_vectors(value.get("description_vector"), dim, f"{where}: description")
    if description.shape[0] != 1:
        raise RouterArtifactError(f"{where}: one description vector expected")
    return UnitReference(
        name=value["name"], description=description[0],
        description_text=str(value.get("description", "")),
        examples=examples[1], example_texts=examples[0],
        negatives=negatives[1], negative_texts=negatives[0],
        requests=requests[1], request_texts=requests[0],
        keywords=keywords, learned=_str_floats(value.get("learned_words", {}), where),
        profile=_str_floats(value.get("term_profile", {}), where), needs=needs,
        values=_str_floats(value.get("value_profile", {}), where),
        head=_head(value.get("head"), dim, f"{where}: head"),
        lexical=_head(value.get("lexical"), LEXICAL_DIM, f"{where}: lexical"),
    )  # fmt: skip


def _head(value: Any, dim: int, where: str) -> np.ndarray | None:
    """A unit's head (``dim`` weights, then the bias), checked; None where none was stored."""
    if value is None:
        return None
    head = decode_vectors(value, dim + 1, where)
    if head.shape[0] != 1:
        raise RouterArtifactError(f"{where}: one head row expected")
    return head[0]


def write_artifact(path: Path, body: dict[str, Any]) -> None:
    """Write the artifact whole (a temporary file, then a rename), in UTF-8 as it is read."""
    write_replacing(
        path, json.dumps({"format": ARTIFACT_FORMAT, **body}, ensure_ascii=False, indent=1)
    )


def read_artifact(path: Path) -> dict[str, Any]:
    """The artifact's JSON, bounded; missing, oversized or not a router: a coded error."""
    if not path.is_file():
        error = RouterArtifactError(f"no fitted router at {path}")
        error.add_note("fit one: aau route UNITS... --fit")
        raise error
    if path.stat().st_size > MAX_ARTIFACT_BYTES:
        raise RouterArtifactError(
            f"{path}: over the router artifact limit of {MAX_ARTIFACT_BYTES:,} bytes"
        )
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RouterArtifactError(f"{path}: not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != ARTIFACT_FORMAT:
        raise RouterArtifactError(f"{path}: not a router artifact (format {ARTIFACT_FORMAT})")
    units = body.get("units")
    if not isinstance(units, list) or not 0 < len(units) <= MAX_UNITS:
        raise RouterArtifactError(f"{path}: units must be a list of 1 to {MAX_UNITS} entries")
    return body
