"""Prices(..., gpu_models=...) reads only those models' offers: they must be exactly the rows
all offers give for them (every rule of the comparable offer, the outlier median included,
reads offers of the same model alone), in every pricing set and place; and the answers built
on them (cheapest, value, explain market) must be the answers built on all offers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gpuprices import api
from reports.market import explain_market as explain_lines
from reports.market.cluster import cluster_quotes
from reports.market.explain import explain_cheapest, explain_market
from reports.market.rankings import cheapest_offers
from reports.market.values import market_of
from tests.reports.test_demo_history import demo_warehouse
from warehouse.connection import connect_read_only
from warehouse.frames import sql_frame
from warehouse.held_prices import held_current_prices
from warehouse.index.prints import SeriesScope
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import Prices, at_moment, listed_offers_query


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models-demo") / "gpu_prices.duckdb"
    demo_warehouse(path, datetime.now(UTC))
    return path


MODEL_SETS = [("H100 SXM", "H100 PCIe", "H100 NVL"), ("A100 80GB",), ("RTX 4090", "L4"),
              ("no such GPU",)]
SCOPES = [SeriesScope("on_demand", "all", "all"), SeriesScope("on_demand", None, "all"),
          SeriesScope("spot"), SeriesScope(segment="neocloud"), SeriesScope(geo="EU")]


@pytest.mark.parametrize("models", MODEL_SETS, ids=lambda m: "+".join(m))
@pytest.mark.parametrize("place", [EVERYWHERE, Place.of(geos=["EU"])], ids=["all", "EU"])
def test_the_offers_of_some_models_are_those_of_all_offers(demo: Path, models: tuple[str, ...],
                                                           place: Place) -> None:
    now = datetime.now(UTC)
    with connect_read_only(demo) as con:
        every = Prices(con, now, place=place)
        some = Prices(con, now, place=place, gpu_models=models)
        for pricing in [None, ("spot", "interruptible", "community_spot"),
                        ("on_demand", "spot", "community", "serverless")]:
            whole = every.offers(pricing).filter(pl.col("gpu_model").is_in(list(models)))
            assert some.offers(pricing).equals(whole), (models, pricing)
        if models[0] == "H100 SXM" and place.everywhere:  # the test can tell the two apart
            assert some.offers().height and some.offers().height < every.offers().height
            assert some.offers()["excluded"].null_count() < some.offers().height  # rules ran


@pytest.mark.parametrize("days_back", [0, 2, 400])
@pytest.mark.parametrize("place", [EVERYWHERE, Place.of(geos=["EU"])], ids=["all", "EU"])
def test_held_current_prices_give_the_offers_the_macro_gives(demo: Path, days_back: int,
                                                            place: Place) -> None:
    """Prices(hold_current=True), as the report and board read: current_price_at's rows are
    held once in a temporary table and every pricing set's offers read from them."""
    as_of = datetime.now(UTC) - timedelta(days=days_back)
    with connect_read_only(demo) as con:
        read = Prices(con, as_of, place=place)
        held = Prices(con, as_of, place=place, hold_current=True)
        other = Prices(con, as_of - timedelta(days=1), place=place, hold_current=True)
        some = Prices(con, as_of, place=place, gpu_models=("H100 SXM",), hold_current=True)
        for pricing in [None, ("spot", "interruptible", "community_spot"),
                        ("on_demand", "spot", "community", "serverless")]:
            assert held.offers(pricing).equals(read.offers(pricing)), (days_back, pricing)
            assert some.offers(pricing).equals(read.offers(pricing).filter(
                pl.col("gpu_model") == "H100 SXM")), (days_back, pricing)
            assert other.offers(pricing).equals(Prices(
                con, other.as_of, place=place).offers(pricing)), (days_back, pricing)
        tables = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary "
                             "AND table_name LIKE '_current_prices_%'").fetchone()
        # one per Prices that holds, whatever the sets asked; none where the read snapshot
        # holds them already (its moment is within their span: today's, not a day before)
        snapshot_holds = held_current_prices(con, as_of) is not None
        assert snapshot_holds == (days_back == 0)
        assert tables == ((1,) if snapshot_holds else (3,))
        if days_back == 0 and place.everywhere:  # the test can tell the moments apart
            assert held.offers().height and not held.offers().equals(other.offers())


@pytest.mark.parametrize("days_back", [0, 400])
def test_the_offers_are_the_listed_offers_in_their_order(demo: Path, days_back: int) -> None:
    """Prices.offers sorts in polars what listed_offers_query sorts in DuckDB: the same rows
    in the same order (NULLs last), for every pricing set and place."""
    as_of = datetime.now(UTC) - timedelta(days=days_back)
    with connect_read_only(demo) as con:
        for place in (EVERYWHERE, Place.of(geos=["EU"])):
            prices = Prices(con, as_of, place=place)
            for pricing in [None, ("spot", "interruptible", "community_spot"),
                            ("on_demand", "spot", "community", "serverless")]:
                listed = sql_frame(con, *listed_offers_query(
                    con, as_of, prices.pricing if pricing is None else pricing, place=place))
                assert prices.offers(pricing).equals(listed), (days_back, place, pricing)
                assert listed.height or days_back  # the test sees offers
        nulls = con.execute("SELECT count(*) FROM current_price_at($t) WHERE region IS NULL "
                            "OR offering IS NULL", {"t": as_of}).fetchone()
        assert nulls == (0,) or days_back  # (a NULL key sorts last in both)


