"""Applying the verdict: `extra_bufts` sets llama.cpp's model parameter, and the bundled GGUF survives long prompts.

The model test runs the real probe against the bundled GGUF in a fresh home,
then loads it through `open_llama` and evaluates a prompt of a few hundred
tokens in one batch. On a CPU whose AMX kernels trap (the verdict is "off")
and on one where they work (the verdict is "on") alike, the process must
not die.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from loci.memory.errors import BackendError
from loci.runtime.models.llama import load as llama_load
from loci.runtime.models.llama.load import default_model_path, extra_bufts, open_llama, process_verdict
from loci.runtime.models.llama.server import _model_argument
from loci.runtime.models.llama.verdict import ENV, machine_key, verdict_path

LONG_PROMPT = "Every berth in the harbor has a number, an owner and a yearly fee that the council sets. " * 24


def test_extra_bufts_sets_the_model_parameter_and_restores_the_default() -> None:
    import llama_cpp.llama_cpp as native

    original = native.llama_model_default_params
    assert native.llama_model_default_params().use_extra_bufts is True
    with extra_bufts(False):
        assert native.llama_model_default_params().use_extra_bufts is False
    with extra_bufts(True):
        assert native.llama_model_default_params().use_extra_bufts is True
    assert native.llama_model_default_params is original


def test_extra_bufts_cannot_be_turned_off_without_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp.llama_cpp as native

    class OldParams:
        _fields_ = [("n_gpu_layers", None), ("vocab_only", None)]

    monkeypatch.setattr(native, "llama_model_params", OldParams)
    with pytest.raises(BackendError, match="cannot turn llama.cpp's extra buffer types off"), extra_bufts(False):
        pass
    with extra_bufts(True):
        assert native.llama_model_params is OldParams


def test_the_override_is_read_on_every_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCI_HOME", str(tmp_path))
    for value, expected in (("0", False), ("1", True)):
        monkeypatch.setenv(ENV, value)
        verdict = process_verdict()
        assert (verdict.extra_bufts, verdict.source) == (expected, "override")
    assert not verdict_path(tmp_path).exists()


@pytest.mark.parametrize(
    ("args", "model"),
    [(["--model", "/m/a.gguf", "--port", "1"], "/m/a.gguf"), (["--port", "1", "--model=/m/b.gguf"], "/m/b.gguf")],
)
def test_the_server_probes_the_model_it_is_given(args: list[str], model: str) -> None:
    assert _model_argument(args) == Path(model)
    assert _model_argument(["--config_file", "c.json"]) is None


@pytest.mark.model
def test_the_bundled_gguf_evaluates_a_long_prompt_through_open_llama(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCI_HOME", str(tmp_path))
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(llama_load, "_verdict", None)
    llm = open_llama(default_model_path(), n_ctx=1024, n_batch=512, verbose=False)
    verdict = process_verdict()
    assert verdict.source == "probe"
    assert json.loads(verdict_path(tmp_path).read_text())["key"] == machine_key()

    tokens = llm.tokenize(LONG_PROMPT.encode())
    assert len(tokens) > 300
    llm.eval(tokens)
    assert llm.n_tokens == len(tokens)
    assert all(math.isfinite(x) for x in llm.scores[len(tokens) - 1][:100])
    completion = llm.create_completion(LONG_PROMPT, max_tokens=8, temperature=0.0)
    assert completion["usage"]["prompt_tokens"] > 300
    llm.close()
