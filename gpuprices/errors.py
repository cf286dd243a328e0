"""What the doors (CLI, Python API, MCP server) raise for a question they cannot answer.

Each message is one line, meant for the person or agent that asked. The CLI exits with
`exit_code` (2: the input was wrong; 1: the data has no answer), the MCP server returns the
message as a tool error, the Python API raises. A warehouse that cannot be read raises
warehouse.errors.WarehouseError, also one line.
"""

from __future__ import annotations

__all__ = ["GpupricesError", "InputError", "NoAnswer"]


class GpupricesError(Exception):
    """A one-line reason why a question has no answer."""

    exit_code = 1


class InputError(GpupricesError, ValueError):
    """An input out of its range, an unknown name or a malformed value."""

    exit_code = 2


class NoAnswer(GpupricesError):
    """The inputs are fine, but the warehouse holds nothing that answers them."""

    exit_code = 1
