"""The golden test: every page in ../shared/captures with a hand-made answer key parses to it.

One test, no per-file code. For each `<capture>.expected.csv` (format in REAL_PAGES.md) the
capture is read by the one source of its provider that accepts it, as of the date in its file
name, through `warehouse.ingest.prepare` (parse -> observations -> validation -> screens: what
a refresh would store), and the stored rows must be exactly the key:

- every key row not marked "optional" is stored, and every stored row is a key row;
- rows match on the canonical GPU (the key's `gpu_as_written` and memory, resolved by the same
  catalog as the parser's row; where the key's name names no form factor, as in a plain
  "H100", any card of that family with the same memory), GPU count, pricing kind, the
  whole-offering price, the per-GPU price (to the key's 4 decimals), the per-GPU memory when
  both give it, and the region when the key names one (as slugs: "North America" is
  north-america); a key that leaves the count blank gives one per-GPU rate for any count;
- a row is optional when its note says "optional" (anywhere in the note);
- the key's vocabulary has no word for some of our pricing kinds, so they are compared under
  the word the key uses for them: a `gpu_only` on-demand row is the key's `gpu_only`;
  `flex` (DWS Flex-start) is keyed as `reserved`, `dynamic` (a daily-changing price) as
  `on_demand` (the keys' notes say so, and mark those rows optional).

Which source reads a file: the directory names a source (its provider is used) or a provider;
of that provider's direct sources exactly one may accept the capture (a parser that does not
know a layout must refuse it with a ParseError, never read it as something else).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from contract import RawCapture
from schemas.gpus import UNKNOWN_GPU, load_catalog, normalise_gpu_name, spec_of
from scrapers.base import Source
from scrapers.registry import all_sources
from tests.conftest import CAPTURES
from warehouse.ingest import prepare

pytestmark = pytest.mark.conformance

KEYS = sorted(CAPTURES.glob("*/*.expected.csv")) if CAPTURES.exists() else []
KEY_PRICING = {"flex": "reserved", "dynamic": "on_demand"}  # our kind -> the key's word
_DATE = re.compile(r"(?<!\d)(\d{14}|\d{8}|\d{4}-\d{2}-\d{2}|\d{4}-\d{2}|20\d\d)(?!\d)")
_HINT = re.compile(r"(SXM|PCIE|NVL)", re.I)
_FORM_FACTOR = re.compile(r"\b(?:SXM\d*|PCIE\d*|NVL\d*|HGX|HBM\d*E?|OAM)\b", re.I)
_MEMORY = re.compile(r"\d+\s*GB?\b", re.I)
_CONTENT_TYPES = {".json": "application/json", ".csv": "text/csv", ".md": "text/markdown",
                  ".mdx": "text/markdown", ".html": "text/html"}


@dataclass(frozen=True)
class KeyRow:
    line: int
    gpu_as_written: str
    gpu_model: str
    gpu_models: frozenset[str]  # what the key's name may be: gpu_model, or its family's cards
    gpu_count: float | None  # blank in a key: one per-GPU rate for any count
    memory_gb: float | None
    pricing: str
    price_whole: float | None
    price_per_gpu: Decimal
    region: str
    optional: bool
    note: str

    def describe(self) -> str:
        return (f"key line {self.line}: {self.gpu_as_written!r} x{self.gpu_count or 'any'} "
                f"{self.pricing} ${self.price_whole or '-'} (${self.price_per_gpu}/GPU-h)"
                f"{' in ' + self.region if self.region else ''} [{self.note[:70]}]")


def capture_date(name: str) -> datetime:
    """The capture's day from its file name (wayback-20241103180910, _2026-06-04, live-2026-08)."""
    match = _DATE.search(name)
    assert match, f"{name}: no date in the file name"
    text = match.group(1).replace("-", "")
    year, month, day = int(text[:4]), int(text[4:6] or 1), int(text[6:8] or 1)
    return datetime(year, month, day, 12, tzinfo=UTC)


def _resolve(name: str, memory: float | None) -> str:
    """The catalog model a key's free-text name names: the whole name, else its longest run of
    words that resolves ("OCI - Compute - GPU - MI300X", "NVIDIA L40S with Intel CPU")."""
    hint_match = _HINT.search(name)
    hint = hint_match.group(1).upper() if hint_match else None
    words = re.sub(r"[(),|._/]|\s-\s", " ", name).split()
    runs = [name] + [" ".join(words[i:i + n]) for n in range(len(words), 0, -1)
                     for i in range(len(words) - n + 1)]
    for text in runs:
        model = normalise_gpu_name(text, memory, hint)
        if model != UNKNOWN_GPU:
            return model
    return UNKNOWN_GPU


