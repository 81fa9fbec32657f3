"""The fitted calibrator at run time: load its artifact, turn a path's signals into P(correct).

A calibrator is a small MLP (three linear layers) over the vector ``FEATURE_SPEC`` makes of a
``PathObservation``, followed by a fitted logistic rescaling of its output (Platt scaling on data
the network was not fitted on). It may hold several such members, fitted from different seeds,
and then answers with the mean of their probabilities: one small network's calibration varies
with its seed more than the mean of a few does. Its artifact, written by ``aau calibrate``
(``aau.fitting.calibrate``), holds the weights, the training statistics used to standardise and
impute signals, the feature spec it was fitted with and a version. ``load_calibrator`` refuses an
artifact fitted for another feature spec: its inputs would mean something else.

A calibrator is fitted per engine kind: the in-process engine's (``calibrator.pt``) reads raw
log-probabilities, a server's (``calibrator-<engine>.pt`` beside it, ``aau calibrate --engine``)
reads those taken after the constraint mask. ``metadata["engine"]`` records which.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aau.calibration.base import PathEvidence
from aau.calibration.features import (
    FEATURE_SPEC,
    FeatureSpec,
    PathObservation,
    SentenceEmbedder,
    observe,
)
from aau.errors import CalibrationError
from aau.files import replacing

__all__ = [
    "ARTIFACT_FORMAT",
    "IN_PROCESS_ENGINE",
    "MlpCalibrator",
    "Member",
    "artifact_name",
    "default_artifact_path",
    "engine_artifact_path",
    "encode",
    "load_calibrator",
    "network",
]

ARTIFACT_FORMAT = 2
_ARTIFACT_NAME = "calibrator.pt"
IN_PROCESS_ENGINE = "transformers"
"""The engine the default artifact (``calibrator.pt``) is fitted with."""
_ENGINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def default_artifact_path() -> Path:
    """Where the shipped calibrator is.

    Inside the package when a wheel carries it, else the source checkout's ``calibration/``.
    """
    packaged = Path(__file__).resolve().parent / _ARTIFACT_NAME
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "calibration" / _ARTIFACT_NAME


def artifact_name(engine: str = IN_PROCESS_ENGINE) -> str:
    """The file name of the calibrator fitted with ``engine`` (a registered engine's name).

    ``calibrator.pt`` for the in-process engine, ``calibrator-<engine>.pt`` for any other.

    Raises:
        CalibrationError: ``engine`` is not a name a file can carry.
    """
    if engine == IN_PROCESS_ENGINE:
        return _ARTIFACT_NAME
    if not _ENGINE_NAME.fullmatch(engine):
        raise CalibrationError(f"engine name {engine!r} cannot name a calibrator artifact")
    return f"calibrator-{engine}.pt"


def engine_artifact_path(engine: str) -> Path:
    """Where the calibrator fitted with ``engine`` is: ``artifact_name`` beside the default one."""
    return default_artifact_path().with_name(artifact_name(engine))


def network(width: int, hidden: Sequence[int], dropout: float = 0.0) -> torch.nn.Sequential:
    """The calibrator's MLP: ``width`` inputs, the ``hidden`` layers, one logit out."""
    layers: list[torch.nn.Module] = []
    size = width
    for units in hidden:
        layers += [torch.nn.Linear(size, units), torch.nn.ReLU(), torch.nn.Dropout(dropout)]
        size = units
    layers.append(torch.nn.Linear(size, 1))
    return torch.nn.Sequential(*layers)


_Layers = list[tuple[np.ndarray, np.ndarray]]


def _numpy_layers(model: torch.nn.Module) -> _Layers | None:
    """The weights of an MLP built by ``network`` (linear layers, ReLU between), as arrays.

    One answer's score through torch costs about 0.4 ms of dispatch for a few thousand
    multiply-adds; the same layers in numpy take microseconds. Taken when the calibrator is
    built: a fitted calibrator's networks do not change. None for any other module, which is
    then run by torch.
    """
    if not isinstance(model, torch.nn.Sequential):
        return None
    layers: _Layers = []
    for index, module in enumerate(model):
        if isinstance(module, torch.nn.Linear) and module.bias is not None and index % 3 == 0:
            weight = module.weight.detach().cpu().numpy().astype(np.float32).T.copy()
            layers.append((weight, module.bias.detach().cpu().numpy().astype(np.float32)))
        elif isinstance(module, torch.nn.ReLU) and index % 3 == 1:
            continue
        elif isinstance(module, torch.nn.Dropout) and index % 3 == 2:
            continue  # inactive in eval mode
        else:
            return None
    return layers if layers and len(model) == 3 * len(layers) - 2 else None


def _forward(layers: _Layers, batch: np.ndarray) -> np.ndarray:
    """The MLP's logits for ``batch`` (rows of inputs): linear, ReLU, ..., linear."""
    for index, (weight, bias) in enumerate(layers):
        batch = batch @ weight + bias
        if index + 1 < len(layers):
            np.maximum(batch, 0.0, out=batch)
    return batch[:, 0]


@dataclass(frozen=True, slots=True)
class Member:
    """One fitted network of a calibrator and the Platt rescaling of its logit.

    Attributes:
        model: the MLP (its output is a logit).
        scale: slope applied to the logit.
        shift: intercept added after it.
    """

    model: torch.nn.Module
    scale: float = 1.0
    shift: float = 0.0


def encode(
    observation: PathObservation,
    spec: FeatureSpec,
    mean: Sequence[float],
    std: Sequence[float],
) -> list[float]:
    """The network's input for ``observation``.

    One-hot path and outcome, then per signal its standardised value (0, the training mean,
    where missing) and its missing indicator.
    """
    values, present = spec.raw_vector(observation)
    columns = spec.one_hot(observation)
    for value, ok, m, sd in zip(values, present, mean, std, strict=True):
        # A constant feature in training has no spread; dividing by 1 keeps it at 0.
        columns += [(value - m) / (sd if sd > 1e-9 else 1.0) if ok else 0.0, 0.0 if ok else 1.0]
    return columns


class MlpCalibrator:
    """A fitted calibrator: signals in, P(correct) out.

    Args:
        members: the fitted networks (a single ``Member`` or MLP is one member).
        spec: the feature spec it was fitted with.
        mean: per numeric feature, the training mean (the value a missing signal takes).
        std: per numeric feature, the training standard deviation.
        version: the artifact's version.
        metadata: what the training recorded (data fingerprint, figures…).
        embedder: sentence embeddings for the coherence signals of ``confidence``.
    """

    def __init__(
        self,
        members: Sequence[Member] | Member | torch.nn.Module,
        spec: FeatureSpec,
        mean: Sequence[float],
        std: Sequence[float],
        *,
        version: str = "0",
        metadata: Mapping[str, Any] | None = None,
        embedder: SentenceEmbedder | None = None,
    ) -> None:
        if len(mean) != len(spec.features) or len(std) != len(spec.features):
            raise CalibrationError(
                f"the calibrator has {len(mean)} feature statistics; its spec has "
                f"{len(spec.features)} features"
            )
        if isinstance(members, torch.nn.Module):
            members = [Member(members)]
        elif isinstance(members, Member):
            members = [members]
        if not members:
            raise CalibrationError("a calibrator needs at least one fitted network")
        for member in members:
            member.model.eval()
        self.members = list(members)
        self._layers = [_numpy_layers(member.model) for member in self.members]
        self.spec = spec
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]
        self.version = str(version)
        self.metadata = dict(metadata or {})
        self.embedder = embedder

    # -- scoring -----------------------------------------------------------------------------

    def vector(self, observation: PathObservation) -> list[float]:
        """The network's input for ``observation`` (see ``encode``)."""
        return encode(observation, self.spec, self.mean, self.std)

    def score_many(self, observations: Sequence[PathObservation]) -> list[float]:
        """P(correct) of each observation: the mean of the members' rescaled probabilities."""
        if not observations:
            return []
        vectors = [self.vector(o) for o in observations]
        totals = [0.0] * len(observations)
        for member, layers in zip(self.members, self._layers, strict=True):
            if layers is not None:
                logits = _forward(layers, np.asarray(vectors, dtype=np.float32)).tolist()
            else:
                with torch.inference_mode():
                    batch = torch.tensor(vectors, dtype=torch.float32)
                    logits = member.model(batch).squeeze(-1).tolist()
            for i, logit in enumerate(logits):
                totals[i] += _sigmoid(member.scale * logit + member.shift)
        return [total / len(self.members) for total in totals]

    def score(self, observation: PathObservation) -> float:
        """P(correct) of one observation."""
        return self.score_many([observation])[0]

    def confidence(self, evidence: PathEvidence) -> float:
        """Calibrated confidence of one path's answer (signals by ``features.observe``).

        Coherence uses this calibrator's embedder; without one those signals are missing.
        """
        return self.score(observe(evidence, self.embedder))

    @property
    def logprobs_after_mask(self) -> bool:
        """The kind of log-probabilities it was fitted on (``metadata["engine"]``).

        ``aau calibrate`` records it (the engine's ``EngineCapabilities.logprobs_after_mask``);
        artifacts from before it did are of the raw kind.
        """
        engine = self.metadata.get("engine")
        return bool(engine.get("logprobs_after_mask")) if isinstance(engine, dict) else False

    @property
    def embed_ms(self) -> float:
        """Milliseconds this calibrator's embedder has spent in forward passes."""
        return self.embedder.forward_ms if self.embedder is not None else 0.0

    # -- the artifact ------------------------------------------------------------------------

    def save(self, path: str | Path, *, hidden: Sequence[int]) -> None:
        """Write the artifact (weights, statistics, feature spec, version)."""
        state = {
            "format": ARTIFACT_FORMAT,
            "version": self.version,
            "feature_spec": self.spec.to_dict(),
            "feature_digest": self.spec.digest,
            "hidden": list(hidden),
            "members": [
                {
                    "weights": {k: v.detach().clone() for k, v in m.model.state_dict().items()},
                    "scale": float(m.scale),
                    "shift": float(m.shift),
                }
                for m in self.members
            ],
            "mean": self.mean,
            "std": self.std,
            "metadata": self.metadata,
        }
        with replacing(Path(path)) as written:  # a reader never sees half an artifact
            torch.save(state, written)


