"""A mutation corpus made from every real capture in tests/fixtures/raw/ (via
snapshots/manifest.csv, the AWS p5 daily series through its reader, and the remaining raw files
of each provider), and the rule each
mutant must obey: the parser raises ParseError, or returns offers that are all among the
original capture's offers with identical prices. Anything else (another exception, a price
the original does not hold) is a failure."""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.importer import parse_timestamp
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.warehouse.contract import PROVIDERS, Offer

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "fixtures" / "raw"
P5_SERIES = RAW / "aws" / "amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv"


def real_captures() -> list[Capture]:
    """Every real provider capture we ship, with its original URL and capture time."""
    caps = []
    with (ROOT / "snapshots" / "manifest.csv").open(newline="") as fh:
        for r in csv.DictReader(fh):
            if r["provider"] not in PROVIDERS or not r["file"].startswith("tests/fixtures/raw/"):
                continue
            caps.append(Capture(provider=r["provider"], url=r["url"],
                                body=(ROOT / r["file"]).read_bytes(),
                                captured_at=parse_timestamp(r["captured_at"]),
                                method=r["method"], origin=r["file"]))
    from gpuprices.spiders.providers.aws.history import captures_from_p5_series

    p5 = captures_from_p5_series(P5_SERIES)
    p5[0].origin = str(P5_SERIES.relative_to(ROOT))
    caps.append(p5[0])
    # Captures the manifest leaves out (test slices, derived files): their provider from the
    # folder, a date from the file name; parsers choose the layout by content.
    known = {c.origin for c in caps}
    for path in sorted(RAW.glob("*/*")):
        rel = str(path.relative_to(ROOT))
        if path.parent.name not in PROVIDERS or rel in known or not path.is_file():
            continue
        m = re.search(r"(20\d\d)-?(\d\d)-?(\d\d)?", path.name)
        day = f"{m.group(1)}-{m.group(2)}-{m.group(3) or '01'}" if m else "2026-01-01"
        caps.append(Capture(provider=path.parent.name, url=f"file:///{rel}",
                            body=path.read_bytes(), origin=rel,
                            captured_at=parse_timestamp(f"{day}T12:00:00Z")))
    return caps