def _accepted_models(name: str, gpu_model: str, memory: float | None) -> frozenset[str]:
    """gpu_model; where the name names no form factor, any card of its family with the same
    memory; where neither the name nor the key gives memory either, any card of the family."""
    spec = spec_of(gpu_model)
    if spec is None or _FORM_FACTOR.search(name):
        return frozenset({gpu_model})
    any_memory = memory is None and not _MEMORY.search(name)
    return frozenset(s.gpu_model for s in load_catalog() if s.family == spec.family
                     and (any_memory or abs(s.memory_gb - spec.memory_gb) < 1))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def read_key(path: Path) -> list[KeyRow]:
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            memory = float(row["gpu_memory_gb_per_gpu"]) if row["gpu_memory_gb_per_gpu"] \
                else None
            gpu_model = _resolve(row["gpu_as_written"], memory)
            rows.append(KeyRow(
                line=line, gpu_as_written=row["gpu_as_written"], gpu_model=gpu_model,
                gpu_models=_accepted_models(row["gpu_as_written"], gpu_model, memory),
                gpu_count=_number(row["gpu_count"]), memory_gb=memory, pricing=row["pricing"],
                price_whole=_number(row["price_usd_per_hour_whole_offering"]),
                price_per_gpu=Decimal(row["price_usd_per_gpu_hour"]),
                region=row["region"].strip(),
                optional=bool(re.search(r"\boptional\b", row["note"], re.I)),
                note=row["note"]))
    return rows


def key_pricing(row: dict[str, object]) -> str:
    pricing = str(row["pricing"])
    if row["gpu_only"] and pricing == "on_demand":
        return "gpu_only"
    return KEY_PRICING.get(pricing, pricing)


def matches(row: dict[str, object], key: KeyRow) -> bool:
    whole = float(row["price_usd_per_hour"])  # type: ignore[arg-type]
    per_gpu = float(row["price_usd_per_gpu_hour"])  # type: ignore[arg-type]
    memory = row["gpu_memory_gb"]
    return (key.gpu_model != UNKNOWN_GPU and row["gpu_model"] in key.gpu_models
            and (key.gpu_count is None
                 or abs(float(row["gpu_count"]) - key.gpu_count) < 1e-9)  # type: ignore[arg-type]
            and key_pricing(row) == key.pricing
            and (key.price_whole is None
                 or abs(whole - key.price_whole) <= 1e-6 * max(1.0, key.price_whole))
            # rounded to 4 decimals in the key (half-up on the float: 1.97945 -> 1.9794 there)
            and abs(per_gpu - float(key.price_per_gpu)) <= 0.00005 + 1e-9
            and (key.memory_gb is None or memory is None
                 or abs(float(memory) - key.memory_gb) < 0.5)  # type: ignore[arg-type]
            and (not key.region or _slug(str(row["region"])) == _slug(key.region)))


def match_rows(stored: list[dict[str, object]], keys: list[KeyRow]) -> dict[int, int]:
    """A maximum matching stored row -> key row, required key rows first (augmenting paths
    never unmatch a matched vertex, so required rows matched first stay matched)."""
    edges = {k: [s for s, row in enumerate(stored) if matches(row, key)]
             for k, key in enumerate(keys)}
    key_of: dict[int, int] = {}  # stored index -> key index

    def augment(k: int, seen: set[int]) -> bool:
        for s in edges[k]:
            if s in seen:
                continue
            seen.add(s)
            if s not in key_of or augment(key_of[s], seen):
                key_of[s] = k
                return True
        return False

    order = [k for k, key in enumerate(keys) if not key.optional] + \
            [k for k, key in enumerate(keys) if key.optional]
    for k in order:
        augment(k, set())
    return key_of


def source_for(capture: Path) -> tuple[Source, RawCapture]:
    """The one direct source of the capture's provider that accepts it."""
    sources = all_sources()
    folder = capture.parent.name
    provider = sources[folder].provider if folder in sources else folder
    candidates = [s for s in sources.values() if s.provider == provider and not s.aggregator]
    assert candidates, f"no source reads provider {provider!r} (folder {folder})"
    fetched_at = capture_date(capture.name)
    accepted = []
    for source in candidates:
        raw = RawCapture(source.name, source.url, fetched_at, capture.read_bytes(),
                         _CONTENT_TYPES.get(capture.suffix, "application/octet-stream"))
        prepared = prepare(source, raw, "golden")
        if prepared.error is None and prepared.batch is not None and prepared.rows_parsed:
            accepted.append((source, raw))
    names = [s.name for s, _ in accepted]
    assert len(accepted) == 1, (f"{capture.name}: {len(accepted)} sources of {provider} accept "
                                f"it ({', '.join(names) or 'none'}); exactly one must")
    return accepted[0]


