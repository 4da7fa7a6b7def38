"""Synthetic demo data written for bedside (no real patients): used by ``make demo`` and the tests."""

from pathlib import Path

DEMO_DIR = Path(__file__).parent / "demo"
