"""Damaged archive files (issue 30, items 1, 7 and 8), made from copies of the real bundled
ones: a record cut short or whose body no longer matches its recorded digest is a failed
capture, never a parse; one bad file fails its own provider-day, never the run; every decoded
body has one cap."""

from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.parsing import parse_archive
from gpuprices.reports.markdown_text import md_text
from gpuprices.spiders.archive import MAX_BODY_BYTES, read_archive
from gpuprices.warehouse import objstore
from tests.faults import damaged_archive as da
from tests.faults import wrong_data as wd


def test_lambda_file_cut_to_half_is_a_failed_capture_not_six_rows(tmp_path):
    s = da.copy_archive(tmp_path, da.LAMBDA_DAY, "lambda")
    da.cut_to_half(da.day_file(s, da.LAMBDA_DAY, "lambda"))
    out = da.cli_run("reparse", "--date", "2026-08-22", "-p", "lambda", *da.where(s))
    assert out.exit_code == 1, out.output
    text = " ".join(out.output.split())
    assert "https://lambda.ai/pricing" in text and "cut short" in text
    assert "of 43,296 bytes (Content-Length)" in text
    assert wd.query(s, "select count(*) from offers where provider = 'lambda'") == [(0,)]


def test_the_whole_lambda_file_still_reads_28_rows(tmp_path):
    s = da.copy_archive(tmp_path, da.LAMBDA_DAY, "lambda")
    parsed = parse_archive(da.day_file(s, da.LAMBDA_DAY, "lambda"), "lambda")
    assert parsed.errors == [] and len(parsed.offers) == 28


def test_a_body_changed_after_archiving_fails_its_digest(tmp_path):
    s = da.copy_archive(tmp_path, da.CRUSOE_DAY, "crusoe")
    path = da.day_file(s, da.CRUSOE_DAY, "crusoe")
    da.change_body(path, b"$3.90", b"$0.39")  # the real H100 on-demand price, same length
    read = read_archive(path)
    (bad,) = read.damaged
    assert bad.body == b"" and "does not match its recorded digest" in bad.damaged
    parsed = parse_archive(path, "crusoe")
    assert not [o for o in parsed.offers if o.price_per_hour in (0.39, 3.9)]
    assert any("damaged capture" in e.problem for e in parsed.errors)


def test_random_bytes_after_the_last_record_fail_neither_the_file_nor_the_run(tmp_path):
    s = da.copy_archive(tmp_path, da.CRUSOE_DAY, "crusoe", "coreweave")
    path = da.day_file(s, da.CRUSOE_DAY, "crusoe")
    da.append_random(path)
    out = da.cli_run("crawl", "--replay", "2026-10-04", "-p", "coreweave", "-p", "crusoe",
                     *da.where(s))
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert out.exit_code == 0, out.output  # degraded: loaded, the file named; run closed
    summary = wd.summary_text(s)  # the run summary names the provider and the file
    # as the summary writes provider text: Markdown-escaped (reports/markdown_text.py)
    assert md_text(f"{path}: unreadable after record 2: ArchiveLoadFailed") in summary
    assert "\ufffd" not in summary  # the random bytes are not printed
    rows = dict(wd.query(s, "select provider, count(*) from offers group by all"))
    assert rows["coreweave"] > 0 and rows["crusoe"] == 6  # every record before the junk
    assert list(s.runs_dir.glob("*.md"))


def test_a_brotli_record_is_a_failed_capture_named_with_its_encoding(tmp_path):
    s = da.copy_archive(tmp_path, da.CRUSOE_DAY, "crusoe")
    da.encoded_capture(s, "crusoe", wd.CRUSOE_PAGE, da.CRUSOE_DAY, "br", b"\x8b\x02\x80hi\x03")
    parsed = parse_archive(da.day_file(s, da.CRUSOE_DAY, "crusoe"), "crusoe")
    assert len(parsed.offers) == 6  # the earlier good capture of the page is used
    assert any("Content-Encoding br" in e.problem for e in parsed.errors), parsed.errors


def test_a_store_that_cannot_be_listed_fails_its_providers_and_closes_the_run(
        tmp_path, monkeypatch):
    s = da.copy_archive(tmp_path, da.CRUSOE_DAY, "crusoe")

    def refuse(root):
        raise objstore.StoreError("s3://prices/snapshots: listing: AccessDenied")

    monkeypatch.setattr(pipeline, "list_archives", refuse)
    out = da.cli_run("reparse", "-p", "crusoe", "-p", "lambda", *da.where(s))
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert out.exit_code == 1
    text = " ".join(out.output.split())
    assert "crusoe: could not list the archive" in text and "AccessDenied" in text
    assert "lambda: could not list the archive" in text
    assert list(s.runs_dir.glob("*.md"))  # the run recorded itself as closed


def test_a_gzip_bomb_is_read_no_further_than_the_cap(tmp_path):
    s = da.copy_archive(tmp_path, da.CRUSOE_DAY, "crusoe")
    bomb = da.gzip_zeros(MAX_BODY_BYTES + (10 << 20))  # 60 MiB of zeros in ~60 KB
    da.encoded_capture(s, "crusoe", wd.CRUSOE_PAGE, da.CRUSOE_DAY, "gzip", bomb)
    read = read_archive(da.day_file(s, da.CRUSOE_DAY, "crusoe"))
    bad = read.captures[-1]
    assert bad.body == b"" and f"more than {MAX_BODY_BYTES:,} bytes" in bad.damaged
    parsed = parse_archive(da.day_file(s, da.CRUSOE_DAY, "crusoe"), "crusoe")
    assert len(parsed.offers) == 6 and "the cap" in str(parsed.errors[0])


def test_import_capture_refuses_a_body_over_the_cap(tmp_path):
    big = tmp_path / "page.html"
    with big.open("wb") as fh:
        fh.truncate(60 * 1024 * 1024)  # 60 MB
    out = da.cli_run("import-capture", str(big), "--provider", "crusoe", "--url",
                     wd.CRUSOE_PAGE, "--captured-at", "2026-10-04T12:00:00Z",
                     "--archive", str(tmp_path / "snapshots"))
    assert out.exit_code == 2
    assert "more than the 52,428,800 byte cap" in " ".join(out.output.split())
    assert not (tmp_path / "snapshots").exists() or not list(
        (tmp_path / "snapshots").rglob("*.warc.gz"))


def test_aws_offer_files_keep_their_larger_cap():
    from gpuprices.spiders import registry
    cap = registry.body_cap("aws")
    assert cap("https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
               "us-east-1/index.json") == 2 * 1024**3
    assert cap("https://website.spot.ec2.aws.a2z.com/spot.json") == MAX_BODY_BYTES
    assert registry.body_cap("ecb")("https://www.ecb.europa.eu/x.zip") == MAX_BODY_BYTES
