"""Alert rules file: where it is, and its TOML read into checked `Rule`s (no warehouse here).

The rules file is $GPUPRICES_ALERTS, else ./alerts.toml; with neither, alerts are off.
Apprise URLs come from `[notify] apprise_urls` plus $GPUPRICES_ALERT_URLS (comma-separated,
for URLs that carry tokens: those stay in the environment, never in the file).
A rule's `gpu` is resolved to catalog models when the file loads (schemas.names, as every
command resolves --gpu): "h100" means every H100, and a name the catalog cannot place is an
error naming the rule. `pricing` is one kind, a list of kinds, or "any"; the default is the
default pricing set (contract.DEFAULT_PRICING), as everywhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from contract import DEFAULT_PRICING, PRICING
from schemas.names import UnknownGpuName, resolve_gpus

__all__ = ["DEFAULT_RULES_FILE", "KINDS", "AlertConfig", "AlertConfigError", "Rule",
           "load_config", "parse_config", "rules_path"]

KINDS = ("cheapest_below", "price_drop", "source_stale")
DEFAULT_RULES_FILE = Path("alerts.toml")
_REQUIRED: dict[str, tuple[str, ...]] = {
    "cheapest_below": ("gpu", "below_usd_per_gpu_hour"),
    "price_drop": ("gpu", "drop_pct"),
    "source_stale": ("source", "stale_hours"),
}


class AlertConfigError(ValueError):
    """The alerts file is not valid; the message names the rule and the field."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule, resolved when made: `gpu_models` is what `gpu` means (a family: every model
    of it), `pricing` a tuple of kinds. AlertConfigError for a GPU or pricing that is none."""

    name: str
    kind: str
    gpu: str | None = None  # as written in the file
    pricing: tuple[str, ...] | str = DEFAULT_PRICING  # a kind, kinds, or "any"
    below_usd_per_gpu_hour: float | None = None
    drop_pct: float | None = None
    within_days: int = 7
    source: str | None = None
    stale_hours: float | None = None
    gpu_models: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pricing", _pricing(self.name, self.pricing))
        if self.gpu is not None:
            try:
                models = tuple(resolve_gpus([str(self.gpu)]))
            except UnknownGpuName as exc:
                raise AlertConfigError(f"rule {self.name!r}: {exc}") from None
            object.__setattr__(self, "gpu_models", models)


@dataclass(frozen=True, slots=True)
class AlertConfig:
    rules: tuple[Rule, ...]
    apprise_urls: tuple[str, ...] = ()
    prefect_block: str | None = None


def rules_path(env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    if env.get("GPUPRICES_ALERTS"):
        return Path(env["GPUPRICES_ALERTS"])
    return DEFAULT_RULES_FILE if DEFAULT_RULES_FILE.exists() else None


def _rule(index: int, item: object) -> Rule:
    if not isinstance(item, dict):
        raise AlertConfigError(f"rule #{index + 1} is not a table")
    name = str(item.get("name") or f"rule-{index + 1}")
    kind = item.get("kind")
    if kind not in KINDS:
        raise AlertConfigError(f"rule {name!r}: kind must be one of {', '.join(KINDS)}")
    unknown = set(item) - set(Rule.__dataclass_fields__) | ({"gpu_models"} & set(item))
    if unknown:
        raise AlertConfigError(f"rule {name!r}: unknown field(s) {', '.join(sorted(unknown))}")
    missing = [f for f in _REQUIRED[str(kind)] if item.get(f) in (None, "")]
    if missing:
        raise AlertConfigError(f"rule {name!r} ({kind}) needs {', '.join(missing)}")
    return Rule(**{**item, "name": name})


def _pricing(name: str, value: object) -> tuple[str, ...]:
    """A rule's pricing kinds: one kind, a list of them, or "any" (every kind)."""
    if value is None:
        return DEFAULT_PRICING
    if value == "any":
        return tuple(PRICING)
    chosen = [value] if isinstance(value, str) else list(value) \
        if isinstance(value, list | tuple) else []
    if not chosen or any(p not in PRICING for p in chosen):
        raise AlertConfigError(f"rule {name!r}: pricing must be \"any\" or kinds of "
                               f"{', '.join(PRICING)}, not {value!r}")
    return tuple(str(p) for p in chosen)


def parse_config(data: Mapping[str, object], env: Mapping[str, str] | None = None
                 ) -> AlertConfig:
    env = os.environ if env is None else env
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        raise AlertConfigError("`rule` must be an array of tables: [[rule]]")
    rules = [_rule(index, item) for index, item in enumerate(raw_rules)]
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise AlertConfigError("rule names must be unique (they key the sent-events table)")
    notify = data.get("notify", {})
    notify = notify if isinstance(notify, dict) else {}
    urls = [str(u) for u in notify.get("apprise_urls", []) if u]
    urls += [u.strip() for u in env.get("GPUPRICES_ALERT_URLS", "").split(",") if u.strip()]
    block = str(notify.get("prefect_block") or "") or None
    return AlertConfig(tuple(rules), tuple(urls), block)


def load_config(path: Path, env: Mapping[str, str] | None = None) -> AlertConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AlertConfigError(f"{path}: {exc}") from None
    return parse_config(data, env)
