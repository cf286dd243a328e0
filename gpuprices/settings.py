"""Settings live in contract.settings (a bottom module flows and the CLI both read)."""

from contract.settings import DEFAULT_WAREHOUSE, Settings, load_settings

__all__ = ["DEFAULT_WAREHOUSE", "Settings", "load_settings"]
