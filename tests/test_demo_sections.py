"""`bedside demo`'s accounting, without a model: per-section wall and CPU time from the clocks it is given, the
repetition guard's count from stored usage, and the totals row."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from bedside.cli.demo import DemoSection, _repetitions, run_sections, timings_table
from bedside.console import markdown_table


def ticking(step: float) -> Callable[[], float]:
    """A clock that advances ``step`` seconds on every reading."""
    readings: Iterator[float] = (step * i for i in range(1_000))
    return lambda: next(readings)


def test_each_section_is_timed_on_both_clocks_and_its_guard_count_kept() -> None:
    ran: list[str] = []

    def section(name: str, fired: int) -> DemoSection:
        def run() -> int:
            ran.append(name)
            return fired

        return DemoSection(name, f"bedside run configs/{name}.yaml", run)

    timings = run_sections([section("a", 0), section("b", 3)], clock=ticking(10.0), cpu_clock=ticking(4.0))
    assert ran == ["a", "b"]
    assert [(t.name, t.wall_s, t.cpu_s, t.repetitions) for t in timings] == [("a", 10.0, 4.0, 0), ("b", 10.0, 4.0, 3)]
    table = markdown_table(timings_table(timings))
    assert "| b | 10 | 4 | 3 | bedside run configs/b.yaml |" in table
    assert "| total | 20 | 8 | 3 |" in table


def test_guard_cuts_are_summed_over_roles_and_absent_counts_are_zero() -> None:
    assert _repetitions({"system": {"calls": 3, "repetitions": 2}, "patient": {"repetitions": 1}}) == 3
    assert _repetitions({"system": {"calls": 3, "truncated": 1}}) == 0  # a row stored before the count existed


def test_each_section_reports_the_embedded_models_work_done_in_it() -> None:
    from bedside.llm.providers.embedded import RuntimeCounts

    after_cold = RuntimeCounts(4, 900, 2000, 120)
    readings = iter([RuntimeCounts(), after_cold, after_cold, after_cold])
    sections = [DemoSection("cold", "x", lambda: 0), DemoSection("warm", "y", lambda: 0)]
    cold, warm = run_sections(sections, clock=ticking(1.0), cpu_clock=ticking(1.0), counter=lambda: next(readings))
    assert cold.work == RuntimeCounts(4, 900, 2000, 120)
    assert warm.work == RuntimeCounts()  # answered from the cache: no model work
    table = markdown_table(timings_table([cold, warm]))
    assert "| total | 2 | 2 | 0 |  | 4 | 900 | 2000 | 120 |" in table
