"""`explain market`: how the market price of a GPU on a day was made, down to the captures it
came from, as text lines: the offers that counted (source, capture id, observed time), the
ones left out and why, each provider's median, the two-stage statistics, and the index fixing
with its votes. Read as DuckDB's rows (warehouse.frames.sql_dicts), without polars (start-up:
issue 23): the same rows and the same SQL as the frames of the other views (Prices.offers'
listed_offers_query, computed_market_query, the stored fixings and votes); a day whose index
is not fixed yet is computed by the index engine (and polars).

The text helpers here serve reports.market.explain too. `unit`: every amount in that money
(warehouse.unit.Unit: one currency at the ECB rate of the day explained), so the arithmetic
still adds up; USD by default.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from contract import DEFAULT_PRICING, STALE_AFTER_H
from warehouse.frames import held_table, sql_dicts
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import ALL, MarketConfig, day_end, listed_offers_query, load_market_config
from warehouse.semantic_market import computed_market_query
from warehouse.unit import USD, Unit

if TYPE_CHECKING:
    import duckdb

__all__ = ["MAX_LISTED", "amount_text", "explain_market", "listed", "offer_text", "per_gpu",
           "provenance", "when_text", "why_excluded"]

Row = dict[str, Any]  # one row as DuckDB gives it
_OFFERS = "_explained_offers"  # the offers listed, as a temporary table the market reads
# The columns of an offer that the lines below print (offer_text, provenance, per_gpu,
# why_excluded): read as Python values alone, not the other ~27 (each timestamp is a pytz
# conversion).
_SHOWN = ("gpu_model, provider, offering, region, pricing, source, capture_id, observed_at, "
          "last_success_at, gpu_count, price_usd_per_hour, price_usd_per_gpu_hour, "
          "preliminary_usd, excluded")

MAX_LISTED = 40  # offers listed per group; the rest are counted


def when_text(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "never"


def amount_text(value: float, unit: Unit = USD, digits: int = 4) -> str:
    shown = unit.amount(value)
    if shown is None:
        return "–"
    return f"{unit.currency} {shown:.{digits}f}" if unit.converting else f"${shown:.{digits}f}"


def _num(value: float, unit: Unit) -> str:
    """An amount in the arithmetic, without its sign."""
    shown = unit.amount(value)
    return "–" if shown is None else f"{shown:.4f}"


def offer_text(r: Row) -> str:
    return f"{r['provider']} {r['offering']} ({r['region']}, {r['pricing']})"


def provenance(r: Row) -> str:
    capture = str(r["capture_id"] or "?")[:12]
    return f"source {r['source']}, capture {capture}, observed {when_text(r['observed_at'])}"


def per_gpu(r: Row, unit: Unit) -> str:
    return (f"{amount_text(r['price_usd_per_hour'], unit)}/h / {r['gpu_count']:g} GPU = "
            f"{amount_text(r['price_usd_per_gpu_hour'], unit)}/GPU-h")


def why_excluded(r: Row, config: MarketConfig, unit: Unit) -> str:
    """Why an offer is not comparable, in words (warehouse.semantic EXCLUSIONS)."""
    reason = r["excluded"]
    if reason == "outlier":
        low = r["preliminary_usd"] / config.outlier_low_ratio
        if r["price_usd_per_gpu_hour"] < low:
            return (f"outlier: below {amount_text(low, unit)} = preliminary "
                    f"{amount_text(r['preliminary_usd'], unit)}"
                    f" / {config.outlier_low_ratio:g}")
        high = r["preliminary_usd"] * config.outlier_high_ratio
        return (f"outlier: above {amount_text(high, unit)} = preliminary "
                f"{amount_text(r['preliminary_usd'], unit)}"
                f" x {config.outlier_high_ratio:g}")
    if reason == "stale":
        return (f"stale: its source was last seen {when_text(r['last_success_at'])}, more than "
                f"{STALE_AFTER_H} h before")
    return {"unknown_gpu": "GPU not in the catalog",
            "gpu_only": "gpu_only: the GPU's price without its machine",
            "fractional": f"fractional: {r['gpu_count']:g} of a GPU",
            "other_pricing": f"other pricing ({r['pricing']})",
            "unconfirmed_jump": "unconfirmed jump: a move of 25 % or more not yet confirmed",
            "unavailable": "unavailable: marked so by its source"}.get(str(reason), str(reason))


def listed(rows: list[Row], render: Callable[[Row], str]) -> list[str]:
    lines = [f"  {render(r)}" for r in rows[:MAX_LISTED]]
    if len(rows) > MAX_LISTED:
        lines.append(f"  ... and {len(rows) - MAX_LISTED} more")
    return lines


def _median_of(values: list[float], unit: Unit) -> str:
    shown = ", ".join(_num(v, unit) for v in values[:12]) + (", ..." if len(values) > 12 else "")
    return f"median({shown})"


def _stage_two(market: Row, providers: list[Row], segment: str, unit: Unit) -> list[str]:
    chosen = providers if segment == ALL else [p for p in providers
                                                if p["segment"] == segment]
    values = sorted(p["median_usd_per_gpu_hour"] for p in chosen)
    label = "across providers" if segment == ALL else f"segment {segment}"
    m = market
    median, low, high = (_num(m["median_usd_per_gpu_hour"], unit),
                         _num(m["min_usd_per_gpu_hour"], unit),
                         _num(m["max_usd_per_gpu_hour"], unit))
    p25 = _num(m["p25_usd_per_gpu_hour"], unit)
    p75 = _num(m["p75_usd_per_gpu_hour"], unit)
    lines = [f"{label}: {_median_of(values, unit)} = {median}",
             f"  min {low}, p25 {p25}, p75 {p75}, max {high}; dispersion "
             f"({p75} - {p25}) / {median} = {m['dispersion']:.2f}"]
    if m["withheld_reason"]:
        lines.append(f"  two-stage median withheld: {m['withheld_reason']}")
    else:
        lines.append(f"  two-stage median: {amount_text(m['market_usd_per_gpu_hour'], unit)}"
                     "/GPU-hour "
                     f"({m['providers']} providers, {m['offers']} offers; the offer "
                     "statistics beside the index, not the market price)")
    return lines


def _fixings_and_votes(con: duckdb.DuckDBPyConnection, models: list[str], day: date,
                       now: datetime | None) -> tuple[list[Row], list[Row], bool]:
    """The day's on-demand fixings of `models` in every segment (every geography) and their
    votes, and whether they are published: the stored records of a fixed day (read as rows,
    in one question each for every model), else the index engine's
    (warehouse.index.read.votes_of)."""
    from warehouse.index.store import day_record, fixings_query, votes_query

    if not models:
        return [], [], True
    if day_record(con, day) is not None:
        fixings = sql_dicts(con, *fixings_query(days=[day], gpu_models=models,
                                                kind="on_demand", geo=ALL))
        votes = sql_dicts(con, *votes_query([str(f["fixing_id"]) for f in fixings]))
        return fixings, votes, True
    from warehouse.index.read import votes_of

    frame, vote_frame, published = votes_of(con, day, models, now=now, segment=None)
    return frame.to_dicts(), vote_frame.to_dicts(), published


def _index_lines(model: str, index: tuple[list[Row], list[Row], bool],
                 unit: Unit) -> list[str]:
    """The market price itself: the day's on-demand index fixing per scope, and the votes of
    the all-provider one (warehouse/index, docs/index-methodology.md); `index`:
    _fixings_and_votes of the models explained."""
    every_fixing, votes, published = index
    fixings = [f for f in every_fixing if f["gpu_model"] == model]
    status = "published" if published else "indicative: the day is not fixed yet"
    lines = [f"market price = the on-demand index ({status}; docs/index-methodology.md):"]
    for f in sorted(fixings, key=lambda f: (f["segment"] != ALL, f["segment"])):
        if f["value"] is None:
            lines.append(f"  [{f['segment']}] no index: {f['withheld_reason']}")
            continue
        band = f"{amount_text(f['band_low'], unit)}-{amount_text(f['band_high'], unit)}"
        lines.append(f"  [{f['segment']}] {amount_text(f['value'], unit)}/GPU-hour, band "
                     f"{band}; panel {f['panel']} "
                     f"({f['carried']} carried), {f['flagged']} kept out; method "
                     f"{f['method_version']}")
    main = [f["fixing_id"] for f in fixings if f["segment"] == ALL]
    if main:
        lines.append("votes of [all] (each at p - sd, p, p + sd with its weight; the value is "
                     "the weighted mean of the central third of the vote mass):")
        mine = [v for v in votes if v["fixing_id"] == main[0]]
        for v in sorted(mine, key=lambda v: v["value"]):
            flags = f" [{', '.join(v['flags'])}]" if v["flags"] else ""
            note = f": {v['note']}" if v["note"] else ""
            lines.append(f"  {v['provider']} [{v['provider_segment']}]: "
                         f"{_num(v['value'], unit)} sd {_num(v['sd'], unit)} weight "
                         f"{v['weight']:.4f}{flags}{note}")
    return lines


def explain_market(con: duckdb.DuckDBPyConnection, gpu_models: list[str], day: date, *,
                   now: datetime | None = None, config: MarketConfig | None = None,
                   segments: dict[str, str] | None = None,
                   place: Place = EVERYWHERE, unit: Unit = USD) -> list[str]:
    """How the market price of each model on `day` was made (as prices stood at its end), over
    the offers in `place`; amounts in `unit`."""
    config = config or load_market_config()
    as_of = day_end(day, now or datetime.now(UTC))
    # the models' offers alone (each rule and the market are per model: the same rows and
    # values as from every offer); the market below is made from these very rows
    sql, params = listed_offers_query(con, as_of, DEFAULT_PRICING, place=place,
                                      gpu_models=gpu_models, config=config, segments=segments)
    with held_table(con, _OFFERS, sql, params) as held:
        offers = sql_dicts(con, f"SELECT {_SHOWN} FROM ({held})")
        (providers_sql, at), (market_sql, also) = computed_market_query(
            con, as_of, config, segments, place=place, day=day, offers=held)
        providers, market = sql_dicts(con, providers_sql, at), sql_dicts(con, market_sql, also)
    where = f" in {place.describe()}" if not place.everywhere else ""
    lines: list[str] = []
    explained = [m for m in gpu_models if m in {o["gpu_model"] for o in offers}]
    index = _fixings_and_votes(con, explained, day, now)
    for model in explained:
        mine = [o for o in offers if o["gpu_model"] == model]
        counted = [o for o in mine if o["excluded"] is None]
        excluded = [o for o in mine if o["excluded"] is not None]
        lines += [f"market price of {model}{where} on {day}, as prices stood at "
                  f"{when_text(as_of)}",
                  f"rule (warehouse/market.toml): comparable offers, pricing "
                  f"{', '.join(DEFAULT_PRICING)}; available; whole GPUs; seen within "
                  f"{STALE_AFTER_H} h; outliers below 1/{config.outlier_low_ratio:g} or above "
                  f"{config.outlier_high_ratio:g}x the preliminary median",
                  f"counted ({len(counted)} offers):"]
        lines += listed(counted, lambda r: f"{offer_text(r)}: {per_gpu(r, unit)}; "
                         f"{provenance(r)}")
        lines.append(f"excluded ({len(excluded)} offers):")
        lines += listed(excluded, lambda r: f"{offer_text(r)}: "
                         f"{amount_text(r['price_usd_per_gpu_hour'], unit)}/GPU-h; "
                         f"{why_excluded(r, config, unit)}; {provenance(r)}")
        mine_providers = [p for p in providers if p["gpu_model"] == model]
        lines.append("per-provider medians:")
        for p in mine_providers:
            values = sorted(o["price_usd_per_gpu_hour"] for o in counted
                            if o["provider"] == p["provider"])
            carried = (f" (carried forward {p['carried_days']} day(s))"
                       if p["carried_days"] else "")
            lines.append(f"  {p['provider']} [{p['segment']}]: {_median_of(values, unit)} = "
                         f"{_num(p['median_usd_per_gpu_hour'], unit)}{carried}")
        for m in [m for m in market if m["gpu_model"] == model]:
            lines += _stage_two(m, mine_providers, str(m["segment"]), unit)
        lines += _index_lines(model, index, unit)
        lines.append("")
    return lines or [f"no offers of {', '.join(gpu_models)} stood at {when_text(as_of)}"]
