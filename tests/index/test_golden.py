"""The index on golden warehouses worked by hand (issue 24): every expected number below is
worked out in the comment above its assertion, from the rules of docs/index-methodology.md
and warehouse/index/params.toml (version 1.0).

Common arithmetic: a provider whose prints never changed has sd = 3 % of its price (the
floor); providers that printed on every day of the series have equal attendance, so equal
weights (1/n: the 30 % cap grows to 1/n for n < 4). Each votes at p - sd, p, p + sd; the
index is the weighted mean of the votes between 1/3 and 2/3 of the cumulative weight.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta

import duckdb
import polars as pl
import pytest

from tests.reports.conftest import Builder, offer
from warehouse.index.params import default_params
from warehouse.index.publish import IndexParamsChanged, check_revisions, fix_index
from warehouse.index.store import read_fixings, read_revisions, read_votes

D0 = date(2026, 11, 2)
GPU = "H100 SXM"
MAIN = "|on_demand|0|all|all"


def at(day: int, hour: int = 12) -> datetime:
    return datetime.combine(D0 + timedelta(days=day), time(hour), UTC)


def land(build: Builder, day: int, prices: dict[str, float], hour: int = 12) -> None:
    for provider, price in prices.items():
        build.capture(provider, at(day, hour), [offer(provider, f"{provider}-h100", GPU, price)])


def sources(build: Builder, names: str) -> None:
    for name in names:
        build.source(name, name)


def fixing(con: duckdb.DuckDBPyConnection, day: int) -> dict[str, object]:
    rows = read_fixings(con, days=[D0 + timedelta(days=day)], gpu_models=[GPU], kind="on_demand",
                        segment="all", geo="all")
    assert rows.height == 1, rows
    return rows.row(0, named=True)


def votes(con: duckdb.DuckDBPyConnection, day: int) -> dict[str, dict[str, object]]:
    frame = read_votes(con, [f"{D0 + timedelta(days=day)}|{GPU}{MAIN}"])
    return {r["provider"]: r for r in frame.iter_rows(named=True)}


def central_third(votes: list[tuple[float, float, float]]) -> float:
    """The rule, written out independently of the engine: (price, sd, weight) per provider."""
    cast = sorted((p + k * sd, w) for p, sd, w in votes for k in (-1, 0, 1))
    total = sum(w for _, w in cast)
    low, high, below, mass, acc = total / 3, 2 * total / 3, 0.0, 0.0, 0.0
    for x, w in cast:
        share = max(0.0, min(below + w, high) - max(below, low))
        mass, acc, below = mass + share, acc + share * x, below + w
    return acc / mass


def attendance(printed: list[int], day: int, start: int = 0, half: float = 30.0) -> float:
    return (sum(2 ** (-(day - d) / half) for d in printed)
            / sum(2 ** (-(day - d) / half) for d in range(start, day + 1)))


def weights(shares: list[float], floor: float = 0.025) -> list[float]:
    """attendance ^ 0.5, normalised, floor (the 30 % cap binds in none of these panels)."""
    s = [a ** 0.5 for a in shares]
    return [floor + (1 - len(s) * floor) * x / sum(s) for x in s]


def test_a_jump_without_corroboration_is_flagged_and_kept_out(build: Builder) -> None:
    sources(build, "abcd")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    # day 3: d +34.6 % (2.6 -> 3.5); a, b, c unchanged: 0 of 3 others moved >= 10 % its way
    land(build, 3, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 3.5})
    fix_index(build.con, now=at(3, 23))
    d = votes(build.con, 3)["d"]
    assert "jump" in d["flags"] and not d["passing"] and d["weight"] == 0.0
    assert "moved +35% since 2026-11-04" in d["note"] and "0 of 3 other providers" in d["note"]
    # panel a, b, c (weights 1/3): votes 1.94 2.0 2.06 | 2.134 2.2 2.266 | 2.328 2.4 2.472;
    # the central third (cumulative weight 1 .. 2 of 3) is 2.134, 2.2, 2.266 -> 2.2
    today = fixing(build.con, 3)
    assert today["value"] == pytest.approx(2.2)
    assert (today["panel"], today["flagged"]) == (3, 1)
    # day 2, with d at 2.6 in the panel: 12 votes of 1/4; cumulative 1 .. 2 holds
    # 2.2, 2.266, 2.328, 2.4 (each 1/4) -> (2.2 + 2.266 + 2.328 + 2.4) / 4 = 2.2985
    assert fixing(build.con, 2)["value"] == pytest.approx(2.2985)


def test_a_jump_others_corroborate_passes(build: Builder) -> None:
    sources(build, "abcd")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    # d -30 %, and b, c cut 15 % and 12.5 % the same day: two others moved >= 10 % its way
    land(build, 3, {"a": 2.0, "b": 1.87, "c": 2.1, "d": 1.82})
    fix_index(build.con, now=at(3, 23))
    assert votes(build.con, 3)["d"]["passing"]
    assert fixing(build.con, 3)["panel"] == 4


def test_a_providers_own_outlier_is_kept_out_and_a_real_repricing_returns(
        build: Builder) -> None:
    sources(build, "abcd")
    for day in range(12):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    # days 12, 13, 14: a at 2.3 (+15 %: not a jump, <25 %)
    for day in (12, 13, 14):
        land(build, day, {"a": 2.3, "b": 2.2, "c": 2.4, "d": 2.6})
    fix_index(build.con, now=at(14, 23))
    # day 12: a's last 12 prints are 2.0: mean 2.0, sd 0 -> allowed 3 x max(0, 0.06) = 0.18;
    # |2.3 - 2.0| = 0.3 > 0.18: own outlier, kept out
    a = votes(build.con, 12)["a"]
    assert "own_outlier" in a["flags"] and not a["passing"]
    assert "allowed +-0.1800" in a["note"]
    # panel b, c, d at 2.2, 2.4, 2.6 (weights 1/3): central third 2.328, 2.4, 2.472 -> 2.4
    assert fixing(build.con, 12)["value"] == pytest.approx(2.4)
    # day 13: last 13 prints 12 x 2.0 + 2.3: mean 2.02308, sd 0.3 x sqrt(12/13 x 1/13) =
    # 0.07987; allowed 3 x 0.07987 = 0.2396 < 0.2769: still out (a rejected print stays in the
    # history). Day 14: 12 x 2.0 + 2 x 2.3: mean 2.04286, sd 0.3 x sqrt(12/14 x 2/14) =
    # 0.10498, allowed 0.3149 > 0.2571: the repricing passes on its third day
    assert not votes(build.con, 13)["a"]["passing"]
    assert votes(build.con, 14)["a"]["passing"]


def test_a_provider_missing_two_days_is_carried_forward(build: Builder) -> None:
    sources(build, "abcd")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    for day in (3, 4):  # d's source fails two nights
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4})
    land(build, 5, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    fix_index(build.con, now=at(5, 23))
    for day in (3, 4):
        d = votes(build.con, day)["d"]
        assert (d["fresh"], d["passing"], d["carried_from"]) == (False, True, D0 + timedelta(2))
        assert d["flags"] == ["carried"] and d["value"] == 2.6
        row = fixing(build.con, day)
        assert (row["panel"], row["fresh"], row["carried"]) == (4, 3, 1)
    # d keeps its day-2 vote (2.6, sd 0.078) while its attendance falls: day 4, it printed
    # on days 0-2 of 0-4, a, b, c on all five days
    w = weights([1.0, 1.0, 1.0, attendance([0, 1, 2], 4)])
    panel = [(2.0, 0.06, w[0]), (2.2, 0.066, w[1]), (2.4, 0.072, w[2]), (2.6, 0.078, w[3])]
    assert w[3] == pytest.approx(0.2080, abs=1e-4)  # from 0.25 on day 2
    assert fixing(build.con, 4)["value"] == pytest.approx(central_third(panel))
    assert fixing(build.con, 4)["value"] == pytest.approx(2.2779, abs=1e-4)
    assert votes(build.con, 5)["d"]["fresh"]


def test_a_provider_gone_four_days_is_no_longer_carried(build: Builder) -> None:
    sources(build, "abcd")
    for day in range(2):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    for day in range(2, 6):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4})
    fix_index(build.con, now=at(5, 23))
    assert "d" in votes(build.con, 4)  # day 1 + 3 days
    assert "d" not in votes(build.con, 5)


def test_a_panel_below_the_minimum_gives_no_index_with_its_reason(build: Builder) -> None:
    sources(build, "abc")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2})
    land(build, 3, {"a": 2.0, "b": 2.2, "c": 9.0})  # c new: passes, but alone with a, b ...
    land(build, 4, {"a": 2.0, "b": 2.2, "c": 15.0})  # ... then jumps +67 %, uncorroborated
    fix_index(build.con, now=at(4, 23))
    first = fixing(build.con, 0)
    assert first["value"] is None and first["withheld_reason"] == "panel 2 < minimum 3"
    assert fixing(build.con, 3)["value"] is not None  # a, b, c: three votes
    last = fixing(build.con, 4)
    assert last["value"] is None
    assert last["withheld_reason"] == "panel 2 < minimum 3; kept out: c (jump)"
    assert (last["panel"], last["flagged"]) == (2, 1)


def test_a_backfill_after_publication_writes_a_revision_and_the_fixing_stands(
        build: Builder) -> None:
    sources(build, "abcde")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4})
    fix_index(build.con, now=at(2, 23))
    published = fixing(build.con, 1)
    # 2.2 exactly: a, b, c with weights 1/3 (see the jump test)
    assert published["value"] == pytest.approx(2.2)
    # later, history lands for day 1: provider e's capture observed at day 1, 08:00
    build.capture("e", at(1, 8), [offer("e", "e-h100", GPU, 3.0)])
    result = check_revisions(build.con)
    assert D0 + timedelta(days=1) in result.checked
    after = fixing(build.con, 1)
    assert after == published  # the published fixing is never rewritten
    revisions = read_revisions(build.con, D0 + timedelta(days=1))
    main = revisions.filter(pl.col("fixing_id") == f"{D0 + timedelta(days=1)}|{GPU}{MAIN}")
    assert main.height == 1
    row = main.row(0, named=True)
    # with e at 3.0 on day 1: e printed on one of the series' two days, attendance
    # 1 / (1 + 2^(-1/30)) = 0.5058, weight 0.1975; a, b, c 0.2675 each. Cumulative 1 .. 2 of 3:
    # 2.134 (0.0700 of it), 2.2, 2.266, 2.328 (0.2675 each), 2.4 (0.1275) -> 2.27276
    w = weights([1.0, 1.0, 1.0, attendance([1], 1)])
    assert w[3] == pytest.approx(0.1975, abs=1e-4)
    expected = central_third([(2.0, 0.06, w[0]), (2.2, 0.066, w[1]), (2.4, 0.072, w[2]),
                              (3.0, 0.09, w[3])])
    assert expected == pytest.approx(2.27276, abs=1e-5)
    assert row["revision"] == 1 and row["value"] == pytest.approx(expected)
    assert "capture added: e" in row["reason"]
    # checking again finds nothing new; the next fix publishes forward only
    assert check_revisions(build.con).revisions == []
    land(build, 3, {"a": 2.0, "b": 2.2, "c": 2.4, "e": 3.0})
    fix_index(build.con, now=at(3, 23))
    assert fixing(build.con, 1) == published and fixing(build.con, 3)["panel"] == 4


def test_a_fixing_is_written_once(build: Builder) -> None:
    sources(build, "abc")
    for day in range(2):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4})
    first = fix_index(build.con, now=at(1, 23))
    assert first.fixed == [D0, D0 + timedelta(days=1)]
    before = read_fixings(build.con)
    again = fix_index(build.con, now=at(1, 23))
    assert again.fixed == [] and read_fixings(build.con).equals(before)
    with pytest.raises(ValueError, match="next day to fix is 2026-11-04"):
        fix_index(build.con, now=at(1, 23), since=D0)


def test_a_methodology_change_applies_forward_only(build: Builder) -> None:
    sources(build, "abcd")
    for day in range(3):
        land(build, day, {"a": 2.0, "b": 2.2, "c": 2.4, "d": 2.6})
    fix_index(build.con, now=at(1, 23))
    changed = replace(default_params(), method="median")
    with pytest.raises(IndexParamsChanged, match=r"still say version '1\.0'"):
        fix_index(build.con, now=at(2, 23), params=changed)
    fix_index(build.con, now=at(2, 23), params=replace(changed, version="1.1-test"))
    assert fixing(build.con, 1)["method_version"] == "1.0"
    day2 = fixing(build.con, 2)
    # median of 2.0, 2.2, 2.4, 2.6 = 2.3 under the new version, from its first day on
    assert day2["method_version"] == "1.1-test" and day2["value"] == pytest.approx(2.3)


def test_content_digests_cover_every_vote(build: Builder) -> None:
    sources(build, "abc")
    land(build, 0, {"a": 2.0, "b": 2.2, "c": 2.4})
    fix_index(build.con, now=at(0, 23))
    from warehouse.index.store import digest_of, document

    row = fixing(build.con, 0)
    vote_rows = list(votes(build.con, 0).values())
    doc = document(row, vote_rows, method_version=str(row["method_version"]),
                   params_digest=str(row["params_digest"]), as_of=row["as_of"])  # type: ignore[arg-type]
    assert digest_of(doc) == row["content_digest"]
    vote_rows[0] = {**vote_rows[0], "value": vote_rows[0]["value"] + 0.01}  # type: ignore[operator]
    assert digest_of(document(row, vote_rows, method_version=str(row["method_version"]),
                              params_digest=str(row["params_digest"]),
                              as_of=row["as_of"])) != row["content_digest"]  # type: ignore[arg-type]
