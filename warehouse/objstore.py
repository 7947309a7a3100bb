"""Object storage: `s3://bucket/prefix` locations for the archive, the lake and published
warehouses, on any S3-compatible store (AWS S3, R2, GCS's S3 API, MinIO, SeaweedFS).

A location is either a local `Path` (unchanged behaviour) or a `StorePath`, which offers the part
of pathlib the pipeline reads with (`/`, name, parent, exists, is_dir, iterdir, glob, stat, open
for reading) so that reading code serves both. Writing never pretends to be a file: a write is
one PUT, which S3 makes visible whole or not at all, made conditional on what the writer saw
(`If-None-Match: *` for a new key, `If-Match: <ETag>` for a replacement), so a writer that lost
a race is told (ConflictError) instead of overwriting the winner.

The client is obstore (Rust `object_store` of the Apache Arrow project): conditional PUT with
`mode="create"` / `{"e_tag": ...}`, user metadata, one small wheel with no dependencies.
pyarrow's S3 filesystem has no conditional write; s3fs/fsspec brings aiobotocore and botocore.

Endpoint and credentials: the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION/AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3/AWS_ENDPOINT_URL) win over
the shared files (~/.aws/credentials and ~/.aws/config, or AWS_SHARED_CREDENTIALS_FILE and
AWS_CONFIG_FILE, profile AWS_PROFILE else `default`), as the AWS CLI and SDKs resolve them.
"""

from __future__ import annotations

import configparser
import datetime as dt
import fnmatch
import functools
import io
import os
from dataclasses import dataclass
from pathlib import Path

import obstore
from obstore.exceptions import (
    AlreadyExistsError,
    BaseError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionError,
    UnauthenticatedError,
)
from obstore.store import S3Store

SCHEME = "s3://"
# How often an append retries after another writer changed the object first: each retry
# re-reads it, so only a writer losing this many races in a row fails.
APPEND_TRIES = 8


class StoreError(OSError):
    """An object-store operation that failed; the message names the bucket and key."""


class ConflictError(StoreError):
    """Another writer changed the object between this writer's read and its write."""


def is_remote(location: object) -> bool:
    return isinstance(location, StorePath) or (
        isinstance(location, str) and location.startswith(SCHEME))


def file_exists(path: Path | StorePath) -> bool:
    """Whether a file (an object) is there: on object storage one HEAD, where exists() also
    LISTs, for a folder of that name, when the object is missing (two requests a miss)."""
    return path.is_file() if isinstance(path, StorePath) else path.exists()


def location(value: str | Path | StorePath) -> Path | StorePath:
    """`s3://bucket/prefix` as a StorePath; anything else as the Path it always was."""
    if isinstance(value, StorePath | Path):
        return value
    if not value.startswith(SCHEME):
        return Path(value)
    bucket, _, key = value.removeprefix(SCHEME).partition("/")
    if not bucket:
        raise ValueError(f"{value!r}: an object-store location needs a bucket (s3://bucket/prefix)")
    return StorePath(bucket, key.strip("/"))