def load_calibrator(
    path: str | Path | None = None,
    *,
    spec: FeatureSpec = FEATURE_SPEC,
    embedder: SentenceEmbedder | None = None,
) -> MlpCalibrator:
    """Read a calibrator artifact and check it was fitted for ``spec``.

    Args:
        path: the artifact; default ``default_artifact_path()``.
        spec: the feature spec the caller builds observations with.
        embedder: sentence embeddings for coherence signals; None builds the default one
            (which reports them missing when the model is not installed).

    Raises:
        CalibrationError: the file is missing or unreadable, or was fitted for another spec.
    """
    where = Path(path) if path is not None else default_artifact_path()
    retrain = "run `aau calibrate` to fit one"
    if not where.is_file():
        raise CalibrationError(f"calibrator artifact {where} not found; {retrain}")
    try:
        # weights_only: an artifact is data (tensors, numbers, strings), never code to run.
        state = torch.load(where, map_location="cpu", weights_only=True)
        stored = FeatureSpec.from_dict(state["feature_spec"])
        fmt = state["format"]
    except Exception as exc:  # any failure to read means the same thing to the caller
        raise CalibrationError(
            f"calibrator artifact {where} is unreadable ({exc}); {retrain}"
        ) from None
    if fmt != ARTIFACT_FORMAT:
        raise CalibrationError(
            f"calibrator artifact {where} has format {fmt}, this AAU reads format "
            f"{ARTIFACT_FORMAT}; {retrain}"
        )
    if stored.digest != spec.digest or state.get("feature_digest") != spec.digest:
        raise CalibrationError(
            f"calibrator artifact {where} was fitted for another feature spec "
            f"(v{stored.version}, digest {stored.digest[:12]}); this AAU reads v{spec.version} "
            f"(digest {spec.digest[:12]}): {_spec_difference(stored, spec)}; {retrain}"
        )
    try:
        members = []
        for stored_member in state["members"]:
            model = network(spec.width, state["hidden"])
            model.load_state_dict(stored_member["weights"])
            members.append(Member(model, stored_member["scale"], stored_member["shift"]))
        return MlpCalibrator(
            members, spec, state["mean"], state["std"], version=state["version"],
            metadata=state["metadata"],
            embedder=embedder if embedder is not None else SentenceEmbedder(),
        )  # fmt: skip
    except (KeyError, RuntimeError, TypeError, ValueError) as exc:
        raise CalibrationError(
            f"calibrator artifact {where} is corrupt ({exc}); {retrain}"
        ) from None


def _spec_difference(stored: FeatureSpec, current: FeatureSpec) -> str:
    old = {f.name: f.transform for f in stored.features}
    new = {f.name: f.transform for f in current.features}
    parts = []
    if added := [n for n in new if n not in old]:
        parts.append(f"features added: {', '.join(added)}")
    if removed := [n for n in old if n not in new]:
        parts.append(f"features removed: {', '.join(removed)}")
    if changed := [n for n in new if n in old and old[n] != new[n]]:
        parts.append(f"transforms changed: {', '.join(changed)}")
    if stored.paths != current.paths or stored.outcomes != current.outcomes:
        parts.append("paths or validator outcomes changed")
    if not parts and [f.name for f in stored.features] != [f.name for f in current.features]:
        parts.append("features reordered")
    return "; ".join(parts) or f"spec version {stored.version} -> {current.version}"


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
