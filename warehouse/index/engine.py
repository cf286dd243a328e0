"""One day's fixings from the day's prints and the record of earlier days: pure, no I/O.

For every series (warehouse/index/prints.py) that has a print today, or a vote within the
carry or dormant window:
1. screens flag each fresh print, never drop it (the vote is kept with its flags):
   - band: outside the GPU's plausibility band (schemas.screens.band_frame, narrowed to the
     median of the day's prints of that GPU and kind);
   - jump: moved >= jump_threshold since the provider's previous print, with fewer than
     jump_others_needed other providers moving >= jump_others_move the same way over the same
     span (fewer than jump_decidable comparable: the screen stands down, jump_undecided);
   - own_outlier: |p - mean| > outlier_sd x max(sd, outlier_floor x mean) of the provider's
     last outlier_window prints, in its quoted currency (fewer than outlier_min_history
     prints: untested, flag new);
   - excluded_provider, aggregator (when aggregators are not eligible);
2. a provider with no print keeps its last passing vote for up to carry_days (carried);
3. weights from attendance (prints on the series' days, exponentially weighted), ^ eta, with a
   floor and a cap;
4. the value: the configured aggregate (warehouse/index/aggregate.py) of the passing votes,
   with the bootstrap band; "no index" with its reason below min_panel votes or min_fresh
   fresh ones, or when no provider priced the series that day.

`History` is the record of earlier days (the published votes, or a replay's own): the screens,
the vote spreads, attendance and carried votes read it and nothing else, so a fixing is a
function of its day's prints, the record before it and the parameters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import numpy as np
import polars as pl

from schemas.screens import band_frame
from warehouse.index.aggregate import aggregate, bootstrap_band, series_seed
from warehouse.index.params import IndexParams
from warehouse.index.prints import SERIES_KEY, SeriesScope
from warehouse.semantic import ALL

__all__ = ["BLOCKING", "FIXING_SCHEMA", "VOTE_SCHEMA", "Fixing", "History", "Vote", "fix_day",
           "frames", "series_id"]

# Flags that keep a print out of the value; the others only inform.
BLOCKING = frozenset({"band", "jump", "own_outlier", "excluded_provider", "aggregator"})
Key = tuple[str, str, int, str, str]  # gpu_model, kind, term_months, segment, geo

VOTE_SCHEMA: dict[str, pl.DataType] = {
    "fixing_id": pl.String(), "day": pl.Date(), "gpu_model": pl.String(), "kind": pl.String(),
    "term_months": pl.Int32(), "segment": pl.String(), "geo": pl.String(),
    "provider": pl.String(), "provider_segment": pl.String(), "value": pl.Float64(),
    "native_value": pl.Float64(), "currency": pl.String(), "sd": pl.Float64(),
    "weight": pl.Float64(), "passing": pl.Boolean(), "fresh": pl.Boolean(),
    "carried_from": pl.Date(), "flags": pl.List(pl.String()), "note": pl.String(),
    "offers": pl.Int32(), "sources": pl.List(pl.String()),
    "capture_ids": pl.List(pl.String()),
}
FIXING_SCHEMA: dict[str, pl.DataType] = {
    "fixing_id": pl.String(), "day": pl.Date(), "gpu_model": pl.String(), "kind": pl.String(),
    "term_months": pl.Int32(), "segment": pl.String(), "geo": pl.String(),
    "value": pl.Float64(), "band_low": pl.Float64(), "band_high": pl.Float64(),
    "panel": pl.Int32(), "fresh": pl.Int32(), "carried": pl.Int32(), "flagged": pl.Int32(),
    "withheld_reason": pl.String(),
}


def series_id(day: date, key: Key) -> str:
    """A fixing's id: its day and series, readable ("2026-11-20|H100 SXM|on_demand|0|all|all")."""
    return "|".join([day.isoformat(), *(str(k) for k in key)])


@dataclass(slots=True)
class Vote:
    provider: str
    provider_segment: str
    value: float
    native_value: float
    currency: str
    offers: int
    sources: list[str]
    capture_ids: list[str]
    fresh: bool
    via_aggregator: bool = False
    carried_from: date | None = None
    sd: float = 0.0
    weight: float = 0.0
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passing(self) -> bool:
        return not BLOCKING.intersection(self.flags)


@dataclass(slots=True)
class Fixing:
    key: Key
    day: date
    votes: list[Vote]
    value: float | None = None
    band_low: float | None = None
    band_high: float | None = None
    withheld_reason: str | None = None

    @property
    def passing(self) -> list[Vote]:
        return [v for v in self.votes if v.passing]


@dataclass(frozen=True, slots=True)
class Past:
    """One earlier vote of a provider in a series."""

    day: date
    value: float
    native_value: float
    currency: str
    sd: float
    passing: bool
    fresh: bool
    provider_segment: str
    offers: int
    sources: tuple[str, ...]
    capture_ids: tuple[str, ...]


