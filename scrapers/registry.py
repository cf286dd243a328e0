"""Every source, by the name used on the command line. A new source is one line here."""

from __future__ import annotations

from importlib import import_module

from scrapers.base import Source

# module path -> exported SOURCE (or SOURCES for a module that serves several).
_MODULES: tuple[str, ...] = (
    "scrapers.vastai",
    "scrapers.modal",
    "scrapers.skypilot",
    "scrapers.lambda_api",
    "scrapers.lambda_page",
    "scrapers.runpod_graphql",
    "scrapers.runpod_page",
    "scrapers.runpod_serverless",
    "scrapers.paperspace",
    "scrapers.coreweave",
    "scrapers.aws",
    "scrapers.aws_spot",
    "scrapers.ec2instances",
    "scrapers.azure",
    "scrapers.gcp",
    "scrapers.huggingface_jobs",
    "scrapers.huggingface_docs",
    "scrapers.huggingface_endpoints",
    "scrapers.opencomputeprices",
    "scrapers.digitalocean",
    "scrapers.voltagepark",
    "scrapers.voltagepark_api",
    "scrapers.gcp_page",
    "scrapers.oci",
    "scrapers.crusoe",
    "scrapers.nebius",
    "scrapers.hyperstack",
    "scrapers.fluidstack",
    "scrapers.datacrunch",
    "scrapers.scaleway",
    "scrapers.ovhcloud",
)


def all_sources() -> dict[str, Source]:
    found: dict[str, Source] = {}
    for module_name in _MODULES:
        module = import_module(module_name)
        for source in getattr(module, "SOURCES", None) or [module.SOURCE]:
            if source.name in found:
                raise ValueError(f"two sources are named {source.name!r}")
            found[source.name] = source
    return found


def get_source(name: str) -> Source:
    """The source called `name` on the command line (its name or one of its aliases)."""
    sources = all_sources()
    for source in sources.values():
        if name == source.name or name in source.aliases:
            return source
    raise KeyError(f"no source named {name!r}; known sources: {', '.join(sorted(sources))}")


def resolve_names(names: list[str]) -> list[str]:
    """Canonical source names for command-line names (aliases allowed); KeyError if unknown."""
    return [get_source(name).name for name in names]


def secret_names(sources: dict[str, Source] | None = None) -> tuple[str, ...]:
    """Every environment variable a source reads a secret from (SourceDef.secret_names)."""
    chosen = all_sources() if sources is None else sources
    return tuple(sorted({name for s in chosen.values() for name in s.secret_names}))