def _is_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[")


def _reverse_lists(node):
    if isinstance(node, list):
        return [_reverse_lists(x) for x in reversed(node)]
    if isinstance(node, dict):
        return {k: _reverse_lists(v) for k, v in node.items()}
    return node


def _prices_to_text(node):
    if isinstance(node, dict):
        return {k: ("call us" if isinstance(v, int | float) and not isinstance(v, bool)
                    and any(w in k.lower() for w in ("price", "usd", "cost", "rate", "amount"))
                    else _prices_to_text(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_prices_to_text(x) for x in node]
    if isinstance(node, str) and re.fullmatch(r"\$?\d+(\.\d+)?", node.strip()):
        return "call us"
    return node


_TR = re.compile(rb"(<tr\b.*?</tr>)", re.S | re.I)
_TABLE = re.compile(rb"(<table\b.*?</table>)", re.S | re.I)


def _reorder_html(body: bytes) -> bytes:
    """Rows of every table in reverse order, then the tables themselves in reverse order."""
    def rows(m: re.Match) -> bytes:
        table = m.group(1)
        found = _TR.findall(table)
        if len(found) < 2:
            return table
        it = iter(reversed(found))
        return _TR.sub(lambda _: next(it), table)

    body = _TABLE.sub(rows, body)
    tables = _TABLE.findall(body)
    if len(tables) >= 2:
        it = iter(reversed(tables))
        body = _TABLE.sub(lambda _: next(it), body)
    return body


def _reorder(body: bytes) -> bytes:
    if _is_json(body):
        try:
            return json.dumps(_reverse_lists(json.loads(body))).encode()
        except ValueError:
            return body
    return _reorder_html(body)


_PRICE_TEXT = re.compile(rb"(?<![\w.])\$?\d{1,5}\.\d{1,4}(?![\w.])")


def _prices_text(body: bytes) -> bytes:
    if _is_json(body):
        try:
            return json.dumps(_prices_to_text(json.loads(body))).encode()
        except ValueError:
            pass
    return _PRICE_TEXT.sub(b"call us", body)


def _strip_tags(body: bytes) -> bytes:
    if _is_json(body):
        return re.sub(rb"[{}\[\]]", b"", body)
    return re.sub(rb"<[^>]*>", b" ", body)


Mutation = Callable[[bytes, bytes, random.Random], bytes]

# name -> mutation(body, another provider's body, rng)
MUTATIONS: dict[str, Mutation] = {
    "truncated-10%": lambda b, o, r: b[: len(b) // 10],
    "truncated-half": lambda b, o, r: b[: len(b) // 2],
    "truncated-last-byte": lambda b, o, r: b[:-1] if _is_json(b) else b[: int(len(b) * 0.97)],
    "emptied": lambda b, o, r: b"",
    "whitespace-only": lambda b, o, r: b" \n\t " * 10,
    "tags-stripped": lambda b, o, r: _strip_tags(b),
    "prices-as-text": lambda b, o, r: _prices_text(b),
    "tables-reordered": lambda b, o, r: _reorder(b),
    "another-providers-page": lambda b, o, r: o,
    "random-bytes": lambda b, o, r: r.randbytes(max(64, min(len(b), 4096))),
    "bytes-corrupted": lambda b, o, r: _corrupt(b, r),
    "utf16-reencoded": lambda b, o, r: b.decode("utf-8", "replace").encode("utf-16"),
}


def _corrupt(body: bytes, rng: random.Random) -> bytes:
    out = bytearray(body)
    for _ in range(16):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


@dataclass
class Case:
    provider: str
    origin: str
    mutation: str
    outcome: str  # "error" (ParseError), "correct" (subset, identical prices), "FAIL: ..."

    @property
    def survived(self) -> bool:
        return not self.outcome.startswith("FAIL")


def _key(o: Offer) -> tuple:
    return (o.sku, o.region, o.gpu_model, o.pricing_model, o.commitment_months,
            o.effective_from, o.currency, o.gpu_count)


def _judge(cap: Capture, body: bytes, original: dict[tuple, set[float]]) -> str:
    try:
        offers = parse_body(body, cap.meta())
    except ParseError:
        return "error"
    except Exception as exc:  # a crash is a failure even though the pipeline would contain it
        return f"FAIL: {type(exc).__name__}: {str(exc)[:160]}"
    # A row with no GPU model never loads: the gates hold it as "unmapped GPU wording" for a
    # person to map (flows/pipeline/gates.py). A corrupted chip name gives such rows.
    wrong = [o for o in offers if o.gpu_model is not None
             and round(o.price_per_hour, 6) not in original.get(_key(o), ())]
    if wrong:
        o = wrong[0]
        return (f"FAIL: {len(wrong)} offers not in the original capture, e.g. {o.sku} "
                f"{o.pricing_model} {o.price_per_hour}")
    return "correct"


def run_corpus(seed: int = 7) -> Iterator[Case]:
    """Every mutation of every real capture, judged."""
    caps = real_captures()
    by_provider: dict[str, list[Capture]] = {}
    for c in caps:
        by_provider.setdefault(c.provider, []).append(c)
    providers = sorted(by_provider)
    for i, cap in enumerate(caps):
        try:
            offers = parse_body(cap.body, cap.meta())
        except ParseError:
            offers = []
        original: dict[tuple, set[float]] = {}
        for o in offers:
            original.setdefault(_key(o), set()).add(round(o.price_per_hour, 6))
        other_p = providers[(providers.index(cap.provider) + 1) % len(providers)]
        other = by_provider[other_p][i % len(by_provider[other_p])].body
        for name, mutate in MUTATIONS.items():
            rng = random.Random(f"{seed}-{cap.origin}-{name}")
            mutant = mutate(cap.body, other, rng)
            yield Case(cap.provider, cap.origin or cap.url, name, _judge(cap, mutant, original))
