"""The cheapest-per-day question as one SQL statement (warehouse.semantic_history) gives the
rows the day-by-day polars history gave, on every path: stored days (the default view),
days computed for another pricing set, a few providers or a place, today's live point, one
point per day or per day and model; and `history` rounds its points as polars rounds."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import duckdb
import polars as pl
import pytest

from contract import DEFAULT_PRICING, pricing_set
from tests.reports.conftest import NOW, Builder, build_market, offer
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import cheapest_at, day_end
from warehouse.semantic_history import HISTORY_POINTS, cheapest_history

_COLUMNS = {"day": pl.Date, "gpu_model": pl.String, "price_usd_per_gpu_hour": pl.Float64,
            "provider": pl.String, "offering": pl.String, "region": pl.String,
            "pricing": pl.String, "gpu_count": pl.Float64, "price_usd_per_hour": pl.Float64,
            "source": pl.String, "capture_id": pl.String,
            "observed_at": pl.Datetime("us", "UTC")}
_MODELS = ["RTX 4090", "A100 40GB", "A100 80GB", "H100 SXM", "H100 PCIe", "RTX 3090", "L4"]


def _history_as_first_written(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *,
                              since: date, until: date, now: datetime,
                              pricing: tuple[str, ...] | None = None,
                              providers: list[str] | None = None, per_model: bool = False,
                              place: Place = EVERYWHERE) -> pl.DataFrame:
    """The cheapest per day as polars made it before it became one SQL statement (ties across
    models taken by model, as the SQL takes them)."""
    today = now.date()
    chosen = pricing_set(pricing)

    def cheapest(as_of: datetime, day: date) -> pl.DataFrame:
        rows = cheapest_at(con, as_of, chosen, gpu_models=gpu_models, providers=providers,
                           place=place)
        return rows.select(pl.lit(day).alias("day"), *list(_COLUMNS)[1:]).cast(_COLUMNS)

    if chosen == DEFAULT_PRICING and not providers and place.everywhere:
        frames = [pl.DataFrame(con.sql(
            "SELECT day, gpu_model, price_usd_per_gpu_hour, provider, offering, region, "
            "pricing, gpu_count, price_usd_per_hour, source, capture_id, observed_at "
            "FROM daily_cheapest WHERE day BETWEEN $since AND $until AND day < $today "
            "AND list_contains($models, gpu_model)",
            params={"since": since, "until": until, "today": today, "models": gpu_models})
        ).cast(_COLUMNS)]
    else:
        days = con.execute("SELECT DISTINCT day FROM daily_price WHERE day BETWEEN $since "
                           "AND $until AND day < $today ORDER BY day",
                           {"since": since, "until": until, "today": today}).fetchall()
        frames = [cheapest(day_end(day, now), day) for (day,) in days]
    if since <= today <= until:
        frames.append(cheapest(now, today))
    keys = ["day", "gpu_model"] if per_model else ["day"]
    rows = pl.concat(frames) if frames else pl.DataFrame(schema=_COLUMNS)
    return (rows.sort(*keys, "price_usd_per_gpu_hour", "provider", "offering",
                                   "region", "pricing", "gpu_model", maintain_order=True)
            .group_by(keys, maintain_order=True).first().sort(keys, maintain_order=True))


@pytest.fixture
def history(build: Builder) -> duckdb.DuckDBPyConnection:
    """The report's market, and a day on which one offering prices two models alike."""
    build_market(build)
    build.capture("runpod", NOW - timedelta(days=3), [
        offer("runpod", "serverless 4090, 3090", "RTX 4090", 0.31),
        offer("runpod", "serverless 4090, 3090", "RTX 3090", 0.31),
        offer("runpod", "L4", "L4", 0.43, region="eu"),
    ])
    return build.con


@pytest.mark.parametrize("asked", [
    {}, {"per_model": True}, {"pricing": ("spot", "on_demand", "interruptible")},
    {"providers": ["vastai", "runpod"]}, {"providers": ["runpod"], "per_model": True},
    {"place": Place(("eu",), ())}, {"place": Place((), ("EU",)), "per_model": True},
])
@pytest.mark.parametrize("span", [(14, 0), (14, 2), (2, 1)])
def test_the_history_query_is_the_rule_as_first_written(
        history: duckdb.DuckDBPyConnection, asked: dict[str, object],
        span: tuple[int, int]) -> None:
    back, ended = span
    since, until = NOW.date() - timedelta(days=back), NOW.date() - timedelta(days=ended)
    for models in (_MODELS, ["RTX 4090", "RTX 3090"], ["B200"]):
        ours = cheapest_history(history, models, since=since, until=until, now=NOW,
                                **asked)  # type: ignore[arg-type]
        assert ours.equals(_history_as_first_written(
            history, models, since=since, until=until, now=NOW, **asked))  # type: ignore[arg-type]
        if models is _MODELS and not asked and span == (14, 0):
            assert ours.height >= 3  # rows are compared, not empty frames
            assert ours["day"].to_list()[-1] == NOW.date()  # today's live point
    # the days computed for another view are dropped once read
    assert not history.sql("SELECT * FROM duckdb_tables() WHERE table_name = "
                           "'_history_days'").fetchall()


def test_the_tie_across_models_is_taken_by_model(history: duckdb.DuckDBPyConnection) -> None:
    points = cheapest_history(history, ["RTX 4090", "RTX 3090"], since=NOW.date() - timedelta(
        days=3), until=NOW.date() - timedelta(days=3), now=NOW, providers=["runpod"])
    assert points.select("gpu_model", "price_usd_per_gpu_hour").rows() == [("RTX 3090", 0.31)]


def test_history_points_round_as_polars_rounds() -> None:
    # ties of the 4th decimal, which DuckDB's round_even(x, 4) and half-away-from-zero round
    # would take the other way for some (81.01685, 95.14745, 5.25745)
    prices = [81.01685, 95.14745, 34.54465, 5.25745, 86.66375, 0.00005, 0.00015, 2.5, 1.23456,
              *(i / 100_000 + 0.00005 for i in range(0, 100_000, 7))]
    con = duckdb.connect()
    con.execute("CREATE TABLE h AS SELECT unnest($p)::DOUBLE AS price_usd_per_gpu_hour, "
                "DATE '2026-11-20' AS day, 'x' AS gpu_model, 'p' AS provider, 'o' AS offering, "
                "'r' AS region, 'on_demand' AS pricing, 's' AS source, "
                "'0123456789abcdef' AS capture_id, TIMESTAMPTZ '2026-11-20 01:00:00+00' "
                "AS observed_at", {"p": prices})
    shown = pl.DataFrame(con.sql(HISTORY_POINTS.format(history="SELECT * FROM h")))
    assert shown["price_usd_per_gpu_hour"].to_list() == (
        pl.Series(prices).round(4).to_list())
    assert set(shown["capture"]) == {"0123456789ab"}
