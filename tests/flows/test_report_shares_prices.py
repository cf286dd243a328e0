"""The report and its board stand at one moment: they share one Prices, so each set of offers
(a pricing set at a moment) is read from the warehouse once, not once per view (issue 23:
at 50 M observations a set costs ~55 ms)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import warehouse.semantic as semantic
from contract.settings import Settings
from flows.refresh_work import run_refresh
from flows.report_work import write_weekly_report
from warehouse.connection import connect_read_only
from warehouse.semantic import Prices, at_moment


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shared") / "gpu_prices.duckdb"
    run_refresh(Settings(warehouse=path), offline=True)
    return path


def test_each_set_of_offers_is_read_once_for_the_report_and_its_board(
        warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[tuple[datetime, tuple[str, ...]]] = Counter()
    offers = Prices.offers

    def counted(self: Prices, pricing: tuple[str, ...] | None = None) -> object:
        chosen = semantic.pricing_set(pricing or self.pricing)
        if chosen not in self._offers:  # read from the warehouse (else: kept)
            reads[(self.as_of, chosen)] += 1
        return offers(self, pricing)

    monkeypatch.setattr(Prices, "offers", counted)
    _, report, board = write_weekly_report(None, str(tmp_path), str(warehouse),
                                           now=datetime.now(UTC), with_board=True)
    assert board is not None and board.exists()
    assert report.week  # type: ignore[attr-defined]
    assert reads, "the report read offers"
    twice = {key: n for key, n in reads.items() if n > 1}
    assert not twice, f"read more than once: {twice}"


def test_prices_of_another_moment_or_connection_are_refused(warehouse: Path) -> None:
    now = datetime.now(UTC)
    con, other = connect_read_only(warehouse), connect_read_only(warehouse)
    try:
        prices = Prices(con, now)
        assert at_moment(prices, con, now) is prices
        assert at_moment(None, con, now).as_of == now
        with pytest.raises(ValueError, match="given for"):
            at_moment(prices, con, now - timedelta(days=7))
        with pytest.raises(ValueError, match="another connection"):
            at_moment(prices, other, now)
    finally:
        con.close()
        other.close()


def test_a_day_not_fixed_yet_is_computed_once_for_the_report_and_its_board(
        warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the nightly fixing (today's index not stored) the report and the board each show
    the day's indicative index: it is computed once for both (1.5 s at 50 M observations),
    and only while they are built together."""
    from warehouse.index import publish, read

    computed: Counter[tuple[object, ...]] = Counter()
    indicative = publish.indicative

    def counted(con: object, day: object, now: object = None, params: object = None,
                gpu_models: object = None, scope: object = None) -> publish.Computed:
        computed[(day, now, gpu_models, scope)] += 1
        return indicative(con, day, now, params, gpu_models=gpu_models,  # type: ignore[arg-type]
                          scope=scope)  # type: ignore[arg-type]

    monkeypatch.setattr(read, "day_record", lambda con, day: None)  # no day is fixed
    monkeypatch.setattr(publish, "indicative", counted)
    write_weekly_report(None, str(tmp_path), str(warehouse), now=datetime.now(UTC),
                        with_board=True)
    assert computed and set(computed.values()) == {1}, computed
    days = sum(computed.values())
    with connect_read_only(warehouse) as con:  # outside the report: nothing is kept
        read.market_view(con, datetime.now(UTC).date(), now=datetime.now(UTC))
        read.market_view(con, datetime.now(UTC).date(), now=datetime.now(UTC))
    assert sum(computed.values()) == days + 2
