"""The linear layers of the MiniLM forward pass: float32, or int8 weights and activations.

Why int8: one short text through MiniLM is dominated by its 24 matrix products (four per
encoder layer), and those stream all ~42 MB of float32 weights from memory for every
text. Stored as int8 (a quarter of the bytes) and multiplied with numkong's int8 kernels
(VNNI/AVX-512 where the CPU has them, exact int32 accumulation), the same products cost
about a third of the CPU for 16 tokens, and the whole pass about half (bench/embed_int8.py;
figures in bench/RESULTS.md).

The int8 scheme is W8A8 with symmetric scales: each weight row (one output channel) is
quantised once at load as ``round(w * 127 / max|w|)``; each token's activations are
quantised the same way at run time, per token. The product of the two int8 codes is
accumulated exactly and scaled back by both scales. Everything between the products
(attention scores, softmax, LayerNorm, GELU, pooling) stays float32.

Per-token scales alone lose too much where the input is a LayerNorm's output (the query/
key/value and the feed-forward-in products): BERT's residual stream has a few outlier
channels (here 62, 63, 99, 157, 223) 5-15x larger than the rest, so one scale per token
leaves the other channels a few int8 steps. Those two products are smoothed as in
SmoothQuant (Xiao et al., 2023): input channel j is divided by
``s_j = sqrt(max|x_j| / max|w_j|)`` and its weights multiplied by it, which leaves the
product unchanged and moves the outliers into the weights, where per-channel scales
absorb them. ``max|x_j|`` is measured once at load by running a few fixed sentences
(``CALIBRATION_TEXTS``) through the float32 pass. Smoothing the other two products as
well made some vectors worse with so small a calibration set (measured on LoCoMo turns:
bench/RESULTS.md), so they are quantised plainly.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from mindspace.errors import ConfigError

__all__ = [
    "CALIBRATION_TEXTS",
    "DenseLinear",
    "InputPeaks",
    "Int8Linear",
    "Linear",
    "Precision",
    "smoothing",
    "warn_without_simd",
]

logger = logging.getLogger("mindspace.embeddings.minilm")

F32 = npt.NDArray[np.float32]

Precision = Literal["float32", "int8"]
"""How the forward pass multiplies: float32 throughout, or int8 linear layers."""


class Linear(Protocol):
    """``x @ W + b`` over the last axis of ``x``."""

    def __call__(self, x: F32) -> F32:
        """The layer applied to ``x`` of shape ``(..., in)``: shape ``(..., out)``."""
        ...


class DenseLinear:
    """A float32 linear layer (BLAS).

    Args:
        weight: ``(in, out)`` float32 weights (already transposed from torch's layout).
        bias: ``(out,)`` float32 bias.
    """

    def __init__(self, weight: F32, bias: F32) -> None:
        self.weight = weight
        self.bias = bias

    def __call__(self, x: F32) -> F32:
        """``x @ weight + bias``."""
        out: F32 = x @ self.weight
        out += self.bias
        return out


class InputPeaks:
    """Wraps a float32 layer and records the largest ``|x|`` per input channel it sees.

    Args:
        inner: The layer that computes the output.
    """

    def __init__(self, inner: DenseLinear) -> None:
        self.inner = inner
        self.peak = np.zeros(inner.weight.shape[0], dtype=np.float32)

    def __call__(self, x: F32) -> F32:
        """``inner(x)``, after noting the peaks of ``x``."""
        np.maximum(self.peak, np.abs(x.reshape(-1, x.shape[-1])).max(axis=0), out=self.peak)
        return self.inner(x)


def smoothing(peak: F32, weight: F32) -> F32:
    """SmoothQuant's factors with alpha 0.5: ``sqrt(max|x_j| / max|w_j|)`` per input channel.

    Args:
        peak: ``(in,)`` the largest ``|x_j|`` seen in calibration.
        weight: ``(in, out)`` the layer's float32 weights.

    Returns:
        ``(in,)`` positive float32 factors (1 where a channel was never seen or is all 0).
    """
    w_peak = np.abs(weight).max(axis=1)
    ok = (peak > 0) & (w_peak > 0)
    factors = np.sqrt(np.where(ok, peak, 1.0) / np.where(ok, w_peak, 1.0))
    return np.where(ok, factors, 1.0).astype(np.float32)


CALIBRATION_TEXTS = (
    "The quick brown fox jumps over the lazy dog.",
    "I went to the market yesterday and bought three apples.",
    "Can you remind me what we talked about last week?",
    "The meeting is scheduled for Tuesday at 10 am in room 4.",
    "She said the book was wonderful, but I didn't like the ending.",
    "Quarterly revenue exceeded the analysts' expectations.",
    "hello",
    "My dog Max loves running on the beach!",
    "What's your favourite movie?",
    "The blacksmith owes the baker money.",
)
"""Sentences whose activations set the smoothing factors (measured: any ten plain
sentences, or random words, gave the same cosine to the float32 vectors within 0.0005)."""


def _kernels() -> Any:
    try:
        import numkong
    except ImportError as exc:  # a core dependency, so only a broken install
        raise ConfigError(
            "The int8 MiniLM pass needs 'numkong'; reinstall mindspace (`pip install -e .` "
            "or `make`), or set MINDSPACE_EMBEDDER_PRECISION='float32'."
        ) from exc
    return numkong


def warn_without_simd() -> None:
    """Log a warning when numkong has only its portable kernels on this CPU.

    Measured on an AMD EPYC (AVX-512 VNNI): the int8 pass costs 3.3 ms a text with every
    kernel, 5.4 ms with AVX2 alone, 56 ms with the portable C kernels, against 7.4 ms
    for float32. So without SIMD the default would be 8x slower, which a user should hear.
    """
    capabilities = _kernels().get_capabilities()
    if not any(on for name, on in capabilities.items() if name != "serial"):
        logger.warning(
            "numkong has no SIMD kernels for this CPU, so the int8 MiniLM pass is about 8x "
            "slower than float32 here; set MINDSPACE_EMBEDDER_PRECISION='float32'."
        )


class Int8Linear:
    """A linear layer with int8 weights (per output channel) and int8 activations (per token).

    Args:
        weight: ``(in, out)`` float32 weights; quantised and packed here, once.
        bias: ``(out,)`` float32 bias, added in float32.
    """

    def __init__(self, weight: F32, bias: F32, smooth: F32 | None = None) -> None:
        self._nk = _kernels()
        self.inv_smooth = None if smooth is None else (1.0 / smooth).astype(np.float32)
        if smooth is not None:  # input channel j divided by smooth[j], its weights times it
            weight = weight * smooth[:, None]
        rows = np.ascontiguousarray(weight.T, dtype=np.float32)  # (out, in): one row a channel
        peak = np.abs(rows).max(axis=1)
        scale = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
        codes = np.rint(rows / scale[:, None]).astype(np.int8)
        # Packed once: numkong lays the codes out for its kernel; only the packed copy stays.
        self._packed = self._nk.dots_pack(codes)
        self.weight_scale = scale
        self.bias = np.asarray(bias, dtype=np.float32)
        self.shape = (rows.shape[1], rows.shape[0])

    def __call__(self, x: F32) -> F32:
        """``x @ W + b`` with ``x`` quantised to int8 per token (per row of the last axis)."""
        lead, width = x.shape[:-1], x.shape[-1]
        rows = x.reshape(-1, width)
        if self.inv_smooth is not None:
            rows = rows * self.inv_smooth
        peak = np.abs(rows).max(axis=1, keepdims=True)
        scale = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
        # |rows / scale| <= 127 by construction, so no clipping is needed before the cast.
        codes = np.rint(rows / scale).astype(np.int8)
        # int32, exact; the conversion to float32 is the one copy of the product.
        out: F32 = np.asarray(self._nk.dots_packed(codes, self._packed), dtype=np.float32)
        out *= scale
        out *= self.weight_scale
        out += self.bias
        return out.reshape(*lead, self.shape[1])
