"""The shipped constraint backends: ``XGrammarBackend`` (the default) and ``OutlinesCoreBackend``.

Both implement ``aau.decoding.base.ConstraintBackend`` and are declared as entry points of
``aau.constraint_backends`` in ``pyproject.toml``. The default is chosen by measurement
(``benchmarks/RESULTS.md``): xgrammar compiles a unit schema in milliseconds, outlines-core in
tens of milliseconds, and both give the same masks. Each writes which tokens may come next
into a 32-bit bitmask row, the format both share; each also gives outlines' logits processor,
which masks a whole logits tensor per call, for callers that plug into HF ``generate``. The
libraries are imported on first use, so naming a backend costs nothing until it compiles.

Both compile with compact separators and no free whitespace: small models given free
whitespace pretty-print (and sometimes loop on newlines), which costs tokens for nothing.
xgrammar's vocabulary is the tokenizer's decoded tokens with every special token blanked
(xgrammar would otherwise read ``<|im_start|>`` as literal text a JSON string may hold), plus
any ``extra_tokens`` a tenant's merged-term view appends after the model's rows; its compiled
schemas are also kept on disk, keyed by schema, tokenizer and library version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aau.decoding.base import Matcher, schema_key
from aau.files import write_replacing

if TYPE_CHECKING:
    import torch

__all__ = ["OutlinesCoreBackend", "XGrammarBackend"]


class XGrammarBackend:
    """xgrammar's ``GrammarMatcher`` over a compiled grammar, with an on-disk compile cache.

    Args:
        tokenizer: the HF tokenizer the engine decodes with.
        vocab_size: rows of the model's logits (may exceed the tokenizer's vocabulary).
        model: unused (xgrammar reads the tokenizer alone).
        cache_dir: where compiled schemas are kept across processes; None: memory only.
        extra_tokens: strings of tokens appended after the ``vocab_size`` rows.

    Attributes:
        disk_hits: compiles answered from ``cache_dir``.
    """

    name = "xgrammar"

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        *,
        model: Any = None,
        cache_dir: Path | None = None,
        extra_tokens: Sequence[str] = (),
    ) -> None:
        del model
        self.tokenizer, self.vocab_size, self.cache_dir = tokenizer, vocab_size, cache_dir
        self.extra_tokens = tuple(extra_tokens)
        self.disk_hits = 0
        # Built on the first compile: reading the vocabulary takes about a second.
        self._compiler: Any = None
        self._tokenizer_info: Any = None
        self._fingerprint: str | None = None

    @classmethod
    def check_schema(cls, schema: dict[str, Any]) -> None:
        """Build the grammar the decoder would, with no tokenizer.

        Raises:
            ValueError: xgrammar cannot; its message.
        """
        import xgrammar as xgr

        try:
            xgr.Grammar.from_json_schema(
                json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=True
            )
        except Exception as exc:  # xgrammar raises RuntimeError/ValueError variants
            raise ValueError(str(exc)) from exc

    def compile(self, schema: dict[str, Any]) -> Any:
        """The ``xgrammar.CompiledGrammar`` for ``schema``, from ``cache_dir`` when kept there.

        Raises:
            ValueError: xgrammar cannot compile the schema; its message.
        """
        import xgrammar as xgr

        if self._compiler is None:
            self._tokenizer_info = self._kept_tokenizer_info()
            self._compiler = xgr.GrammarCompiler(self._tokenizer_info, cache_enabled=True)
        path = self._disk_path(schema)
        if path is not None and path.is_file():
            try:
                compiled = xgr.CompiledGrammar.deserialize_json(
                    path.read_text(encoding="utf-8"), self._tokenizer_info
                )
                self.disk_hits += 1
                return compiled
            except (OSError, RuntimeError, ValueError):
                path.unlink(missing_ok=True)  # corrupt or from another build: recompile
        try:
            compiled = self._compiler.compile_json_schema(
                json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=True
            )
        except Exception as exc:  # xgrammar raises RuntimeError/ValueError variants
            raise ValueError(str(exc)) from exc
        if path is not None:
            _write_atomically(path, compiled.serialize_json())
        return compiled

    def new_matcher(self, compiled: Any, bitmask: torch.Tensor) -> Matcher:
        """A ``GrammarMatcher``'s fill (into ``bitmask``'s row 0), accept, jump-forward, end.

        ``find_jump_forward_tokens`` leaves out a last token that a longer vocabulary token
        extends (``":`` before a possible ``":"``): the model's next choice may still merge
        it with what follows. Stop and special tokens are never in it.
        """
        import xgrammar as xgr

        matcher = xgr.GrammarMatcher(compiled)
        return Matcher(lambda: matcher.fill_next_token_bitmask(bitmask, 0),
                       matcher.accept_token, matcher.find_jump_forward_tokens,
                       matcher.is_completed)  # fmt: skip

    def new_processor(self, compiled: Any) -> Any:
        """The outlines ``XGrammarLogitsProcessor`` (torch) over ``compiled``."""
        from outlines.backends.xgrammar import XGrammarLogitsProcessor

        return XGrammarLogitsProcessor(compiled, "torch")

    def _kept_tokenizer_info(self) -> Any:
        """The tokenizer info, read from ``cache_dir`` when kept there (0.04 s, not 0.35 s)."""
        import xgrammar as xgr

        path = self._tokenizer_info_path()
        if path is not None and path.is_file():
            try:
                info = xgr.TokenizerInfo.deserialize_json(path.read_text(encoding="utf-8"))
                if info.vocab_size == self.vocab_size + len(self.extra_tokens):
                    return info
            except (OSError, RuntimeError, ValueError):
                pass  # corrupt or from another build: built again and rewritten
        info = self._build_tokenizer_info()
        if path is not None:
            _write_atomically(path, info.serialize_json())
        return info

    def _build_tokenizer_info(self) -> Any:
        import xgrammar as xgr

        base = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.vocab_size)
        specials = self._special_ids()
        decoded = list(base.decoded_vocab)[: self.vocab_size]
        decoded += [b""] * (self.vocab_size - len(decoded))
        for token in specials:
            if token < len(decoded):
                decoded[token] = b""  # an empty token is special to xgrammar: never text
        decoded += [token.encode() for token in self.extra_tokens]
        return xgr.TokenizerInfo(
            decoded,
            vocab_type=xgr.VocabType.RAW,
            vocab_size=self.vocab_size + len(self.extra_tokens),
            stop_token_ids=list(base.stop_token_ids),
        )

    def _special_ids(self) -> set[int]:
        return set(getattr(self.tokenizer, "all_special_ids", ())) | {
            i for i, t in getattr(self.tokenizer, "added_tokens_decoder", {}).items() if t.special
        }

    def _disk_path(self, schema: dict[str, Any]) -> Path | None:
        """Where ``schema``'s compiled grammar is kept (None: no cache folder)."""
        return self._kept(schema_key(schema))

    def _tokenizer_info_path(self) -> Path | None:
        """Where the tokenizer info is kept, by which tokens are special and the stop token."""
        specials = sorted(self._special_ids())
        blanked = hashlib.sha256(f"{specials}|{self.tokenizer.eos_token_id}".encode())
        return self._kept(f"tokenizer-{blanked.hexdigest()[:12]}")

    def _kept(self, name: str) -> Path | None:
        if self.cache_dir is None:
            return None
        if self._fingerprint is None:
            # Every part that changes the compiled grammar is hashed; the format is kept as it
            # is so caches written by earlier releases stay valid.
            vocab = sorted(self.tokenizer.get_vocab().items(), key=lambda kv: kv[1])
            digest = hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode())
            digest.update(f"{self.vocab_size}|xgrammar {version('xgrammar')}|compact".encode())
            digest.update(("\x00".join(self.extra_tokens) + "|specials blanked").encode())
            self._fingerprint = digest.hexdigest()[:16]
        return self.cache_dir / f"{self._fingerprint}-{name}.json"


