"""One package per seed system. A task depends on the shared layers, never on another task."""
