"""Build the warehouse the index backtest runs on (docs/index-methodology.md, "Backtest"), from
every dated real capture the project can backfill, each landed at its own time:

- Wayback captures of provider pages, and dated documentation pages (captures/<provider>/):
  lambda-page, runpod-page, coreweave, crusoe, datacrunch, digitalocean, fluidstack, nebius,
  paperspace, voltagepark, Hugging Face spaces/jobs/endpoints, plus dated API bodies
  (vastai, runpod, modal, gcp, azure, voltagepark-api, ec2instances, runpod-serverless);
- the SkyPilot catalog snapshots (history/skypilot, `backfill skypilot`);
- the OpenComputePrices archives (captures/opencomputeprices, `backfill opencomputeprices`);
- the demo (`backfill examples`, then each source's bundled example today).

Undated fixtures are left out. Nothing is fixed: the backtest replays the history itself.

    python -m bench.index_history SHARED_DIR WAREHOUSE
    gpuprices index backtest --since 2023-01-01 -w WAREHOUSE
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from pathlib import Path

from contract import RawCapture
from contract.settings import load_settings
from flows.backfill import (
    Pending,
    backfill_captures,
    backfill_ocp_archives,
    backfill_skypilot,
    replay_examples,
)
from flows.refresh_work import run_refresh
from scrapers.base import _content_type
from scrapers.registry import all_sources
from warehouse.connection import open_warehouse

# (file under captures/, source, when it was captured: from the name, else as given)
DATED: tuple[tuple[str, str, str | None], ...] = (
    ("lambda-page/lambda-page_wayback-20230909194011_*", "lambda-page", None),
    ("lambda-page/lambda-page_wayback-20241103180910_*", "lambda-page", None),
    ("runpod-page/runpod-page_wayback-20230929070808_*", "runpod-page", None),
    ("coreweave/coreweave_wayback-20230921194906_*", "coreweave", None),
    ("crusoe/crusoe_wayback-20250521220413_*", "crusoe", None),
    ("datacrunch/datacrunch_wayback-20250808081801_*", "datacrunch", None),
    ("digitalocean/digitalocean_wayback-20250707231929_*", "digitalocean", None),
    ("fluidstack/fluidstack_wayback-20230930024119_*", "fluidstack", None),
    ("fluidstack/fluidstack_wayback-20250109013724_*", "fluidstack", None),
    ("nebius/nebius_wayback-20241115043809_*", "nebius", None),
    ("paperspace/paperspace_wayback-20240123092147_*", "paperspace", None),
    ("voltagepark/voltagepark_wayback-20250712040631_*", "voltagepark", None),
    ("voltagepark/voltagepark_live-2026-08-22_*", "voltagepark-api", "2026-08-22T12:00:00"),
    ("huggingface/spaces-gpus_2023-03-01_*", "huggingface-spaces", "2023-03-01T12:00:00"),
    ("huggingface/spaces-gpus_2025-12-16_*", "huggingface-spaces", "2025-12-16T12:00:00"),
    ("huggingface/spaces-gpus_2026-07-21.md", "huggingface-spaces", "2026-07-21T12:00:00"),
    ("huggingface/jobs-pricing_2026-06-04_*", "huggingface-docs", "2026-06-04T12:00:00"),
    ("huggingface/jobs-pricing_2026-08-21.md", "huggingface-docs", "2026-08-21T12:00:00"),
    ("huggingface/huggingface_docs-src-20241121_*.mdx", "huggingface-endpoints",
     "2024-11-21T12:00:00"),
    ("runpod-page/docs_serverless-gpu-pricing-table_2026-06-08.mdx", "runpod-serverless",
     "2026-06-08T12:00:00"),
    ("vastai/vastai_search_offers_raw_2025-01-17.json", "vastai", "2025-01-17T12:00:00"),
    ("runpod-graphql/runpod_gpuTypes_2025-06-21T2318Z.json", "runpod", "2025-06-21T23:18:00"),
    ("modal/modal_pricing_rendered_2025-06-12.html", "modal", "2025-06-12T12:00:00"),
    ("gcp-billing-api/gcp_billing_catalog_compute_gpu_skus_2025-06-17.json", "gcp",
     "2025-06-17T12:00:00"),
    ("azure/azure_retail_prices_unfiltered_items_2026-08-22.json", "azure",
     "2026-08-22T12:00:00"),
    ("aws/ec2instances_info_instances_cn_gpu_subset_2026-01-21.json", "ec2instances",
     "2026-01-21T12:00:00"),
)
_WAYBACK = re.compile(r"wayback-(\d{14})")


def _when(path: Path, given: str | None) -> datetime:
    if given:
        return datetime.fromisoformat(given).replace(tzinfo=UTC)
    match = _WAYBACK.search(path.name)
    assert match, path
    return datetime.strptime(match.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def build(shared: Path, warehouse: Path) -> None:
    sources = all_sources()
    settings = load_settings(warehouse=str(warehouse))
    captures = shared / "captures"
    with open_warehouse(warehouse) as con:
        for pattern, name, given in DATED:
            for path in sorted(captures.glob(pattern)):
                if path.name.endswith(".expected.csv"):
                    continue
                source, at = sources[name], _when(path, given)
                raw = RawCapture(source=name, url=source.url, fetched_at=at,
                                 body=path.read_bytes(), content_type=_content_type(path))
                [result] = backfill_captures(con, source, [Pending(
                    run_id=f"index-history-{name}-{at:%Y%m%d%H%M%S}-{raw.capture_id[:12]}",
                    key=path.name, observed_at=at, note=f"index backtest history: {path.name}",
                    load=lambda raw=raw: (raw, False))], archive_root=settings.archive_root)
                print(f"{at:%Y-%m-%d} {name:22} {result.status:8} {result.rows_stored:4} rows"
                      f"  {path.name[:60]}")
        for snapshot in backfill_skypilot(con, shared / "history" / "skypilot",
                                          archive_root=settings.archive_root):
            print(f"{snapshot.day} skypilot-catalog       {snapshot.status:8} "
                  f"{snapshot.rows_stored:4} rows")
        archives = sorted(str(p) for p in (captures / "opencomputeprices").glob("*.csv"))
        for result in backfill_ocp_archives(con, archives, sources["opencomputeprices"],
                                            archive_root=settings.archive_root):
            print(f"{result.key} opencomputeprices      {result.status:8} "
                  f"{result.rows_stored:4} rows")
        replay_examples(con, sources, archive_root=settings.archive_root,
                        today=datetime.now(UTC).date())
    # the bundled examples as today's captures (named sources: no fixing is published)
    run_refresh(settings, source_names=list(sources), offline=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shared", type=Path, help="the shared folder (captures/, history/)")
    parser.add_argument("warehouse", type=Path, help="the warehouse file to build")
    args = parser.parse_args()
    build(args.shared, args.warehouse)


if __name__ == "__main__":
    main()
