"""GPU names typed by people -> catalog models: the one resolution the CLI, alert rules,
scenarios and charts use. A family ("H100") means every variant of it; case, spaces and
punctuation do not matter ("h100", "a100-80gb"); any name the catalog's normaliser places
works too ("NVIDIA H100 80GB HBM3"). A name the catalog cannot place is an error, never an
empty answer."""

from __future__ import annotations

from schemas.gpus import UNKNOWN_GPU, load_catalog, normalise_gpu_name

__all__ = ["UnknownGpuName", "resolve_gpu", "resolve_gpus"]


class UnknownGpuName(ValueError):
    """A GPU name that is neither a catalog model, a family, nor a name the catalog places."""


def _fold(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def resolve_gpu(name: str) -> list[str]:
    """Catalog models meant by `name`; raises UnknownGpuName for a name the catalog cannot
    place."""
    catalog, key = load_catalog(), _fold(name)
    exact = [s.gpu_model for s in catalog if _fold(s.gpu_model) == key]
    if exact:
        return exact
    family = [s.gpu_model for s in catalog if _fold(s.family) == key]
    if family:
        return family
    model = normalise_gpu_name(name)
    if model == UNKNOWN_GPU:
        raise UnknownGpuName(f"unknown GPU {name!r}: not a model or family of "
                             "schemas/gpu_catalog.csv")
    return [model]


def resolve_gpus(names: list[str] | tuple[str, ...]) -> list[str]:
    """Every catalog model meant by any of `names`, in order, once each."""
    models: list[str] = []
    for name in names:
        models += [m for m in resolve_gpu(name) if m not in models]
    return models
