"""The index's parameters: one methodology version, read from params.toml, checked against
ranges, and digested (sha256 over a canonical JSON of every value, the price band's factors of
schemas/screens.toml included) so each fixing names exactly the rules it was made with."""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from contract import PRICING

__all__ = ["KINDS", "METHODS", "PARAMS_PATH", "IndexParams", "ParamsError", "canonical_json",
           "default_params", "load_params", "params_from_json"]

PARAMS_PATH = Path(__file__).with_name("params.toml")
KINDS = ("on_demand", "spot", "reserved")
METHODS = ("central_third", "median", "mean", "weighted_median", "trimmed_mean")


class ParamsError(ValueError):
    """A parameters file that breaks a rule (one line naming the value)."""


def canonical_json(value: Any) -> str:
    """The one serialisation digests are taken over: sorted keys, no spaces, floats as repr."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


@dataclass(frozen=True, slots=True)
class IndexParams:
    version: str
    on_demand: tuple[str, ...]
    spot: tuple[str, ...]
    reserved: tuple[str, ...]
    terms_months: tuple[int, ...]
    band: bool
    jump_threshold: float
    jump_others_move: float
    jump_others_needed: int
    jump_decidable: int
    outlier_window: int
    outlier_sd: float
    outlier_floor: float
    outlier_min_history: int
    aggregators: bool
    excluded_providers: tuple[str, ...]
    sd_window_days: int
    sd_floor: float
    carry_days: int
    attendance_half_life_days: float
    attendance_window_days: int
    attendance_eta: float
    floor: float
    cap: float
    method: str
    trim: float
    resamples: int
    low: float
    high: float
    seed: int
    min_panel: int
    min_fresh: int
    dormant_days: int
    segments: bool
    geographies: bool
    # the price band's factors (schemas/screens.toml [band]) at load: part of the digest
    screens_band: tuple[tuple[str, float], ...] = field(default=())

    def __post_init__(self) -> None:
        checks = {
            "version": bool(self.version.strip()) and len(self.version) <= 20,
            "baskets": all(k in PRICING for k in (*self.on_demand, *self.spot, *self.reserved))
            and not set(self.on_demand) & set(self.spot),
            "terms_months": all(1 <= t <= 120 for t in self.terms_months),
            "jump_threshold": 0.01 <= self.jump_threshold <= 10,
            "jump_others_move": 0 < self.jump_others_move <= self.jump_threshold,
            "jump_others_needed": 1 <= self.jump_others_needed <= 50,
            "jump_decidable": 1 <= self.jump_decidable <= 50,
            "outlier_window": 2 <= self.outlier_window <= 1000,
            "outlier_sd": 0.5 <= self.outlier_sd <= 20,
            "outlier_floor": 0 <= self.outlier_floor <= 1,
            "outlier_min_history": 2 <= self.outlier_min_history <= self.outlier_window,
            "sd_window_days": 1 <= self.sd_window_days <= 3650,
            "sd_floor": 0 <= self.sd_floor <= 1,
            "carry_days": 0 <= self.carry_days <= 400,
            "attendance_half_life_days": 0.1 <= self.attendance_half_life_days <= 3650,
            "attendance_window_days": 1 <= self.attendance_window_days <= 3650,
            "attendance_eta": 0 <= self.attendance_eta <= 10,
            "floor": 0 <= self.floor < 0.5,
            "cap": 0 < self.cap <= 1 and self.cap >= self.floor,
            "method": self.method in METHODS,
            "trim": 0 <= self.trim < 0.5,
            "resamples": 0 <= self.resamples <= 100_000,
            "low": 0 <= self.low < self.high <= 1,
            "seed": 0 <= self.seed < 2**63,
            "min_panel": 1 <= self.min_panel <= 100,
            "min_fresh": 0 <= self.min_fresh <= self.min_panel,
            "dormant_days": 0 <= self.dormant_days <= 3650,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ParamsError(f"index parameters out of range: {', '.join(bad)}")

    def kind_of(self, pricing: str) -> str | None:
        """The index kind a pricing kind counts in (None: no kind)."""
        for kind in KINDS:
            if pricing in getattr(self, kind):
                return kind
        return None

    @property
    def pricing(self) -> tuple[str, ...]:
        """Every pricing kind some index kind counts."""
        return (*self.on_demand, *self.spot, *self.reserved)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["screens_band"] = dict(self.screens_band)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    def to_json(self) -> str:
        return canonical_json(self.as_dict())

    @property
    def digest(self) -> str:
        import hashlib  # OpenSSL's start: where a digest is made, never a read

        return hashlib.sha256(self.to_json().encode()).hexdigest()


_SECTIONS = ("baskets", "screens", "votes", "weights", "aggregate", "band", "panel")


def _screens_band() -> tuple[tuple[str, float], ...]:
    from schemas.screens import CONFIG_PATH

    band = tomllib.loads(CONFIG_PATH.read_text(encoding="utf-8"))["band"]
    return tuple(sorted((str(k), float(v)) for k, v in band.items()))


def _build(flat: dict[str, Any], where: str) -> IndexParams:
    names = {f.name for f in fields(IndexParams)}
    unknown = sorted(set(flat) - names)
    missing = sorted(names - set(flat) - {"screens_band"})
    if unknown or missing:
        problems = [f"unknown {', '.join(unknown)}" if unknown else "",
                    f"missing {', '.join(missing)}" if missing else ""]
        raise ParamsError(f"{where}: {'; '.join(p for p in problems if p)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in flat.items()}
    if isinstance(values.get("screens_band"), dict):
        values["screens_band"] = tuple(sorted(values["screens_band"].items()))
    try:
        return IndexParams(**values)
    except TypeError as exc:
        raise ParamsError(f"{where}: {exc}") from None


def load_params(path: Path = PARAMS_PATH) -> IndexParams:
    """The parameters in `path` (ParamsError, one line, when a value is missing or out of
    range)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ParamsError(f"cannot read index parameters {path}: {exc}") from None
    flat: dict[str, Any] = {"version": str(data.pop("version", ""))}
    for section in _SECTIONS:
        flat.update(data.pop(section, {}))
    if data:
        raise ParamsError(f"{path.name}: unknown sections {', '.join(sorted(data))}")
    flat["screens_band"] = _screens_band()
    return _build(flat, path.name)


def params_from_json(text: str) -> IndexParams:
    """Parameters as stored with a methodology version (index_method.params_json)."""
    return _build(json.loads(text), "stored parameters")


@cache
def default_params() -> IndexParams:
    return load_params()
