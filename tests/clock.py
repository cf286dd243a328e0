"""A clock for tests of code that waits: sleeping moves it on, nothing really sleeps."""

from __future__ import annotations


class FakeClock:
    """Call it (or `monotonic()`) for the time; `sleep(s)` adds s."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
