"""The index on the demo warehouse (`backfill examples` + `refresh --offline`, which fixes the
index): every fixing reproduces from the archived raw captures (`make test` runs this), an
altered capture gives a precise difference, and the index, `market`, the board and its files
show one number."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from reports.board import build_board
from reports.index.files import (
    DIGESTS,
    FORMER_FILES,
    MANIFEST,
    month_files,
    write_index_files,
)
from scrapers.registry import all_sources
from tests.reports.test_demo_history import demo_warehouse
from warehouse.connection import connect_read_only
from warehouse.frames import sql_frame
from warehouse.index.reproduce import reproduce_days
from warehouse.index.store import fixed_days, read_fixings

runner = CliRunner()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo-index") / "gpu_prices.duckdb"
    demo_warehouse(path, datetime.now(UTC))
    return path


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout


def test_the_refresh_fixed_every_day_of_the_demo(demo: Path) -> None:
    con = connect_read_only(demo)
    try:
        days = fixed_days(con)
        today = datetime.now(UTC).date()
        assert days[-1] == today and len(days) == (today - days[0]).days + 1
        fixings = read_fixings(con, days=[today], kind="on_demand", segment="all", geo="all")
    finally:
        con.close()
    published = fixings.filter(pl.col("value").is_not_null())
    assert published.height >= 10
    assert (published["band_low"] <= published["value"]).all()
    assert (published["value"] <= published["band_high"]).all()
    withheld = fixings.filter(pl.col("value").is_null())
    assert withheld["withheld_reason"].str.starts_with("panel ").all()


def test_every_fixing_of_the_demo_reproduces_from_its_captures(demo: Path) -> None:
    con = connect_read_only(demo)
    try:
        results = reproduce_days(con, all_sources(), demo.parent / "raw", fixed_days(con))
    finally:
        con.close()
    assert results and all(r.ok for r in results), [r.differences for r in results]
    assert sum(r.compared for r in results) == sum(r.same for r in results) > 100


def test_reproduce_prints_same(demo: Path) -> None:
    today = datetime.now(UTC).date().isoformat()
    code, out = cli("reproduce", "index", "H100", today, "-w", str(demo))
    assert code == 0, out
    assert out.startswith(f"SAME  H100 SXM, H100 PCIe, H100 NVL {today} (fixed as of ")


def _alter(copy: Path, source: str, old: bytes, new: bytes) -> str:
    con = duckdb.connect(str(copy), read_only=True)
    try:
        capture_id, relative = con.execute(
            "SELECT r.capture_id, r.archive_path FROM raw_capture r JOIN scrape_run s "
            "USING (capture_id) WHERE s.source = ? AND s.status = 'success' "
            "ORDER BY s.observed_at DESC LIMIT 1", [source]).fetchone()  # type: ignore[misc]
    finally:
        con.close()
    path = copy.parent / "raw" / relative
    body = gzip.decompress(path.read_bytes())
    assert body.count(old) >= 1
    path.write_bytes(gzip.compress(body.replace(old, new, 1)))
    return str(capture_id)


def test_an_altered_capture_gives_a_precise_difference(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "gpu_prices.duckdb"
    shutil.copy(demo, copy)
    shutil.copytree(demo.parent / "raw", tmp_path / "raw")
    # lambda's API: gpu_8x_h100_sxm5 at 2392 cents/hour (8 GPUs: $2.99) -> 2792 ($3.49)
    capture = _alter(copy, "lambda", b'"price_cents_per_hour": 2392',
                     b'"price_cents_per_hour": 2792')
    today = datetime.now(UTC).date()
    code, out = cli("reproduce", "index", "H100 SXM", today.isoformat(), "-w", str(copy))
    assert code == 1
    assert out.startswith(f"DIFFERENT  H100 SXM {today}")
    assert f"capture lambda {capture[:12]}: archived payload altered" in out
    main = f"{today}|H100 SXM|on_demand|0|all|all"
    # lambda's print: the median of its two H100 SXM offers, (2.99 + 3.09) / 2 = 3.04 before,
    # (3.49 + 3.09) / 2 = 3.29 after
    assert f"{main}: vote lambda value published 3.04, recomputed 3.29" in out
    assert re.search(rf"{re.escape(main)}: value published [\d.]+, recomputed [\d.]+", out)
    untouched = f"{today}|H100 SXM|on_demand|0|marketplace|all"
    assert untouched not in out  # runpod alone there: nothing of lambda's changes it


def test_index_market_and_board_show_one_number(demo: Path, tmp_path: Path) -> None:
    code, out = cli("index", "--gpu", "H100 SXM", "-w", str(demo), "-f", "csv")
    assert code == 0
    index = float(next(csv.DictReader(io.StringIO(out)))["value"])
    code, out = cli("market", "--gpu", "H100 SXM", "--segment", "all", "-w", str(demo),
                    "-f", "csv")
    assert code == 0
    assert float(next(csv.DictReader(io.StringIO(out)))["market_usd_per_gpu_hour"]) == index
    con = connect_read_only(demo)
    try:
        now = datetime.now(UTC)
        week = f"{now.isocalendar().year}-W{now.isocalendar().week:02d}"
        build_board(con, tmp_path, week=week, as_of=now)
    finally:
        con.close()
    tile = re.search(r'<article class="tile" data-gpu="H100 SXM" data-usd="([^"]+)">',
                     (tmp_path / "index.html").read_text(encoding="utf-8"))
    assert tile and float(tile.group(1)) == index
    page = (tmp_path / "gpu-index.html").read_text(encoding="utf-8")
    assert f"H100 SXM: ${index:,.4f} /GPU-h" in page
    # the files beside the board: digests as listed, the same fixings as the warehouse
    listed = dict(reversed(line.split("  ")) for line in
                  (tmp_path / "gpu-index.sha256").read_text().splitlines())
    for name, digest in listed.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest
    document = json.loads((tmp_path / MANIFEST).read_text())
    parquet = pl.concat([pl.read_parquet(tmp_path / month_files(m["month"])[1])
                         for m in document["months"]])
    fixings_json = [row for m in document["months"] for row in json.loads(
        (tmp_path / month_files(m["month"])[0]).read_text())["fixings"]]
    assert len(fixings_json) == parquet.height == sum(m["fixings"] for m in document["months"])
    main = parquet.filter((pl.col("gpu_model") == "H100 SXM") & (pl.col("day") == now.date())
                          & (pl.col("kind") == "on_demand") & (pl.col("segment") == "all")
                          & (pl.col("geo") == "all"))
    assert main["value"].to_list() == [index]
    assert document["methods"][0]["version"] == "1.0"


def test_published_days_are_not_fixed_again(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "gpu_prices.duckdb"
    shutil.copy(demo, copy)
    code, out = cli("index", "fix", "-w", str(copy))
    assert code == 0 and out.startswith("fixed 0 day(s) (none)")
    code, out = cli("index", "fix", "--since", str(date(2020, 1, 1)), "-w", str(copy))
    assert code == 2


def test_the_index_files_are_a_set_per_month_written_once(demo: Path, tmp_path: Path) -> None:
    # the demo's fixings, and copies of them 35 and 70 days earlier: three months or more
    copy = tmp_path / "gpu_prices.duckdb"
    shutil.copy(demo, copy)
    with duckdb.connect(str(copy)) as raw:
        for back in (35, 70):
            raw.execute(f"""
                INSERT INTO index_day SELECT * REPLACE (day - {back} AS day) FROM index_day
                WHERE day > (SELECT max(day) FROM index_day) - 35;
                INSERT INTO index_fixing SELECT * REPLACE (day - {back} AS day,
                    fixing_id || '-{back}' AS fixing_id) FROM index_fixing
                WHERE day > (SELECT max(day) FROM index_fixing) - 35;
                INSERT INTO index_vote SELECT * REPLACE (day - {back} AS day,
                    fixing_id || '-{back}' AS fixing_id) FROM index_vote
                WHERE day > (SELECT max(day) FROM index_vote) - 35
                ORDER BY day DESC, fixing_id DESC, provider DESC""")  # stored out of order
    out = tmp_path / "board"
    out.mkdir()
    for name in FORMER_FILES:  # a board folder written before the month sets
        (out / name).write_bytes(b"PAR1 the fixings of an older day")
    con = connect_read_only(copy)
    try:
        every = read_fixings(con)
        votes = sql_frame(con, "SELECT * FROM index_vote ORDER BY day, fixing_id, provider")
        first = write_index_files(con, out)
        assert not [name for name in FORMER_FILES if (out / name).exists()]
        again = write_index_files(con, out)
        manifest = json.loads((out / MANIFEST).read_text())
        months = [m["month"] for m in manifest["months"]]
        # a month whose days' digest changed (here: as the manifest remembers it) and a month
        # whose file is gone are written again; the others are kept as they are
        manifest["months"][0]["days_digest"] = "0" * 64
        (out / MANIFEST).write_text(json.dumps(manifest))
        (out / month_files(months[-1])[2]).unlink()
        repaired = write_index_files(con, out)
    finally:
        con.close()
    assert first.months == first.months_written == len(months) >= 3
    assert first.fixings == every.height
    assert (again.months_written, {p.name for p in again.paths}) == (0, {MANIFEST, DIGESTS})
    assert repaired.months_written == 2
    written = {str(p.relative_to(out)) for p in repaired.paths}
    assert set(month_files(months[0])) | set(month_files(months[-1])) <= written
    assert not set(month_files(months[1])) & written
    parquet = pl.concat([pl.read_parquet(out / month_files(m)[1]) for m in months])
    assert parquet.equals(every)
    # every vote, by day, fixing and provider, however the table stores them
    assert pl.concat([pl.read_parquet(out / month_files(m)[2]) for m in months]).equals(votes)
    listed = dict(reversed(line.split("  ")) for line in
                  (out / DIGESTS).read_text().splitlines())
    assert len(listed) == 1 + 3 * len(months)
    for name, digest in listed.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("days_back", [0, 3, 4000])
def test_the_index_page_reads_what_it_shows_as_the_whole_record_gives_it(
        demo: Path, days_back: int) -> None:
    """page_fixings reads the main series and the last day alone (in USD); they must be the
    rows, in order, that filtering every fixing gives (the page was built from those)."""
    from datetime import timedelta

    from reports.board.index_page import page_fixings

    until = datetime.now(UTC).date() - timedelta(days=days_back)
    with connect_read_only(demo) as con:
        every = read_fixings(con, until=until)
        page = page_fixings(con, until, None)
        main, today, held = page.main, page.today, page.held
    assert held == []
    assert main.equals(every.filter((pl.col("kind") == "on_demand") & (pl.col("segment") == "all")
                                    & (pl.col("geo") == "all")))
    if every.height == 0:  # before the first fixing: the empty page
        assert today.height == 0
        return
    assert today.equals(every.filter(pl.col("day") == every["day"].max()))
    if days_back == 0:
        assert main.height and today["kind"].n_unique() > 1  # a real page, not two empty frames


def test_the_index_page_shows_the_last_year_and_says_where_the_rest_is(demo: Path,
                                                                    tmp_path: Path) -> None:
    """After more than SERIES_DAYS of fixings the page's series cover the last SERIES_DAYS
    days (the page stays the same size as the history grows) and a note points to the month
    files; the demo's two weeks show whole, without the note."""
    from datetime import timedelta

    from reports.board.index_page import SERIES_DAYS, index_page_context

    now = datetime.now(UTC)
    with connect_read_only(demo) as con:
        short = index_page_context(con, as_of=now, files=None)
    assert short["older_from"] is None and short["figures"]
    older = tmp_path / "older.duckdb"
    shutil.copy(demo, older)
    with duckdb.connect(str(older)) as con:  # the demo's fixings again, 400 days earlier
        con.execute("INSERT INTO index_fixing BY NAME SELECT * REPLACE (day - 400 AS day, "
                    "fixing_id || '-older' AS fixing_id) FROM index_fixing")
        first, last = con.execute("SELECT min(day), max(day) FROM index_fixing").fetchone()
    with connect_read_only(older) as con:
        page = index_page_context(con, as_of=now, files=None)
        week = f"{now.isocalendar().year}-W{now.isocalendar().week:02d}"
        build_board(con, tmp_path / "board", week=week, as_of=now)
    html = (tmp_path / "board" / "gpu-index.html").read_text(encoding="utf-8")
    assert page["older_from"] == first.isoformat()
    start = last - timedelta(days=SERIES_DAYS - 1)
    for figure in page["figures"]:
        days = [row[0].text for row in figure["table"].rows]
        assert days and min(days) >= start.isoformat(), figure["gpu"]
        assert figure["days"] == len(days)
    assert f"every day since the first fixing ({first.isoformat()})" in html


