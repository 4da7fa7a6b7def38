"""Progress through a command's silent minutes (``bedside.console.Steps``): seen on a terminal and in a log, never
in machine-readable output. Every case is decided by the step count and the interval, not by the clock: an
interval of 0 prints at every step, one of an hour at none."""

from __future__ import annotations

import io

from rich.console import Console

from bedside.console import Steps


def _console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=200), buffer


def _walk(steps: Steps, names: list[str]) -> None:
    with steps:
        for name in names:
            steps.advance(name)


def test_off_a_terminal_a_plain_line_says_how_far_and_which_step_was_last() -> None:
    console, buffer = _console(terminal=False)
    steps = Steps("guard-eval", 3, "sets measured", console=console, every_s=0)
    _walk(steps, ["dev", "dev 2", "held out 9"])
    lines = buffer.getvalue().splitlines()
    # no line for the last step: the command's own output follows at once
    assert [line.rsplit(",", 1)[0] for line in lines] == [
        "guard-eval: 1 of 3 sets measured (last: dev)",
        "guard-eval: 2 of 3 sets measured (last: dev 2)",
    ]
    assert all(line.endswith(" s") for line in lines)
    assert steps.done == 3


def test_off_a_terminal_lines_are_spaced_by_the_interval_not_one_a_step() -> None:
    console, buffer = _console(terminal=False)
    _walk(Steps("fidelity-eval", 5, "sets measured", console=console, every_s=3600), ["a", "b", "c", "d", "e"])
    assert buffer.getvalue() == ""


def test_quiet_prints_nothing_for_machine_readable_output() -> None:
    for terminal in (False, True):
        console, buffer = _console(terminal=terminal)
        steps = Steps("guard-eval", 2, "sets measured", console=console, every_s=0, quiet=True)
        _walk(steps, ["dev", "dev 2"])
        assert buffer.getvalue() == "", terminal
        assert steps.done == 2


def test_on_a_terminal_a_bar_is_drawn_and_no_log_line() -> None:
    console, buffer = _console(terminal=True)
    steps = Steps("guard-eval", 2, "sets measured", console=console, every_s=0)
    _walk(steps, ["dev", "dev 2"])
    drawn = buffer.getvalue()
    assert "guard-eval" in drawn  # the bar's description, drawn while it ran
    assert "of 2 sets measured" not in drawn  # the plain log line is for logs only
    assert steps.done == 2
