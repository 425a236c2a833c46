"""`loci bench`: every registered workload exists and is listed; an unknown name is the user's mistake."""

from __future__ import annotations

import argparse

import pytest

from loci.bench import BENCHES, load
from loci.bench.cli import run
from loci.memory.errors import UsageError


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_every_registered_benchmark_loads_with_its_entry_points(name: str) -> None:
    module = load(name)
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    assert callable(module.run)
    assert isinstance(parser.parse_args([]), argparse.Namespace)


async def test_an_unknown_benchmark_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown benchmark 'nope'; choose from"):
        await run(argparse.Namespace(name="nope", rest=[], help=False))


async def test_help_lists_every_benchmark_with_what_it_measures(capsys: pytest.CaptureFixture[str]) -> None:
    assert await run(argparse.Namespace(name=None, rest=[], help=True)) == 0
    listed = capsys.readouterr().out.splitlines()
    for name in BENCHES:
        line = next(line for line in listed if line.split()[:1] == [name])
        assert len(line.split()) > 2  # the name and a summary