def _fixings_table_as_first_written(fixings: pl.DataFrame) -> pl.DataFrame:
    """`index`'s table as polars made it before it became one SQL statement."""
    kind = (pl.when(pl.col("kind") == "reserved")
            .then(pl.format("reserved {}m", pl.col("term_months"))).otherwise(pl.col("kind")))
    return fixings.select(
        "day", pl.col("gpu_model").alias("gpu"), kind.alias("kind"), "segment", "geo",
        pl.col("value").round(4).alias("index"),
        pl.when(pl.col("value").is_not_null())
        .then(pl.format("{}-{}", pl.col("band_low").round(4), pl.col("band_high").round(4)))
        .alias("band"),
        "panel", "carried", "flagged", pl.col("withheld_reason").alias("no index because"),
        pl.col("method_version").alias("method"))


def test_the_fixings_table_is_the_presentation_as_first_written(demo: Path) -> None:
    from reports.index.tables import FIXINGS_TABLE, fixings_table
    from warehouse.index.store import fixings_query

    con = connect_read_only(demo)
    try:
        every = read_fixings(con)  # every day, kind, segment and geography
        sql, params = fixings_query()
        stored = pl.DataFrame(con.sql(FIXINGS_TABLE.format(fixings=sql), params=params))
    finally:
        con.close()
    expected = _fixings_table_as_first_written(every)
    assert every.height > 500 and every["band_low"].null_count() < every.height
    assert fixings_table(every).equals(expected)  # a frame (an indicative day, --currency)
    assert stored.equals(expected)  # the stored fixings, as `index` prints them
    # ties of the 4th decimal and odd values print as polars printed them
    values = pl.DataFrame({"value": [81.01685, 95.14745, 0.00005, 2.0, 1e-06, None],
                           "band_low": [81.01685, 0.1, 1.0, 2.0, 1e-06, 1.0],
                           "band_high": [95.14745, 0.25, None, 2.5, 123.45675, 2.0]})
    odd = every.head(6).with_columns(values)
    assert fixings_table(odd).equals(_fixings_table_as_first_written(odd))


