"""Ingest benchmark: parse -> validate -> append of one night's batch per source.

Each registered source's bundled example is inflated to a realistic night (Vast ~10k offers,
Azure ~50k meters, AWS ~20k GPU rows; others 2k rows), then timed stage by stage and end to end
through `warehouse.ingest.ingest` (archive + parse + validate + guard + append) into a fresh
warehouse. Target: >= 50k observations parsed, validated and appended in <= 1 s.

    python -m bench.ingest [--size small]
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import warehouse.append
from bench._common import best_of, header, size_arg, timed, verdict
from bench.inflate import DEFAULT_ROWS, REALISTIC_ROWS, inflater_for
from schemas.observation import ValidatedBatch, to_observations, validate
from scrapers.base import RawCapture, Source
from scrapers.registry import all_sources
from warehouse.append import ScrapeRecord, append_batch
from warehouse.connection import connect
from warehouse.ingest import ingest

TARGET_ROWS, TARGET_S = 50_000, 1.0


@dataclass(frozen=True, slots=True)
class StageTimes:
    source: str
    payload_mb: float
    rows: int  # observations (good + quarantined)
    good: int
    parse_s: float
    validate_s: float
    append_s: float
    end_to_end_s: float
    bare_append_s: float  # append without keeping the summary tables (for comparison)


def inflated_capture(source: Source, rows: int) -> RawCapture | None:
    example = source.example_capture(datetime(2026, 1, 1, tzinfo=UTC))
    inflate = inflater_for(source.name, example.content_type)
    if inflate is None:
        return None
    body = inflate(example.body, rows)
    return RawCapture(source.name, example.url, example.fetched_at, body, example.content_type)


def measure(source: Source, raw: RawCapture, workdir: Path, repeat: int) -> StageTimes:
    parse_s = best_of(lambda: source.parse(raw), repeat)
    parsed = source.parse(raw)

    def to_valid() -> ValidatedBatch:
        return validate(to_observations(parsed, raw, "bench"))

    validate_s = best_of(to_valid, repeat)
    batch = to_valid()

    def append_once() -> None:
        con = connect(workdir / f"append-{uuid.uuid4().hex}.duckdb")
        try:
            record = ScrapeRecord(run_id=uuid.uuid4().hex, source=source.name,
                                  started_at=datetime.now(UTC), status="success",
                                  capture_id=raw.capture_id, rows_parsed=parsed.height,
                                  rows_stored=batch.good.height)
            _, seconds = timed(lambda: append_batch(con, record, good=batch.good,
                                                    quarantined=batch.quarantined))
        finally:
            con.close()
        times.append(seconds)

    times: list[float] = []
    for _ in range(repeat + 1):
        append_once()
    append_s = sorted(times[1:])[len(times[1:]) // 2]
    # The same append without the summary tables' upkeep: what the fast views cost per night.
    times = []
    with mock.patch.object(warehouse.append, "after_append", lambda *a, **k: None):
        for _ in range(repeat + 1):
            append_once()
    bare_append_s = sorted(times[1:])[len(times[1:]) // 2]

    e2e: list[float] = []
    for _ in range(repeat + 1):
        con = connect(workdir / f"e2e-{uuid.uuid4().hex}.duckdb")
        try:
            archive_root = workdir / f"archive-{uuid.uuid4().hex}"
            outcome, seconds = timed(lambda: ingest(con, source, raw,  # noqa: B023
                                                    run_id=uuid.uuid4().hex,
                                                    archive_root=archive_root))  # noqa: B023
        finally:
            con.close()
        if outcome.status != "success":
            raise RuntimeError(f"{source.name}: ingest ended {outcome.status}: {outcome.error}")
        e2e.append(seconds)
    end_to_end_s = sorted(e2e[1:])[len(e2e[1:]) // 2]
    rows = batch.good.height + batch.quarantined.height
    return StageTimes(source.name, len(raw.body) / 1e6, rows, batch.good.height, parse_s,
                      validate_s, append_s, end_to_end_s, bare_append_s)


def _rate(rows: int, seconds: float) -> str:
    return f"{rows / seconds / 1000:8.0f}k/s" if seconds > 0 else "      -  "


def main(argv: list[str] | None = None) -> int:
    args = size_arg(__doc__.splitlines()[0]).parse_args(argv)
    small = args.size == "small"
    repeat = 1 if small else 3
    header("ingest: parse -> validate -> append, one night per source")
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-ingest-"))
    results: list[StageTimes] = []
    try:
        for source in all_sources().values():
            rows = REALISTIC_ROWS.get(source.name, DEFAULT_ROWS)
            try:
                raw = inflated_capture(source, rows // 20 if small else rows)
                if raw is None:
                    print(f"   {source.name}: no inflater for its format ({source.kind}), "
                          "skipped")
                    continue
                results.append(measure(source, raw, workdir, repeat))
            except (ValueError, RuntimeError) as exc:  # a generic inflater that does not fit
                print(f"   {source.name}: skipped ({str(exc)[:100]})")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"   {'source':<22}{'MB':>6}{'rows':>8}{'parse':>12}{'validate':>12}{'append':>12}"
          f"{'end-to-end':>12}")
    for r in results:
        print(f"   {r.source:<22}{r.payload_mb:6.1f}{r.rows:8d}{_rate(r.rows, r.parse_s):>12}"
              f"{_rate(r.rows, r.validate_s):>12}{_rate(r.good, r.append_s):>12}"
              f"{_rate(r.rows, r.end_to_end_s):>12}")
    total_rows = sum(r.rows for r in results)
    total_s = sum(r.end_to_end_s for r in results)
    stages = {name: sum(getattr(r, f"{name}_s") for r in results)
              for name in ("parse", "validate", "append")}
    bare = sum(r.bare_append_s for r in results)
    print(f"   of the append, keeping the summary tables (migration 004) takes "
          f"{stages['append'] - bare:.3f} s; observations + run rows alone {bare:.3f} s")
    print(f"   night: {total_rows} observations from {len(results)} sources in {total_s:.3f} s "
          f"end to end ({', '.join(f'{k} {v:.3f} s' for k, v in stages.items())})")
    if total_rows:
        per_target = TARGET_ROWS * total_s / total_rows
        print(f"   {verdict(per_target <= TARGET_S)} {TARGET_ROWS} observations parsed+validated+"
              f"appended in {per_target:.3f} s (target <= {TARGET_S} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