def _write_atomically(path: Path, text: str) -> None:
    """Write ``path`` whole (a concurrent reader never sees half a file), or not at all."""
    try:
        write_replacing(path, text)
    except OSError:
        pass  # the disk cache only saves time


class OutlinesCoreBackend:
    """outlines-core's ``Guide`` over an ``Index`` built from the schema's regular expression.

    Args:
        tokenizer: the HF tokenizer the engine decodes with.
        vocab_size: rows of the model's logits (the mask's width is the caller's).
        model: the HF model: outlines builds outlines-core's vocabulary through its wrapper.
        cache_dir: unused (an ``Index`` is not serialisable).
        extra_tokens: must be empty: merged term tokens need xgrammar.

    Raises:
        ValueError: no model, or extra tokens.
    """

    name = "outlines_core"

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        *,
        model: Any = None,
        cache_dir: Path | None = None,
        extra_tokens: Sequence[str] = (),
    ) -> None:
        del cache_dir
        if extra_tokens:
            raise ValueError("merged term tokens need the xgrammar constraint backend")
        if model is None:
            raise ValueError("the outlines_core constraint backend needs the model")
        self.tokenizer, self.vocab_size, self.model = tokenizer, vocab_size, model
        self._vocabulary: Any = None  # built on the first compile (seconds)

    @classmethod
    def check_schema(cls, schema: dict[str, Any]) -> None:
        """Build the schema's regular expression and its automaton, with no tokenizer.

        The automaton is built over a vocabulary of the 255 single bytes, which can spell any
        text, so only a schema or pattern outlines-core cannot express fails.

        Raises:
            ValueError: outlines-core cannot; its message.
        """
        from outlines_core import Index, Vocabulary
        from outlines_core.json_schema import build_regex_from_schema

        try:
            regex = build_regex_from_schema(json.dumps(schema), "")
            Index(regex, Vocabulary(0, {bytes([b]): [b] for b in range(1, 256)}))
        except Exception as exc:  # outlines-core raises ValueError, its Rust side others
            raise ValueError(str(exc)) from exc

    def compile(self, schema: dict[str, Any]) -> Any:
        """The ``outlines_core.Index`` of ``schema`` over the tokenizer's vocabulary.

        Raises:
            ValueError: outlines-core cannot compile the schema; its message.
        """
        from outlines_core import Index
        from outlines_core.json_schema import build_regex_from_schema

        if self._vocabulary is None:
            import outlines
            from outlines.backends.outlines_core import OutlinesCoreBackend as Outlines

            wrapped = outlines.from_transformers(self.model, self.tokenizer)
            self._vocabulary = Outlines(wrapped).vocabulary
        try:
            return Index(build_regex_from_schema(json.dumps(schema), ""), self._vocabulary)
        except Exception as exc:  # outlines-core raises ValueError, its Rust side others
            raise ValueError(str(exc)) from exc

    def new_matcher(self, compiled: Any, bitmask: torch.Tensor) -> Matcher:
        """A ``Guide``'s mask written straight into ``bitmask``'s memory, and its advance.

        A ``Guide`` cannot tell a forced run: no jump-forward.
        """
        from outlines_core import Guide

        guide = Guide(compiled)
        address, words = bitmask.data_ptr(), bitmask.numel()

        def fill() -> None:
            guide.write_mask_into(address, words, 4)

        def accept(token: int) -> bool:
            if not guide.accepts_tokens([token]):
                return False
            guide.advance(token_id=token, return_tokens=False)
            return True

        return Matcher(fill, accept)

    def new_processor(self, compiled: Any) -> Any:
        """The outlines ``OutlinesCoreLogitsProcessor`` (torch) over ``compiled``."""
        from outlines.backends.outlines_core import OutlinesCoreLogitsProcessor

        return OutlinesCoreLogitsProcessor(compiled, "torch")
