"""`backfill skypilot --git`: a catalog clone built here, commit by commit, with set dates."""

from __future__ import annotations

import os
import subprocess
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flows.backfill import backfill_skypilot_git
from scrapers.registry import get_source
from scrapers.skypilot_git import catalog_states
from warehouse.connection import open_warehouse

SOURCE = get_source("skypilot")
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice"
# Our own rows in the catalog's v5 format (values made up for the test).
LAMBDA_V1 = f"{HEADER}\ngpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,\n" \
            "gpu_1x_a10,A10,1.0,30.0,200.0,0.75,us-east-1,\n"
# Same prices but the columns in another order, then one price moved.
LAMBDA_V2 = "Region,InstanceType,Price,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB," \
            "SpotPrice\nus-east-1,gpu_1x_h100_pcie,2.29,H100,1.0,26.0,200.0,\n" \
            "us-east-1,gpu_1x_a10,0.75,A10,1.0,30.0,200.0,\n"
RUNPOD_V1 = f"{HEADER}\n1x_RTX4090_SECURE,RTX4090,1.0,6.0,41.0,0.69,US,\n"
# A later schema version with an extra column, read by header.
RUNPOD_V6 = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region," \
            "SpotPrice,Generation\n1x_RTX4090_SECURE,RTX4090,1.0,6.0,41.0,0.59,US,,ada\n"


def commit(repo: Path, when: str, files: dict[str, str | None], message: str) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            subprocess.run(["git", "-C", str(repo), "rm", "-q", path], check=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        subprocess.run(["git", "-C", str(repo), "add", path], check=True)
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
           "GIT_AUTHOR_NAME": "bot", "GIT_AUTHOR_EMAIL": "bot@example.com",
           "GIT_COMMITTER_NAME": "bot", "GIT_COMMITTER_EMAIL": "bot@example.com"}
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", message],
                   check=True, env=env)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    repo = tmp_path / "skypilot-catalog"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commit(repo, "2024-01-05T07:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V1,
                                          "catalogs/v5/runpod/vms.csv": RUNPOD_V1}, "first")
    commit(repo, "2024-01-12T07:00:00Z", {"README.md": "catalog\n"}, "docs only")
    commit(repo, "2024-02-02T14:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V2}, "lambda")
    commit(repo, "2024-03-01T21:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V1}, "revert")
    commit(repo, "2024-03-10T00:00:00Z", {"catalogs/v6/runpod/vms.csv": RUNPOD_V6}, "v6 added")
    commit(repo, "2024-04-01T00:00:00Z", {"catalogs/v5/runpod/vms.csv": None}, "v5 dropped")
    return repo


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_each_catalog_state_lands_at_its_commit_time(catalog: Path,
                                                     warehouse_path: Path) -> None:
    archive_root = warehouse_path.parent / "raw"
    with open_warehouse(warehouse_path) as con:
        results = backfill_skypilot_git(con, catalog, SOURCE, archive_root=archive_root,
                                        clouds=("lambda", "runpod"))
        assert [(r.observed_at, r.status) for r in results] == [
            (at("2024-01-05T07:00:00"), "success"), (at("2024-02-02T14:00:00"), "success"),
            (at("2024-03-01T21:00:00"), "unchanged"), (at("2024-04-01T00:00:00"), "success")]
        h100 = ("SELECT price_usd_per_hour FROM observations_at(TIMESTAMPTZ '{}') "
                "WHERE offering = 'gpu_1x_h100_pcie'")
        assert con.execute(h100.format("2024-01-31")).fetchone()[0] == pytest.approx(2.49)
        assert con.execute(h100.format("2024-02-20")).fetchone()[0] == pytest.approx(2.29)
        assert con.execute(h100.format("2024-03-05")).fetchone()[0] == pytest.approx(2.49)
        rtx = ("SELECT price_usd_per_hour FROM observations_at(TIMESTAMPTZ '2024-04-02') "
               "WHERE offering = '1x_RTX4090_SECURE'")
        assert con.execute(rtx).fetchone()[0] == pytest.approx(0.59)  # the v6 file, by header
        moves = con.execute("SELECT changed_on, old_price_usd_per_hour, new_price_usd_per_hour "
                            "FROM price_change WHERE provider = 'lambda' ORDER BY 1").fetchall()
        # (the revert of 2024-03-01 re-confirms a stored capture, which stores no new rows:
        # price_change dates the move back at the next stored capture, 2024-04-01)
        assert (str(moves[0][0]), *moves[0][1:]) == ("2024-02-02", 2.49, 2.29)
        stored = con.execute("SELECT count(*) FROM observation").fetchone()
        again = backfill_skypilot_git(con, catalog, SOURCE, archive_root=archive_root,
                                      clouds=("lambda", "runpod"))
        assert {r.status for r in again} == {"already stored"}
        assert con.execute("SELECT count(*) FROM observation").fetchone() == stored


def test_since_until_filter_by_commit_date(catalog: Path, warehouse_path: Path) -> None:
    from datetime import date

    with open_warehouse(warehouse_path) as con:
        results = backfill_skypilot_git(con, catalog, SOURCE, archive_root=warehouse_path.parent,
                                        clouds=("lambda",), since=date(2024, 2, 1),
                                        until=date(2024, 2, 28))
    assert [r.key for r in results] and len(results) == 1


def test_listing_streams_whatever_the_number_of_commits(tmp_path: Path) -> None:
    def peak_for(commits: int) -> int:
        repo = tmp_path / f"repo{commits}"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], check=True,
                       input=fast_import(commits).encode())
        subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "master"], check=True)
        tracemalloc.start()
        count = sum(1 for _ in catalog_states(repo, ("lambda",)))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert count == commits
        return peak

    small, large = peak_for(20), peak_for(2000)
    assert large < small * 2 + 64_000  # flat: 100x the commits, not 100x the memory


def fast_import(commits: int) -> str:
    """A history of `commits` commits, each changing lambda's price (git fast-import stream)."""
    parts = []
    for i in range(commits):
        text = f"{HEADER}\ngpu_1x_a10,A10,1.0,30.0,200.0,{0.5 + i / 10000:.4f},us-east-1,\n"
        data = text.encode()
        parts.append(f"commit refs/heads/master\ncommitter bot <b@x> {1700000000 + i * 25200}"
                     f" +0000\ndata 3\nbot\n"  # later commits follow the branch
                     f"M 100644 inline catalogs/v5/lambda/vms.csv\ndata {len(data)}\n{text}\n")
    return "".join(parts)