@pytest.mark.skipif(not KEYS, reason=f"no answer keys under {CAPTURES} (needs ../shared)")
@pytest.mark.parametrize("key_path", KEYS, ids=[k.parent.name + "/" + k.name[:60] for k in KEYS])
def test_keyed_page_parses_to_its_key(key_path: Path) -> None:
    capture = key_path.with_name(key_path.name.removesuffix(".expected.csv"))
    keys = read_key(key_path)
    source, raw = source_for(capture)
    prepared = prepare(source, raw, "golden")
    assert prepared.batch is not None, prepared.error
    stored = prepared.batch.good.to_dicts()
    key_of = match_rows(stored, keys)
    matched_keys = set(key_of.values())
    missing = [keys[k].describe() for k, key in enumerate(keys)
               if not key.optional and k not in matched_keys]
    extra = [f"{r['gpu_name']!r} ({r['gpu_model']}) x{r['gpu_count']:g} {key_pricing(r)} "
             f"${r['price_usd_per_hour']:g} in {r['region']} [{r['offering']}]"
             for s, r in enumerate(stored) if s not in key_of]
    quarantined = prepared.batch.quarantined
    detail = "" if quarantined.height == 0 else \
        f"\n{quarantined.height} quarantined: " + "; ".join(
            f"{r['gpu_name']!r} {r['pricing']} {r['price_usd_per_hour']}: {r['failed_check']}"
            for r in quarantined.head(5).to_dicts())
    assert not missing and not extra, (
        f"{capture.name} read by {source.name}: {len(stored)} rows stored, "
        f"{len(keys)} key rows ({sum(not k.optional for k in keys)} required)\n"
        f"missing ({len(missing)}):\n  " + "\n  ".join(missing[:40]) +
        f"\nextra ({len(extra)}):\n  " + "\n  ".join(extra[:40]) + detail)


def test_key_reader_matches_hand_made_rows() -> None:
    """The matcher itself: a required row missing, an extra row, and the kind vocabulary."""
    key = KeyRow(line=2, gpu_as_written="NVIDIA H100 SXM", gpu_model="H100 SXM",
                 gpu_models=frozenset({"H100 SXM"}), gpu_count=8,
                 memory_gb=80, pricing="gpu_only", price_whole=23.92,
                 price_per_gpu=Decimal("2.99"), region="", optional=False, note="")
    row = {"gpu_model": "H100 SXM", "gpu_count": 8.0, "pricing": "on_demand", "gpu_only": True,
           "price_usd_per_hour": 23.92, "price_usd_per_gpu_hour": 2.99, "gpu_memory_gb": 80.0,
           "region": "global"}
    assert matches(row, key)
    assert not matches({**row, "gpu_only": False}, key)
    assert not matches({**row, "price_usd_per_hour": 23.93}, key)
    assert not matches({**row, "gpu_model": "H100 PCIe"}, key)
    flex = KeyRow(**{**key.__dict__, "pricing": "reserved"})
    assert matches({**row, "gpu_only": False, "pricing": "flex"}, flex)
    assert match_rows([row, row], [key]) == {0: 0}
    assert _accepted_models("H100", "H100 PCIe", 80) >= {"H100 SXM", "H100 PCIe"}
    assert "H100 NVL" not in _accepted_models("H100", "H100 PCIe", 80)
    assert _accepted_models("H100 SXM", "H100 SXM", None) == {"H100 SXM"}
    assert "A100 80GB" in _accepted_models("Nvidia A100", "A100 40GB", None)
    assert "A100 80GB" not in _accepted_models("A100 40GB", "A100 40GB", None)
    assert _resolve("OCI - Compute - GPU - MI300X", None) == "MI300X"
    assert _resolve("Oracle Cloud VMware Solution - BM.GPU.A10.64 - 1 Year Commit", None) \
        == "A10"
    assert "H100 PCIe" in _accepted_models("NVIDIA H100 NVLink", "H100 SXM", None)
    assert matches({**row, "price_usd_per_gpu_hour": 2.99004}, key)
    assert not matches({**row, "price_usd_per_gpu_hour": 2.9901}, key)
    assert capture_date("x_wayback-20241103180910_y.html") == datetime(2024, 11, 3, 12,
                                                                        tzinfo=UTC)
    assert capture_date("live-2026-08_x.html").month == 8