# The variables aws_config reads: only these are copied from the environment (every request
# asks for the client, so for its settings; copying the whole environment cost ~0.25 ms each).
_AWS_VARS = ("AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ACCESS_KEY_ID",
             "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
             "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


def _shared_file_state(env: dict, var: str, default: str) -> tuple[str, int | None]:
    """An AWS shared file's path and modification time (None: no readable file)."""
    path = os.path.expanduser(env.get(var) or os.path.join("~", ".aws", default))
    try:
        return path, os.stat(path).st_mtime_ns
    except OSError:
        return path, None


@functools.lru_cache(maxsize=8)
def _ini_sections(path: str, _mtime_ns: int, default: str) -> dict[str, dict[str, str]]:
    """An AWS shared file's sections, parsed once per version of the file (every request asks
    for the client, and so for the credentials)."""
    parser = configparser.ConfigParser()
    try:
        parser.read(path)
    except configparser.Error as exc:
        raise StoreError(f"{path}: not a readable AWS {default} file: {exc}") from None
    return {name: dict(parser[name]) for name in parser.sections()}


def _section(state: tuple[str, int | None], default: str, section: str) -> dict[str, str]:
    path, stamp = state
    if stamp is None:
        return {}
    return _ini_sections(path, stamp, default).get(section, {})


def _settings(env: dict | None = None) -> tuple[tuple[str, str], ...]:
    """aws_config's settings as a sorted tuple, worked out again only when one of the AWS
    variables or one of the shared files (by modification time) changed."""
    source = os.environ if env is None else env
    aws = tuple((k, v) for k in _AWS_VARS if (v := source.get(k)))
    found = dict(aws)
    creds = _shared_file_state(found, "AWS_SHARED_CREDENTIALS_FILE", "credentials")
    conf = _shared_file_state(found, "AWS_CONFIG_FILE", "config")
    return _settings_of(aws, creds, conf)


@functools.lru_cache(maxsize=16)
def _settings_of(aws: tuple[tuple[str, str], ...], creds_state: tuple[str, int | None],
                 conf_state: tuple[str, int | None]) -> tuple[tuple[str, str], ...]:
    env = dict(aws)
    profile = env.get("AWS_PROFILE") or "default"
    creds = _section(creds_state, "credentials", profile)
    conf = _section(conf_state, "config",
                    profile if profile == "default" else f"profile {profile}")
    out = {
        "access_key_id": creds.get("aws_access_key_id"),
        "secret_access_key": creds.get("aws_secret_access_key"),
        "session_token": creds.get("aws_session_token"),
        "region": conf.get("region"),
        "endpoint": conf.get("endpoint_url"),
    }
    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        out |= {"access_key_id": env["AWS_ACCESS_KEY_ID"],
                "secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
                "session_token": env.get("AWS_SESSION_TOKEN")}
    out["region"] = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or out["region"]
    out["endpoint"] = (env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
                       or out["endpoint"])
    # us-east-1: the region S3-compatible stores expect when none is configured.
    out["region"] = out["region"] or "us-east-1"
    return tuple(sorted((k, v) for k, v in out.items() if v))


def aws_config(env: dict | None = None) -> dict[str, str]:
    """obstore S3 settings from the AWS variables, else the shared credentials/config files."""
    return dict(_settings(env))


@functools.lru_cache(maxsize=16)
def _client(bucket: str, settings: tuple[tuple[str, str], ...]) -> S3Store:
    config = dict(settings)
    endpoint = config.get("endpoint", "")
    return S3Store(
        bucket, **config,
        client_options={"allow_http": endpoint.startswith("http://"), "timeout": "60s",
                        "connect_timeout": "5s"},
        # A few quick retries: a store that went away is reported within seconds, not minutes.
        retry_config={"max_retries": 3, "retry_timeout": dt.timedelta(seconds=20),
                      "backoff": {"init_backoff": dt.timedelta(milliseconds=100),
                                  "max_backoff": dt.timedelta(seconds=2), "base": 2}},
    )


def client(bucket: str) -> S3Store:
    """The client of a bucket for the current environment (rebuilt when the variables change)."""
    return _client(bucket, _settings())


# What S3-compatible stores answer to a key pair they do not accept (some as a generic 403).
_DENIED = ("403 Forbidden", "401 Unauthorized", "SignatureDoesNotMatch", "InvalidAccessKeyId",
           "AccessDenied")


def _why(exc: BaseException) -> str:
    if isinstance(exc, PermissionDeniedError | UnauthenticatedError) or any(
            d in str(exc) for d in _DENIED):
        return ("access denied: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the "
                "profile in ~/.aws/credentials)")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first[:300]


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    e_tag: str | None
    last_modified: dt.datetime

    @property
    def st_size(self) -> int:
        return self.size

    @property
    def st_mtime_ns(self) -> int:
        return int(self.last_modified.timestamp() * 1e9)

    @property
    def version_number(self) -> int:
        """A number that changes whenever the object's bytes do (from its ETag): what a file's
        modification time tells a local reader."""
        tag = (self.e_tag or "").strip('"').replace("-", "")
        try:
            return int(tag[:15], 16)  # 60 bits: fits a BIGINT column
        except ValueError:
            return self.st_mtime_ns


def _concurrent_conflict(exc: BaseException) -> bool:
    """AWS answers a conditional write racing another one with 409 ConditionalRequestConflict
    and asks the client to retry (S3 User Guide, "How to prevent object overwrites with
    conditional writes"): the same outcome as a failed precondition, so the same error."""
    text = str(exc)
    return "ConditionalRequestConflict" in text or "409 Conflict" in text


@dataclass(frozen=True)
class StorePath:
    """One key (or key prefix) in a bucket, read like a pathlib.Path."""

    bucket: str
    key: str

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.key}"

    def __repr__(self) -> str:
        return f"StorePath({str(self)!r})"

    def __truediv__(self, part: str) -> StorePath:
        return StorePath(self.bucket, f"{self.key}/{part}".strip("/"))

    def __lt__(self, other: StorePath) -> bool:
        return (self.bucket, self.key) < (other.bucket, other.key)

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]

    @property
    def parent(self) -> StorePath:
        return StorePath(self.bucket, self.key.rsplit("/", 1)[0] if "/" in self.key else "")

    def with_name(self, name: str) -> StorePath:
        return self.parent / name

    def _fail(self, doing: str, exc: BaseException) -> StoreError:
        return StoreError(f"{self}: {doing} failed on bucket {self.bucket!r} key {self.key!r}: "
                          f"{_why(exc)}")

    # -- reading ---------------------------------------------------------------------------
    def head(self) -> ObjectInfo | None:
        try:
            meta = obstore.head(client(self.bucket), self.key)
        except (FileNotFoundError, NotFoundError):
            return None
        except BaseError as exc:
            raise self._fail("reading", exc) from None
        return ObjectInfo(self.key, meta["size"], meta.get("e_tag"), meta["last_modified"])

    def get(self) -> tuple[bytes, dict[str, str], ObjectInfo]:
        """The object's bytes, user metadata and state, from one GET (raises FileNotFoundError)."""
        try:
            got = obstore.get(client(self.bucket), self.key)
            data = bytes(got.bytes())
        except (FileNotFoundError, NotFoundError):
            raise FileNotFoundError(f"{self}: no such object") from None
        except BaseError as exc:
            raise self._fail("reading", exc) from None
        meta = got.meta
        info = ObjectInfo(self.key, meta["size"], meta.get("e_tag"), meta["last_modified"])
        return data, dict(got.attributes), info

    def exists(self) -> bool:
        return self.head() is not None or self.is_dir()

    def is_file(self) -> bool:
        return self.head() is not None

    def is_dir(self) -> bool:
        return bool(self._list(limit_one=True))

    def stat(self) -> ObjectInfo:
        info = self.head()
        if info is None:
            raise FileNotFoundError(f"{self}: no such object")
        return info

    def read_bytes(self) -> bytes:
        return self.get()[0]

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)

    def open(self, mode: str = "rb") -> io.BytesIO:
        if mode != "rb":
            raise StoreError(f"{self}: objects are written whole (put), not opened with {mode!r}")
        return io.BytesIO(self.read_bytes())

    def _list(self, limit_one: bool = False) -> list[ObjectInfo]:
        prefix = f"{self.key}/" if self.key else ""
        out = []
        try:
            # 1000: the most keys one S3 LIST page returns (ListObjectsV2 MaxKeys).
            for batch in obstore.list(client(self.bucket), prefix=prefix or None,
                                      chunk_size=1000):
                for m in batch:
                    out.append(ObjectInfo(m["path"], m["size"], m.get("e_tag"),
                                          m["last_modified"]))
                if limit_one and out:
                    break
        except BaseError as exc:
            raise self._fail("listing", exc) from None
        return out

    def walk(self) -> list[tuple[StorePath, ObjectInfo]]:
        """Every object under this prefix (one listing), with its state."""
        return [(StorePath(self.bucket, m.key), m) for m in self._list()]

    def iterdir(self) -> list[StorePath]:
        depth = self.key.count("/") + 1 if self.key else 0
        names = {m.key.split("/")[depth] for m in self._list()}
        return sorted(self / n for n in names)

    def glob(self, pattern: str) -> list[StorePath]:
        depth = pattern.count("/") + 1
        base = f"{self.key}/" if self.key else ""
        return sorted(p for p, m in self.walk()
                      if m.key[len(base):].count("/") + 1 == depth
                      and fnmatch.fnmatchcase(m.key[len(base):], pattern))

    def rglob(self, pattern: str) -> list[StorePath]:
        return sorted(p for p, _ in self.walk() if fnmatch.fnmatchcase(p.name, pattern))

    def mkdir(self, *args, **kwargs) -> None:
        """Prefixes need no creating on an object store."""

    # -- writing ---------------------------------------------------------------------------
    def put(self, data: bytes, *, expect: ObjectInfo | None | bool = None,
            metadata: dict[str, str] | None = None, what: str = "") -> ObjectInfo:
        """Write the whole object in one PUT. `expect` is the state the writer based the write
        on: an ObjectInfo (replace only that version: If-Match), None (create only: If-None-
        Match), or False (unconditional). Raises ConflictError when another writer got there
        first, StoreError for any other failure; nothing is half-written either way."""
        if expect is False:
            mode = "overwrite"
        elif expect is None:
            mode = "create"
        else:
            mode = {"e_tag": expect.e_tag}
        try:
            # One PUT, never multipart: a conditional single PUT is what every S3-compatible
            # store honours, and the lake's objects are small.
            res = obstore.put(client(self.bucket), self.key, data, mode=mode,
                              attributes=metadata or None, use_multipart=False)
        except (AlreadyExistsError, PreconditionError):
            seen = "absent" if expect is None else f"version {expect.e_tag}"
            raise ConflictError(
                f"{self}: another writer wrote {what or 'this object'} first (this writer "
                f"saw it {seen}); its data stays, this write was not made") from None
        except BaseError as exc:
            if _concurrent_conflict(exc):
                raise ConflictError(
                    f"{self}: another writer was writing {what or 'this object'} at the same "
                    f"time (409 ConditionalRequestConflict); this write was not made") from None
            raise self._fail(f"writing {what}".strip(), exc) from None
        return ObjectInfo(self.key, len(data), res.get("e_tag"), dt.datetime.now(dt.UTC))

    def put_replacing(self, data: bytes, *, metadata: dict[str, str] | None = None,
                      what: str = "") -> ObjectInfo:
        """Replace (or create) the object, conditional on the version seen just before."""
        return self.put(data, expect=self.head(), metadata=metadata, what=what)

    def append(self, data: bytes, *, what: str = "") -> ObjectInfo:
        """Append to the object (creating it) by compare-and-swap on its ETag: on a conflict
        read it again and retry, so concurrent appenders never drop each other's bytes."""
        for _ in range(APPEND_TRIES):
            try:
                old, _meta, seen = self.get()
            except FileNotFoundError:
                old, seen = b"", None
            try:
                return self.put(old + data, expect=seen, what=what)
            except ConflictError:
                continue
        raise ConflictError(f"{self}: other writers changed {what or 'this object'} "
                            f"{APPEND_TRIES} times during this append; nothing appended")

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            obstore.delete(client(self.bucket), self.key)
        except BaseError as exc:
            raise self._fail("deleting", exc) from None
