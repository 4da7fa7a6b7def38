"""A Ctrl-C that the kernel hands to another thread still stops a command waiting for it (serve-model)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent(
    """
    import signal, sys, threading, time
    from bedside.cli.models import wait_until_interrupted

    main = threading.get_ident()

    def main_is_waiting():
        frame = sys._current_frames().get(main)
        while frame is not None:
            if frame.f_code is wait_until_interrupted.__code__:
                return True
            frame = frame.f_back
        return False

    def other_thread_takes_it():
        # sent only once the main thread is inside the wait, however slowly it got there
        while not main_is_waiting():
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # SIGINT to this thread, not the main one

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=other_thread_takes_it, daemon=True).start()
        wait_until_interrupted()
    except KeyboardInterrupt:
        print("stopped")
    """
)


def test_a_sigint_taken_by_another_thread_stops_the_wait() -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    # an endless wait (threading.Event().wait()) never returns here: the hang guard is what it would meet
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": src},
    )
    assert (done.returncode, done.stdout.strip()) == (0, "stopped"), done.stderr
