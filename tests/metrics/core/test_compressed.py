"""Compressed resources are decompressed as a stream with a cap; bombs are refused and leave nothing behind."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile

import pytest

from metrics.core import compressed
from metrics.core.compressed import DecompressedTooLarge, open_resource

MB = 1024 * 1024


def _write(path, payload: bytes):
    suffix = path.suffix
    if suffix == ".xz":
        path.write_bytes(lzma.compress(payload))
    elif suffix == ".gz":
        path.write_bytes(gzip.compress(payload))
    elif suffix == ".bz2":
        path.write_bytes(bz2.compress(payload))
    elif suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("inner.txt", payload)
    else:
        path.write_bytes(payload)
    return path


@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2", ".zip"])
def test_a_small_file_that_expands_past_the_cap_is_refused_while_streaming(tmp_path, suffix):
    bomb = _write(tmp_path / f"bomb.txt{suffix}", b"the the the\n" * (5 * MB // 12))
    assert bomb.stat().st_size < 100_000  # a few kilobytes on disk, five megabytes unpacked
    with pytest.raises(DecompressedTooLarge, match="PARAEVAL_DECOMPRESSED_MAX_BYTES"):
        with open_resource(bomb, "rt", max_bytes=1 * MB) as fh:
            for _line in fh:
                pass


@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2", ".zip", ".txt"])
def test_files_under_the_cap_read_exactly_as_written(tmp_path, suffix):
    text = "".join(f"línea {i}\tzeile\r\n" for i in range(1000))
    path = _write(tmp_path / f"ok{suffix}", text.encode())
    with open_resource(path, "rt", newline="", max_bytes=len(text.encode())) as fh:
        assert fh.read() == text
    with open_resource(path, "rb") as fh:
        assert fh.read() == text.encode()


def test_the_default_cap_is_read_at_call_time(tmp_path, monkeypatch):
    path = _write(tmp_path / "a.txt.gz", b"x" * 2000)
    monkeypatch.setattr(compressed, "DECOMPRESSED_MAX_BYTES", 1000)
    with pytest.raises(DecompressedTooLarge):
        open_resource(path, "rb").read()


def test_a_zip_must_hold_one_file_and_its_declared_size_is_checked_first(tmp_path):
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.txt", "a")
        zf.writestr("b.txt", "b")
    with pytest.raises(ValueError, match="exactly one file"):
        open_resource(two)
    big = _write(tmp_path / "big.zip", b"0" * (2 * MB))
    with pytest.raises(DecompressedTooLarge, match="expands to 2,097,152 bytes"):
        open_resource(big, max_bytes=MB)


def test_a_language_model_bomb_fails_cleanly_and_leaves_nothing_in_the_cache(tmp_path, monkeypatch):
    from metrics.core.base.params import MetricError
    from metrics.core.registry import create_metric

    cache = tmp_path / "cache"
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(cache))
    monkeypatch.setattr(compressed, "DECOMPRESSED_MAX_BYTES", 1 * MB)
    header = b"\\data\\\nngram 1=3\n\n\\1-grams:\n"
    bomb = _write(tmp_path / "lm.arpa.xz", header + b"-1.0\tthe\n" * (4 * MB // 9))
    metric = create_metric("lm-fluency", {}, {"model": bomb})
    with pytest.raises(MetricError, match="expands to more than 1,048,576 bytes"):
        metric.score(["The cat ."], ["The cat ."])
    assert not cache.exists() or list(cache.iterdir()) == []
    # A training text behind the same cap.
    text_bomb = _write(tmp_path / "train.txt.bz2", b"the cat sat .\n" * (4 * MB // 14))
    metric = create_metric("lm-fluency", {}, {"model": text_bomb})
    with pytest.raises(MetricError, match="expands to more than"):
        metric.score(["The cat ."], ["The cat ."])
    assert not cache.exists() or list(cache.iterdir()) == []


def test_a_phrase_table_bomb_is_refused(tmp_path, monkeypatch):
    from metrics.core.phrase_table import PhraseTable

    monkeypatch.setattr(compressed, "DECOMPRESSED_MAX_BYTES", 1 * MB)
    bomb = _write(
        tmp_path / "table.tsv.gz",
        b"english\tpivot\tcount\n" + b"".join(b"w%d\tp%d\t3\n" % (i, i) for i in range(300_000)),
    )
    with pytest.raises(DecompressedTooLarge):
        PhraseTable.load(bomb)
