"""Command-line values without pydantic: typer's coercion, minus its start-up cost.

typer (0.29) turns every given option value into its Python type through a pydantic
`TypeAdapter` built on first parse: importing pydantic and building the adapters costs a read
command about a third of DuckDB's own start-up. The values this CLI takes are plain (str, int,
float, bool, a path, an enum, a day, lists of those), so `install()` gives each parameter a
direct conversion for them. Anything else, and every value the direct conversion does not
accept, goes to typer's own pydantic coercion: errors, their wording and every unusual input
stay exactly typer's (tests/unit/test_coerce.py holds both ways to the same values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin

from typer import core
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, coerce_cli_path

if TYPE_CHECKING:
    from typer._click import Context

__all__ = ["direct_value", "install"]

# What pydantic's lax mode surely reads the same way: plain decimal digits (no sign, blanks,
# underscores or exponents: those go to pydantic).
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


class _Declined(Exception):
    """The direct conversion does not take this value: typer's pydantic coercion decides."""


def _leaf(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    if info.parser is not None:
        raise _Declined
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(value, choices=list(annotation),
                                     case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            raise _Declined from None
    if annotation is str:
        if isinstance(value, str):
            return value
        raise _Declined
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise _Declined
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and _INT.fullmatch(value):
            return int(value)
        raise _Declined
    if annotation is float:
        if isinstance(value, float):
            return value
        if isinstance(value, str) and _FLOAT.fullmatch(value):
            return float(value)
        raise _Declined
    if annotation is datetime and info.formats is not None:
        if isinstance(value, datetime):
            return value
        for fmt in info.formats:
            try:
                return datetime.strptime(value, fmt)
            except (TypeError, ValueError):
                continue
        raise _Declined
    if isinstance(annotation, type) and issubclass(annotation, Path):
        path_type = info.path_type or annotation
        if isinstance(value, str) and value and "\0" not in value:
            value = path_type(value)
        if not isinstance(value, path_type):
            raise _Declined
        try:
            return coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)
        except Exception:  # typer's own coercion raises its error, worded its way
            raise _Declined from None
    raise _Declined


def direct_value(annotation: Any, info: Any, value: Any, param: Any = None,
                 ctx: Any = None) -> Any:
    """`value` as typer would coerce it for `annotation`; _Declined when only pydantic knows."""
    if get_origin(annotation) is list:
        (item_type,) = get_args(annotation)
        items = value if isinstance(value, (list, tuple)) else [value]
        return [_leaf(item_type, info, item, param, ctx) for item in items]
    return _leaf(annotation, info, value, param, ctx)


@dataclass(frozen=True)
class _DirectRuntimeParam(RuntimeParam):
    """A parameter's coercion: direct when it can be, else typer's (built on first need)."""

    descriptor: TypeDescriptor
    _typer: list[RuntimeParam] = field(default_factory=list)

    def _coerce_value(self, value: Any, param: Any, ctx: Context) -> Any:
        try:
            return direct_value(self.annotation, self.parameter_info, value, param, ctx)
        except _Declined:
            if not self._typer:
                self._typer.append(build_runtime_param(self.descriptor))
            return self._typer[0]._coerce_value(value, param=param, ctx=ctx)


def _runtime_param(self: Any) -> RuntimeParam:
    if self._runtime_param is None:
        descriptor = self.type_descriptor
        if descriptor.file_annotation is not None:  # files: typer's own way
            self._runtime_param = build_runtime_param(descriptor)
        else:
            self._runtime_param = _DirectRuntimeParam(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation,
                descriptor=descriptor)
    return self._runtime_param


def install() -> None:
    """Every typer parameter coerces directly first (idempotent)."""
    core._TyperParameter.get_runtime_param = _runtime_param  # type: ignore[method-assign]