def _market_view_as_first_written(con: duckdb.DuckDBPyConnection, day: date,
                                  gpu_models: list[str] | None, segment: str | None
                                  ) -> tuple[pl.DataFrame, bool]:
    """The market table as polars joined it before it became one SQL statement."""
    from warehouse.index.read import _day_fixings
    from warehouse.semantic_market import stored_market

    market = "market_usd_per_gpu_hour"
    now = datetime.now(UTC)
    stats, _ = stored_market(con, day, gpu_models=gpu_models, segment=segment, now=now)
    fixings, _, published = _day_fixings(con, day, now=now, gpu_models=gpu_models,
                                         kind="on_demand", segment=segment, geo="all")
    index = fixings.filter(pl.col("term_months") == 0).select(
        "gpu_model", "segment", pl.col("value").alias("index_usd"),
        pl.col("withheld_reason").alias("index_reason"),
        pl.col("band_low").alias("band_low_usd_per_gpu_hour"),
        pl.col("band_high").alias("band_high_usd_per_gpu_hour"), "panel",
        pl.col("fresh").alias("panel_fresh"), pl.col("carried").alias("panel_carried"),
        "method_version", "fixing_id")
    joined = stats.drop(market, "withheld_reason").join(
        index, on=["gpu_model", "segment"], how="full", coalesce=True)
    no_vote = "no index: no fresh print of it (every offer carried forward or left out)"
    view = joined.with_columns(
        pl.col("index_usd").alias(market),
        pl.when(pl.col("fixing_id").is_null()).then(pl.lit(no_vote))
        .otherwise(pl.col("index_reason")).alias("withheld_reason"),
        pl.lit(day).alias("day"),
        pl.lit("published" if published else "indicative").alias("index_status"),
    ).drop("index_usd", "index_reason")
    front = ["day", "gpu_model", "segment", market, "band_low_usd_per_gpu_hour",
             "band_high_usd_per_gpu_hour", "panel", "median_usd_per_gpu_hour",
             "min_usd_per_gpu_hour", "p25_usd_per_gpu_hour", "p75_usd_per_gpu_hour",
             "max_usd_per_gpu_hour", "providers", "offers"]
    view = view.select(*front, *[c for c in view.columns if c not in front])
    return view.sort("gpu_model", pl.col("segment") != "all", "segment"), published


