"""The hand-made warehouse fixtures of tests/reports (Builder, a fresh warehouse per test)."""

from tests.reports.conftest import build, con  # noqa: F401
