"""Sending alert events: a log line each, then Apprise URLs and/or a Prefect block.

No warehouse here: what was sent is remembered by reports.alerts.state.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

from reports.alerts.config import AlertConfig
from reports.alerts.rules import AlertEvent

__all__ = ["deliver", "send_apprise", "send_prefect_block"]

log = logging.getLogger("gpuprices.alerts")


def send_apprise(urls: Iterable[str], title: str, body: str) -> bool:
    import apprise

    notifier = apprise.Apprise()
    for url in urls:
        notifier.add(url)
    return bool(notifier.notify(title=title, body=body))


def send_prefect_block(block_name: str, title: str, body: str) -> None:
    from prefect.blocks.core import Block

    block = Block.load(block_name)
    block.notify(body, subject=title)  # type: ignore[attr-defined]


def deliver(events: list[AlertEvent], config: AlertConfig) -> None:
    """Log/print every event, then send one message per event to each configured channel.
    Each event's `delivered` lists where it went (a failed channel says FAILED)."""
    for event in events:
        text = f"ALERT [{event.rule}] {event.message}"
        # stderr: stdout is for the command's output (one JSON document with -f json);
        # inside the refresh flow (log_prints) also a Prefect log line
        print(text, file=sys.stderr)
        log.info(text)
        event.delivered.append("log")
        if config.apprise_urls:
            ok = send_apprise(config.apprise_urls, event.title, event.message)
            event.delivered.append(f"apprise x{len(config.apprise_urls)}" if ok
                                   else "apprise FAILED")
            if not ok:
                log.warning("alert %s: an Apprise URL did not accept it", event.rule)
        if config.prefect_block:
            try:
                send_prefect_block(config.prefect_block, event.title, event.message)
                event.delivered.append(f"prefect block {config.prefect_block}")
            except Exception as exc:  # a missing block must not lose the other channels
                event.delivered.append("prefect block FAILED")
                log.warning("alert %s: Prefect block %s: %s", event.rule,
                            config.prefect_block, exc)
