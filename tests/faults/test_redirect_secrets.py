"""Issue 22.5: secrets never travel to another origin and are never stored or printed.

httpx strips only `Authorization` on a cross-origin redirect; X-Goog-Api-Key went along.
scrapers.http now follows redirects itself and sends another origin none of the key headers.
Every source that declares a secret is tried with every redirect status. A server echoing the
key (in a body, an error page, a redirect address, percent-encoded or JSON-escaped) gets it
replaced by `[NAME redacted]` before anything is archived, stored, logged or raised.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from contract import FetchError, HttpSettings
from contract.settings import Settings
from flows.refresh_work import run_refresh
from scrapers.registry import all_sources
from tests.faults.hostile_http import Answer, Received, scripted
from tests.faults.test_secrets import archive_text, warehouse_text

KEYED = {name: s.secret_names for name, s in all_sources().items() if s.secret_names}
REDIRECTS = (301, 302, 303, 307, 308)


def secrets_with(token: str) -> dict[str, str]:
    return {name: f"{token}-{name.lower()}" for names in KEYED.values() for name in names}


def token() -> str:
    # '+', '/' and '=' as in base64 keys: the percent-encoded and JSON-escaped echoes differ.
    return f"sk+live/{uuid.uuid4().hex}="


def test_every_keyed_source_is_covered() -> None:
    """The list below is the registry's: a new keyed source is tested without an edit."""
    assert {"gcp", "lambda", "runpod", "vastai"} <= set(KEYED)


@pytest.mark.parametrize("status", REDIRECTS)
@pytest.mark.parametrize("source_name", sorted(KEYED))
def test_no_key_header_follows_a_redirect_to_another_origin(source_name: str,
                                                            status: int) -> None:
    secrets = secrets_with(token())
    with scripted(lambda _: (404, {"Content-Type": "text/plain"}, [b"nothing here"])) as other:
        def origin_answer(got: Received) -> Answer:
            return status, {"Location": f"{other.base}/landing{got.path}"}, []

        with scripted(origin_answer) as origin, \
                httpx.Client(follow_redirects=True) as client:  # as the refresh's client is
            settings = HttpSettings(timeout_s=5, base_urls={source_name: origin.base},
                                    secrets=secrets)
            with pytest.raises(FetchError) as caught:
                all_sources()[source_name].fetch(client, settings)
    sent_to_origin = [v for r in origin.received for v in r.headers.values()]
    for name in KEYED[source_name]:  # the control: the origin did get the key
        assert any(secrets[name] in v for v in sent_to_origin), f"{name} not sent at all"
    assert other.received, "the redirect was followed"
    for got in other.received:
        leaked = {k: v for k, v in got.headers.items()
                  if any(s in v for s in secrets.values())
                  or k.lower() in ("authorization", "x-goog-api-key")}
        assert not leaked, f"{source_name} {status}: {leaked} reached another origin"
    assert not any(s in str(caught.value) for s in secrets.values())


def echo_answer(secrets: dict[str, str], how: str, other_base: str) -> object:
    """A server that gives back whatever key it was sent, in the way `how` says."""
    def answer(got: Received) -> Answer:
        key = next((s for s in secrets.values() if any(s in v for v in got.headers.values())),
                   "no-key-sent")
        if how == "body":  # as sent, percent-encoded, JSON-escaped
            echoed = " ".join([key, quote(key, safe=""), key.replace("/", "\\/")])
            text = '{"skus": [], "data": [], "offers": [], "echo": "' + echoed + '"}'
            return 200, {"Content-Type": "application/json"}, [text.encode()]
        if how == "error":
            return 401, {"Content-Type": "text/plain"}, [f"invalid key {key}".encode()]
        if how == "garbage":
            return 200, {"Content-Type": "application/json"}, [f"<{key}> not json".encode()]
        # how == "location": a redirect whose address carries the key
        return 302, {"Location": f"{other_base}/steal?k={quote(key, safe='')}"}, []
    return answer


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["body", "error", "garbage", "location"])
def test_an_echoed_key_is_stored_and_printed_nowhere(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    secrets = secrets_with(token())
    warehouse = tmp_path / "wh" / "w.duckdb"
    caplog.set_level(logging.DEBUG)
    with scripted(lambda _: (404, {}, [b"x"])) as other, \
            scripted(echo_answer(secrets, how, other.base)) as server:  # type: ignore[arg-type]
        http = HttpSettings(timeout_s=5, base_urls={n: server.base for n in KEYED},
                            secrets=secrets)
        settings = Settings(warehouse=warehouse, archive_dir=tmp_path / "wh" / "raw",
                            retries=1, backoff_base_s=0.01, http=http)
        outcomes = run_refresh(settings, source_names=sorted(KEYED))
    assert not other.received, "a redirect holding a key is not followed"
    out, err = capfd.readouterr()
    places = {"errors": "\n".join(f"{o.error} {o.url}" for o in outcomes),
              "logs": caplog.text, "stdout/stderr": out + err,
              "warehouse": warehouse_text(warehouse)}
    archive = tmp_path / "wh" / "raw"
    if archive.exists():
        places["raw archive"] = archive_text(archive)
    if how == "body":  # archived, with the values replaced
        assert places["raw archive"].count("redacted]") >= 3 * len(KEYED)
    leaks = [f"{place} ({form})" for place, text in places.items() for value in secrets.values()
             for form in (value, quote(value, safe=""), value.replace("/", "\\/"))
             if form in text]
    assert not leaks, f"a key leaked into: {leaks}"