_SLICE_ROWS = 8192  # votes turned into Python objects at a time (History.add)
# the columns of a vote its series' later fixings read (History.add), in this order
PAST_COLUMNS = ("gpu_model", "kind", "term_months", "segment", "geo", "provider", "day",
                "value", "native_value", "currency", "sd", "passing", "fresh",
                "provider_segment", "offers", "sources", "capture_ids")


class History:
    """Earlier votes per series and provider, oldest first (from index_vote rows)."""

    def __init__(self, votes: pl.DataFrame | None = None, genesis: date | None = None) -> None:
        self.genesis = genesis
        self.by_key: dict[Key, dict[str, list[Past]]] = defaultdict(lambda: defaultdict(list))
        if votes is not None and votes.height:
            self.add(votes)

    def add(self, votes: pl.DataFrame) -> None:
        """Append votes (VOTE_SCHEMA's PAST_COLUMNS at least) of days later than every one
        held."""
        # column lists zipped, a slice at a time, not iter_rows(named=True): a dict per vote
        # was 0.6 s of the 85k votes an unfixed day reads at 50 M observations; and the few
        # distinct texts (currency, segment, sources, captures) held once each, not once per
        # vote: 51 -> 20 MiB there (BENCHMARKS §18)
        one: dict[object, Any] = {}
        for part in votes.sort("day", "provider").iter_slices(_SLICE_ROWS):
            columns = [part[c].to_list() for c in PAST_COLUMNS]
            for (model, kind, term, segment, geo, provider, day, value, native_value, currency,
                 sd, passing, fresh, provider_segment, offers, sources, capture_ids) in zip(
                    *columns, strict=True):
                sources, capture_ids = tuple(sources or ()), tuple(capture_ids or ())
                self.by_key[(model, kind, int(term), segment, geo)][provider].append(Past(
                    day, value, native_value, one.setdefault(currency, currency), sd, passing,
                    fresh, one.setdefault(provider_segment, provider_segment), offers,
                    one.setdefault(sources, sources), one.setdefault(capture_ids, capture_ids)))
                if self.genesis is None or day < self.genesis:
                    self.genesis = day

    def keys_since(self, day: date) -> set[Key]:
        return {key for key, providers in self.by_key.items()
                if any(p and p[-1].day >= day for p in providers.values())}

    def last_day(self, key: Key) -> date | None:
        days = [p[-1].day for p in self.by_key.get(key, {}).values() if p]
        return max(days) if days else None


def _bands(prints: pl.DataFrame) -> dict[tuple[str, str, int], tuple[float, float]]:
    """(gpu_model, kind, term) -> the plausibility band for the day, from the all-provider
    prints of that GPU and kind (schemas.screens.band_frame: catalog band, narrowed to the
    median print once enough providers price it)."""
    found: dict[tuple[str, str, int], tuple[float, float]] = {}
    whole = prints.filter((pl.col("segment") == ALL) & (pl.col("geo") == ALL))
    for (kind, term), part in whole.group_by(["kind", "term_months"]):
        market = part.group_by("gpu_model").agg(
            pl.len().alias("providers"), pl.col("value").median().alias("median_usd_per_gpu_hour"))
        for row in band_frame(market).join(market.select("gpu_model"), on="gpu_model") \
                .iter_rows(named=True):
            if row["band_low"] is not None and row["band_high"] is not None:
                found[(row["gpu_model"], str(kind), int(term))] = (row["band_low"],
                                                                    row["band_high"])
    return found


def _pct(move: float) -> str:
    return f"{move * 100:+.0f}%"


