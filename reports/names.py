"""GPU names typed by users -> catalog models. A family ("H100") means every variant of it."""

from __future__ import annotations

from schemas.gpus import UNKNOWN_GPU, load_catalog, normalise_gpu_name


def _fold(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def resolve_gpu(name: str) -> list[str]:
    """Catalog models meant by `name`; raises ValueError for a name the catalog cannot place."""
    catalog = load_catalog()
    exact = [s.gpu_model for s in catalog if _fold(s.gpu_model) == _fold(name)]
    if exact:
        return exact
    family = [s.gpu_model for s in catalog if _fold(s.family) == _fold(name)]
    if family:
        return family
    model = normalise_gpu_name(name)
    if model == UNKNOWN_GPU:
        raise ValueError(f"unknown GPU {name!r}: not a model or family of schemas/gpu_catalog.csv")
    return [model]


def resolve_gpus(names: list[str] | tuple[str, ...]) -> list[str]:
    models: list[str] = []
    for name in names:
        models += [m for m in resolve_gpu(name) if m not in models]
    return models
