"""The ways opening the warehouse fails, each with a one-line message for the user."""

from __future__ import annotations

__all__ = ["WarehouseBusy", "WarehouseError", "WarehouseOutdated", "WarehouseRefused"]


class WarehouseError(RuntimeError):
    """The warehouse cannot be opened or used as asked."""


class WarehouseBusy(WarehouseError):
    """Another process holds the warehouse file (its message names the holder and its PID);
    `role`: 'reader', 'writer' or None (not known)."""

    def __init__(self, message: str, role: str | None = None) -> None:
        super().__init__(message)
        self.role = role


class WarehouseOutdated(WarehouseError):
    """An older schema: a read never migrates, a write command upgrades it first."""


class WarehouseRefused(WarehouseError):
    """The file is not what a gpuprices warehouse holds (a view or macro where ours belong),
    or a statement typed for `gpuprices query` is not one it runs."""