def _screen(vote: Vote, past: dict[str, list[Past]], today: dict[str, Vote],
            band: tuple[float, float] | None, params: IndexParams) -> None:
    """Flag one fresh print (in place)."""
    if vote.provider in params.excluded_providers:
        vote.flags.append("excluded_provider")
    if vote.via_aggregator:
        vote.flags.append("via_aggregator" if params.aggregators else "aggregator")
    if params.band and band is not None and not band[0] <= vote.value <= band[1]:
        vote.flags.append("band")
        vote.notes.append(f"${vote.value:.4f} outside the band ${band[0]:.4f}-${band[1]:.4f}")
    mine = [p for p in past.get(vote.provider, []) if p.fresh]
    same = [p for p in mine if p.currency == vote.currency][-params.outlier_window:]
    if len(same) >= params.outlier_min_history:
        values = np.array([p.native_value for p in same])
        mean, sd = float(values.mean()), float(values.std())
        limit = params.outlier_sd * max(sd, params.outlier_floor * mean)
        if abs(vote.native_value - mean) > limit:
            vote.flags.append("own_outlier")
            vote.notes.append(f"{vote.native_value:.4f} {vote.currency} vs {mean:.4f}, the mean "
                              f"of its last {len(same)} prints (allowed +-{limit:.4f})")
    else:
        vote.flags.append("new")
    if not mine or mine[-1].currency != vote.currency or mine[-1].native_value <= 0:
        return
    previous = mine[-1]
    move = vote.native_value / previous.native_value - 1
    if abs(move) < params.jump_threshold:
        return
    # corroboration: the other providers' moves over the same span (their last print on or
    # before this provider's previous one -> today)
    moves = []
    for provider, other in today.items():
        if provider == vote.provider:
            continue
        before = [p for p in past.get(provider, []) if p.fresh and p.day <= previous.day
                  and p.currency == other.currency]
        if before and before[-1].native_value > 0:
            moves.append(other.native_value / before[-1].native_value - 1)
    if len(moves) < params.jump_decidable:
        vote.flags.append("jump_undecided")
        vote.notes.append(f"moved {_pct(move)} since {previous.day}; only {len(moves)} other "
                          f"provider(s) to compare (the jump screen needs "
                          f"{params.jump_decidable})")
        return
    same_way = sum(1 for m in moves if m * move > 0 and abs(m) >= params.jump_others_move)
    if same_way < params.jump_others_needed:
        vote.flags.append("jump")
        vote.notes.append(f"moved {_pct(move)} since {previous.day} "
                          f"({previous.native_value:.4f} -> {vote.native_value:.4f}); "
                          f"{same_way} of {len(moves)} other providers moved "
                          f">= {params.jump_others_move:.0%} the same way "
                          f"(needs {params.jump_others_needed})")


def _attendance(past: list[Past], fresh_today: bool, day: date, start: date,
                params: IndexParams) -> float:
    """Exponentially weighted share of the series' days from `start` to `day` on which the
    provider printed (today counts when it did)."""
    window = max(start, day - timedelta(days=params.attendance_window_days - 1))
    printed = {p.day for p in past if p.fresh and p.day >= window}
    if fresh_today:
        printed.add(day)
    half = params.attendance_half_life_days
    ages = range((day - window).days + 1)
    total = sum(2 ** (-age / half) for age in ages)
    # summed oldest first: a set of dates iterates in an order that changes with the hash
    # seed, and the float sum (so the weights) with it, run to run
    got = sum(2 ** (-(day - d).days / half) for d in sorted(printed))
    return got / total if total else 0.0


def _weights(shares: list[float], params: IndexParams) -> list[float]:
    """Attendance shares -> weights: ^eta, normalised, floor, then cap (at least 1/n)."""
    n = len(shares)
    if n == 0:
        return []
    scores = [s ** params.attendance_eta if s > 0 else 0.0 for s in shares]
    total = sum(scores)
    if total <= 0 or n * params.floor >= 1:
        return [1.0 / n] * n
    share = [s / total for s in scores]
    weights = [params.floor + (1 - n * params.floor) * s for s in share]
    cap = max(params.cap, 1.0 / n)
    capped: set[int] = set()
    for _ in range(n):
        over = [i for i, w in enumerate(weights) if w > cap + 1e-15 and i not in capped]
        if not over:
            break
        capped.update(over)
        excess = sum(weights[i] - cap for i in over)
        for i in over:
            weights[i] = cap
        rest = [i for i in range(n) if i not in capped]
        mass = sum(share[i] for i in rest)
        for i in rest:
            weights[i] += excess * (share[i] / mass if mass > 0 else 1 / len(rest))
    return weights


def _vote_sd(vote: Vote, past: list[Past], day: date, params: IndexParams) -> float:
    since = day - timedelta(days=params.sd_window_days - 1)
    # passing prints only: a glitch kept out by a screen must not widen the vote for 90 days
    values = [p.value for p in past if p.fresh and p.passing and p.day >= since] + [vote.value]
    sd = float(np.std(values)) if len(values) >= 2 else 0.0
    return max(sd, params.sd_floor * vote.value)


def _carried(provider: str, past: list[Past], day: date, params: IndexParams) -> Vote | None:
    """The provider's last passing fresh vote within carry_days, carried to `day`."""
    for p in reversed(past):
        if (day - p.day).days > params.carry_days:
            return None
        if p.fresh and p.passing:
            return Vote(provider, p.provider_segment, p.value, p.native_value, p.currency,
                        p.offers, list(p.sources), list(p.capture_ids), fresh=False,
                        carried_from=p.day, sd=p.sd, flags=["carried"],
                        notes=[f"no print today; its {p.day} vote carried forward"])
    return None


