"""The raw archive on S3-compatible storage: a small PUT / GET / HEAD client, no SDK.

`GPUPRICES_ARCHIVE=s3://bucket/prefix` puts every raw capture on the same object storage as
the lake's data, so workers on different machines share one archive (and `reparse` anywhere
reads it back). Requests are signed with AWS Signature V4 from the same variables as the
lake's DuckDB secret (warehouse.extensions): AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION and AWS_ENDPOINT_URL (path-style there; virtual-host style on
AWS). The key and secret go into the signature only, never into a message. An object is
written whole by one PUT (S3 never shows half an object), so no temporary name is needed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from warehouse.errors import WarehouseError

if TYPE_CHECKING:
    import httpx

__all__ = ["get_object", "is_object_url", "object_exists", "object_url", "put_object"]

TIMEOUT_S = 60.0


def object_url(root: object) -> str | None:
    """`s3://bucket/prefix` for an archive root on S3 (a pathlib.Path folds `s3://` to
    `s3:/`, so both spellings are read), else None."""
    text = str(root)
    if text.startswith("s3://"):
        return text
    if text.startswith("s3:/"):
        return "s3://" + text[4:]
    return None


def is_object_url(root: object) -> bool:
    return object_url(root) is not None


def _endpoint(url: str, env: Mapping[str, str]) -> tuple[str, str]:
    """(HTTP URL of the object, region)."""
    parts = urlsplit(url)
    bucket, key = parts.netloc, parts.path.lstrip("/")
    if not bucket or not key:
        raise WarehouseError(f"{url}: expected s3://bucket/key")
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    path = quote(key, safe="/-_.~")
    if endpoint:
        return f"{endpoint.rstrip('/')}/{bucket}/{path}", region
    return f"https://{bucket}.s3.{region}.amazonaws.com/{path}", region


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _signed(method: str, http_url: str, region: str, body: bytes,
            env: Mapping[str, str]) -> dict[str, str]:
    key, secret = env.get("AWS_ACCESS_KEY_ID", ""), env.get("AWS_SECRET_ACCESS_KEY", "")
    if not key or not secret:
        raise WarehouseError("an s3:// archive needs AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY")
    parts = urlsplit(http_url)
    now = datetime.now(UTC)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    headers = {"host": parts.netloc, "x-amz-date": stamp,
               "x-amz-content-sha256": hashlib.sha256(body).hexdigest()}
    if env.get("AWS_SESSION_TOKEN"):
        headers["x-amz-security-token"] = env["AWS_SESSION_TOKEN"]
    names = sorted(headers)
    canonical = "\n".join([method, parts.path or "/", parts.query,
                           "".join(f"{n}:{headers[n]}\n" for n in names), ";".join(names),
                           headers["x-amz-content-sha256"]])
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    signing = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret}".encode(), day), region), "s3"),
                    "aws4_request")
    signature = hmac.new(signing, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={key}/{scope}, "
                                f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return headers


def _request(method: str, url: str, body: bytes = b"",
             env: Mapping[str, str] | None = None) -> httpx.Response:
    import httpx  # here: an archive on disk (every refresh but a lake's) never loads it

    env = os.environ if env is None else env
    http_url, region = _endpoint(url, env)
    try:
        return httpx.request(method, http_url, content=body or None, timeout=TIMEOUT_S,
                             headers=_signed(method, http_url, region, body, env))
    except httpx.HTTPError as exc:
        raise WarehouseError(f"cannot reach the archive at {url}: "
                             f"{type(exc).__name__}: {exc}") from None


def put_object(url: str, body: bytes, env: Mapping[str, str] | None = None) -> None:
    answer = _request("PUT", url, body, env)
    if answer.status_code >= 300:
        raise WarehouseError(f"cannot write {url}: HTTP {answer.status_code}")


def get_object(url: str, env: Mapping[str, str] | None = None) -> bytes:
    """The object's bytes; FileNotFoundError when there is none."""
    answer = _request("GET", url, env=env)
    if answer.status_code == 404:
        raise FileNotFoundError(url)
    if answer.status_code >= 300:
        raise WarehouseError(f"cannot read {url}: HTTP {answer.status_code}")
    return answer.content


def object_exists(url: str, env: Mapping[str, str] | None = None) -> bool:
    return _request("HEAD", url, env=env).status_code == 200