@pytest.mark.parametrize("asked", [
    {}, {"gpu_models": ["H100 SXM", "H100 PCIe", "H100 NVL"], "segment": None},
    {"segment": None}, {"segment": "neocloud", "gpu_models": ["A100 80GB"]},
    {"gpu_models": ["B300"]},
])
def test_the_market_view_is_the_join_as_first_written(demo: Path,
                                                      asked: dict[str, object]) -> None:
    from warehouse.index.read import market_view

    con = connect_read_only(demo)
    try:
        days = fixed_days(con)
        # a fixed day (stored, read by SQL alone), a day not fixed yet (computed, indicative)
        # and one before any price (computed from nothing)
        for day in (days[-1], days[0], days[-1].replace(year=days[-1].year + 1),
                    date(2020, 1, 1)):
            ours, published = market_view(con, day, now=datetime.now(UTC), **asked)  # type: ignore[arg-type]
            expected, was = _market_view_as_first_written(
                con, day, asked.get("gpu_models"), asked.get("segment", "all"))  # type: ignore[arg-type]
            assert (published, ours.columns, ours.dtypes) == (was, expected.columns,
                                                             expected.dtypes)
            assert ours.equals(expected), day
            if not asked and day == days[-1]:
                assert ours.height >= 20 and published  # rows are compared, not empty frames
    finally:
        con.close()