def _fix_series(key: Key, day: date, rows: list[dict[str, object]], history: History,
                band: tuple[float, float] | None, params: IndexParams) -> Fixing:
    past = history.by_key.get(key, {})
    today = {str(r["provider"]): Vote(
        str(r["provider"]), str(r["provider_segment"]), float(r["value"]),  # type: ignore[arg-type]
        float(r["native_value"]), str(r["currency"]), int(r["offers"]),  # type: ignore[arg-type]
        list(r["sources"]), list(r["capture_ids"]), fresh=True,  # type: ignore[call-overload]
        via_aggregator=bool(r["via_aggregator"])) for r in rows}
    for vote in today.values():
        _screen(vote, past, today, band, params)
        vote.sd = _vote_sd(vote, past.get(vote.provider, []), day, params)
    votes = list(today.values())
    for provider, mine in past.items():
        if provider not in today and (carried := _carried(provider, mine, day, params)):
            votes.append(carried)
    votes.sort(key=lambda v: v.provider)
    fixing = Fixing(key, day, votes)
    passing = fixing.passing
    start = history.genesis or day
    shares = [_attendance(past.get(v.provider, []), v.fresh, day, start, params)
              for v in passing]
    for vote, weight in zip(passing, _weights(shares, params), strict=True):
        vote.weight = weight
    fresh = sum(v.fresh for v in passing)
    if not votes:
        fixing.withheld_reason = (f"no print: no provider priced it that day, none carried "
                                  f"(last vote {history.last_day(key)})")
    elif len(passing) < params.min_panel:
        out = [f"{v.provider} ({', '.join(f for f in v.flags if f in BLOCKING)})"
               for v in votes if not v.passing]
        fixing.withheld_reason = (f"panel {len(passing)} < minimum {params.min_panel}"
                                  + (f"; kept out: {'; '.join(out)}" if out else ""))
    elif fresh < params.min_fresh:
        fixing.withheld_reason = (f"only {fresh} fresh print(s), minimum {params.min_fresh} "
                                  f"({len(passing) - fresh} carried forward)")
    else:
        p = np.array([v.value for v in passing])
        sd = np.array([v.sd for v in passing])
        w = np.array([v.weight for v in passing])
        fixing.value = aggregate(params.method, p, sd, w, params.trim)
        fixing.band_low, fixing.band_high = bootstrap_band(
            params.method, p, sd, w, seed=series_seed(params.seed, day, *key),
            resamples=params.resamples, low=params.low, high=params.high, trim=params.trim)
    return fixing


def fix_day(day: date, prints: pl.DataFrame, history: History, params: IndexParams,
            scope: SeriesScope | None = None) -> list[Fixing]:
    """Every fixing of `day` (see the module docstring), sorted by series; of the series in
    `scope` alone when given (the bands still read every print)."""
    bands = _bands(prints) if params.band else {}
    grouped: dict[Key, list[dict[str, object]]] = defaultdict(list)
    for row in prints.iter_rows(named=True):
        key = (row["gpu_model"], row["kind"], int(row["term_months"]), row["segment"],
               row["geo"])
        grouped[key].append(row)
    window = max(params.carry_days, params.dormant_days)
    keys = set(grouped) | history.keys_since(day - timedelta(days=window))
    if scope is not None:
        keys = {key for key in keys if scope.keeps(key)}
    return [_fix_series(key, day, grouped.get(key, []), history,
                        bands.get((key[0], key[1], key[2])), params) for key in sorted(keys)]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def frames(fixings: list[Fixing]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(fixings, votes) as frames of FIXING_SCHEMA and VOTE_SCHEMA."""
    fixing_rows, vote_rows = [], []
    for f in fixings:
        fid = series_id(f.day, f.key)
        series = dict(zip(SERIES_KEY, f.key, strict=True))
        passing = f.passing
        fixing_rows.append({
            "fixing_id": fid, "day": f.day, **series, "value": _finite(f.value),
            "band_low": _finite(f.band_low), "band_high": _finite(f.band_high),
            "panel": len(passing), "fresh": sum(v.fresh for v in passing),
            "carried": sum(not v.fresh for v in passing),
            "flagged": sum(not v.passing for v in f.votes),
            "withheld_reason": f.withheld_reason})
        for v in f.votes:
            vote_rows.append({
                "fixing_id": fid, "day": f.day, **series, "provider": v.provider,
                "provider_segment": v.provider_segment, "value": v.value,
                "native_value": v.native_value, "currency": v.currency, "sd": v.sd,
                "weight": v.weight if v.passing else 0.0, "passing": v.passing,
                "fresh": v.fresh, "carried_from": v.carried_from, "flags": sorted(v.flags),
                "note": "; ".join(v.notes) or None, "offers": v.offers,
                "sources": sorted(v.sources), "capture_ids": sorted(v.capture_ids)})
    return (pl.DataFrame(fixing_rows, schema=FIXING_SCHEMA),
            pl.DataFrame(vote_rows, schema=VOTE_SCHEMA))
