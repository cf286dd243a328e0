"""Side by side with gpuhunt: parse the same Vast.ai payload with its provider and with ours.

gpuhunt (dstack's catalog library) is installed only for benchmarks (`uv sync --group bench`,
which `make bench` and `make bench-quick` do); it is never a dependency of the project.
Without it the benchmark exits 2 and says why. Its HTTP call (`requests.post`) is mocked to
return the payload's bytes, so both sides decode the same JSON text and turn it into their own
rows; no network. The two sides run in turn (A B A B ...), so that a change of the machine's
load cannot tilt the ratio. Target: ours >= 5x faster.

    python -m bench.vs_gpuhunt [--size small]
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any
from unittest import mock

from bench._common import cannot_run, header, interleaved, load, size_arg, verdict
from bench.inflate import REALISTIC_ROWS, inflate_vastai
from contract import RawCapture
from scrapers._vastai_offers import DECODER
from scrapers.registry import get_source

TARGET_RATIO = 5.0


class _Response:
    """The slice of requests.Response that gpuhunt's Vast provider uses."""

    def __init__(self, body: bytes) -> None:
        self.content = body
        self.status_code = 200

    def raise_for_status(self) -> None:
        return None

    def json(self) -> Any:
        return json.loads(self.content)  # what requests does for a JSON body


def gpuhunt_parse(body: bytes) -> int:
    """Rows gpuhunt makes of `body` (its Vast provider's whole `get`, HTTP mocked)."""
    from gpuhunt.providers import vastai as gh_vastai

    with mock.patch.object(gh_vastai.requests, "post", return_value=_Response(body)):
        return len(gh_vastai.VastAIProvider().get())


def main(argv: list[str] | None = None) -> int:
    args = size_arg(__doc__.splitlines()[0]).parse_args(argv)
    small = args.size == "small"
    header("Vast.ai parse: ours vs gpuhunt")
    try:
        import gpuhunt  # noqa: F401
    except ImportError:
        return cannot_run("vs_gpuhunt", "gpuhunt is not installed (it is only in the `bench` "
                          "group: `make bench` installs it)")
    logging.getLogger("gpuhunt").setLevel(logging.ERROR)  # it warns per odd offer
    source = get_source("vastai")
    rows = REALISTIC_ROWS["vastai"] // (20 if small else 1)
    example = source.example_capture(datetime(2026, 1, 1, tzinfo=UTC))
    body = inflate_vastai(example.body, rows)
    raw = RawCapture(source.name, source.url, example.fetched_at, body, example.content_type)
    repeat = 1 if small else 5
    ours_rows = source.parse(raw).height
    theirs_rows = gpuhunt_parse(body)
    # Decoding the JSON text, which both sides must do first: gpuhunt builds every offer's
    # dict (json.loads), ours decodes only the fields it reads (msgspec, typed).
    medians = interleaved({
        "ours": lambda: source.parse(raw), "theirs": lambda: gpuhunt_parse(body),
        "ours_decode": lambda: DECODER.decode(body),
        "theirs_decode": lambda: json.loads(body)}, repeat)
    ours_s, theirs_s = medians["ours"], medians["theirs"]
    ours_decode, theirs_decode = medians["ours_decode"], medians["theirs_decode"]
    ratio = theirs_s / ours_s
    print(f"   payload: {rows} offers, {len(body) / 1e6:.1f} MB; medians of {repeat} "
          f"interleaved runs; load {load()}")
    print(f"   gpuhunt  {theirs_s * 1000:8.1f} ms  ({theirs_rows} rows; json.loads alone "
          f"{theirs_decode * 1000:.1f} ms)")
    print(f"   ours     {ours_s * 1000:8.1f} ms  ({ours_rows} rows; typed decode alone "
          f"{ours_decode * 1000:.1f} ms)")
    print(f"   after decoding: gpuhunt {(theirs_s - theirs_decode) * 1000:.1f} ms, ours "
          f"{(ours_s - ours_decode) * 1000:.1f} ms "
          f"({(theirs_s - theirs_decode) / max(ours_s - ours_decode, 1e-9):.1f}x)")
    print(f"   {verdict(ratio >= TARGET_RATIO)} ours is {ratio:.1f}x faster "
          f"(target >= {TARGET_RATIO:.0f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