def test_answers_about_a_model_are_the_answers_from_every_offer(demo: Path) -> None:
    now = datetime.now(UTC)
    h100 = ["H100 SXM", "H100 PCIe", "H100 NVL"]
    with connect_read_only(demo) as con:
        every, some = Prices(con, now), Prices(con, now, gpu_models=tuple(h100))
        assert cheapest_offers(some, gpu_models=h100).equals(
            cheapest_offers(every, gpu_models=h100))
        with pytest.raises(ValueError, match="alone"):  # never shared with a view of all GPUs
            at_moment(some, con, now)
        market_rows, _ = market_of(con, now.date(), now=now)
        assert cluster_quotes(some, market_rows, h100, gpus=64, days=30).equals(
            cluster_quotes(every, market_rows, h100, gpus=64, days=30))
        assert explain_cheapest(some, h100) == explain_cheapest(every, h100)
    assert api.cheapest("H100", limit=None, warehouse=demo).height > 0
    assert api.value(gpu="H100", limit=None, warehouse=demo).height > 0


def test_explain_market_reads_the_models_alone_and_says_the_same(demo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    day = datetime.now(UTC).date()
    with connect_read_only(demo) as con:
        restricted = explain_market(con, ["H100 SXM", "A100 80GB"], day)
        read: list[object] = []
        original = explain_lines.listed_offers_query

        def every_offer(*args: Any, **kwargs: Any) -> tuple[str, dict[str, object]]:
            read.append(kwargs["gpu_models"])
            kwargs["gpu_models"] = None  # as before: every offer, then the models' lines
            return original(*args, **kwargs)

        monkeypatch.setattr(explain_lines, "listed_offers_query", every_offer)
        from_all = explain_market(con, ["H100 SXM", "A100 80GB"], day)
    assert read == [["H100 SXM", "A100 80GB"]]
    assert restricted == from_all
    assert any(line.startswith("market price of H100 SXM") for line in restricted)


def test_the_cheapest_at_a_moment_reads_the_models_alone_and_finds_the_same(demo: Path) -> None:
    from warehouse.semantic import cheapest_at

    now = datetime.now(UTC)
    with connect_read_only(demo) as con:
        every = cheapest_at(con, now)
        for models in (["H100 SXM", "H100 PCIe"], ["L4"], ["RTX 4090", "A100 80GB", "L4"]):
            alone = cheapest_at(con, now, gpu_models=models)
            assert alone.equals(every.filter(pl.col("gpu_model").is_in(models))), models
            from_prices = Prices(con, now).cheapest(gpu_models=models)
            assert alone.select(from_prices.columns).sort("gpu_model").equals(
                from_prices.sort("gpu_model"))
        assert cheapest_at(con, now, gpu_models=["H100 SXM"]).height == 1


@pytest.mark.parametrize("models", MODEL_SETS, ids=lambda m: "+".join(m))
def test_an_unfixed_days_index_of_some_models_is_every_models_index_for_them(
        demo: Path, models: tuple[str, ...]) -> None:
    """`indicative(..., gpu_models=)` (market and explain on a day not fixed yet) computes their
    series alone: the same fixings and votes, in the same order, as the whole day's."""
    from warehouse.index.publish import indicative

    now = datetime.now(UTC)
    with connect_read_only(demo) as con:
        fixed = [row[0] for row in con.execute("SELECT day FROM index_day ORDER BY day")
                 .fetchall()]
        assert len(fixed) >= 2  # a day with earlier votes in its window: the screens read them
        for day in (fixed[1], now.date()):
            every = indicative(con, day, now)
            some = indicative(con, day, now, gpu_models=list(models))
            chosen = pl.col("gpu_model").is_in(list(models))
            assert some.fixings.equals(every.fixings.filter(chosen)), (models, day)
            assert some.votes.equals(every.votes.filter(chosen)), (models, day)
            if models[0] == "H100 SXM":  # the test can tell the two apart
                assert 0 < some.fixings.height < every.fixings.height
                assert some.votes["passing"].any()
            for scope in SCOPES:  # `index` and the market table ask for some series alone
                scoped = indicative(con, day, now, gpu_models=list(models), scope=scope)
                kept = chosen
                for column, value in (("kind", scope.kind), ("segment", scope.segment),
                                      ("geo", scope.geo)):
                    kept &= pl.lit(True) if value is None else pl.col(column) == value
                assert scoped.fixings.equals(every.fixings.filter(kept)), (models, day, scope)
                assert scoped.votes.equals(every.votes.filter(kept)), (models, day, scope)


def test_the_market_of_an_unfixed_day_reads_the_models_asked_about(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from warehouse.index import publish, read

    now = datetime.now(UTC)
    h100 = ["H100 SXM", "H100 PCIe", "H100 NVL"]
    asked: list[object] = []
    original = publish.history_before

    def history_before(*args: object, **kwargs: object) -> object:
        asked.append((args[3], args[4]))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(read, "day_record", lambda con, day: None)  # today is not fixed yet
    monkeypatch.setattr(publish, "history_before", history_before)
    with connect_read_only(demo) as con:
        some, published = read.market_view(con, now.date(), gpu_models=h100, now=now)
        every, _ = read.market_view(con, now.date(), now=now)
    on_demand = SeriesScope("on_demand", "all", "all")  # the market table's series alone
    assert not published and asked == [(h100, on_demand), (None, on_demand)]
    assert some.height and some.equals(every.filter(pl.col("gpu_model").is_in(h100)))
