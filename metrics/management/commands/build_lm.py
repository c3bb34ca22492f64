"""``manage.py build_lm``: estimate an n-gram language model and write it as ARPA.

    python manage.py build_lm --text FILE [--order 4] --out model.arpa [--pretokenized]

FILE is UTF-8 text (plain, ``.gz`` or ``.xz``), one sentence a line. Each line is
tokenised and lower-cased as ``lm-fluency`` queries (``metrics.core.lm.lm_tokens``)
unless ``--pretokenized`` (then split on spaces only). The model is interpolated
modified Kneser–Ney (Chen & Goodman 1998), written as ARPA for KenLM; give it to
``lm-fluency`` as its ``model`` resource. Bad input gives a one-line error and a
non-zero exit status. Thin wrapper over ``metrics.core.lm``.
"""

from __future__ import annotations

import lzma
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core.lm.estimate import estimate_kneser_ney, lm_tokens, read_sentences


class Command(BaseCommand):
    help = "Estimate an interpolated modified Kneser-Ney n-gram LM and write it as an ARPA file."

    def add_arguments(self, parser):
        parser.add_argument("--text", required=True, help="training text, one sentence a line (.gz/.xz ok)")
        parser.add_argument("--order", type=int, default=4, help="n-gram order (default 4, as PEM)")
        parser.add_argument("--out", required=True, help="output ARPA file")
        parser.add_argument("--pretokenized", action="store_true", help="split lines on spaces only")

    def handle(self, *args, **opts):
        t0 = time.perf_counter()
        if not 1 <= opts["order"] <= 8:
            raise CommandError(f"--order must be between 1 and 8, got {opts['order']}")
        path = Path(opts["text"])
        if not path.is_file():
            raise CommandError(f"cannot read text file {path}: no such file")
        sentences = read_sentences(path)
        if not opts["pretokenized"]:
            sentences = (lm_tokens(" ".join(s)) for s in sentences)
        try:
            model = estimate_kneser_ney(sentences, order=opts["order"])
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise CommandError(f"cannot read text file {path}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise CommandError(f"text file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from None
        try:
            out = model.write_arpa(opts["out"])
        except OSError as exc:
            raise CommandError(f"cannot write {opts['out']}: {exc.strerror or exc}") from None
        sizes = ", ".join(f"{n}-grams {len(t)}" for n, t in enumerate(model.tables, 1))
        note = f"; fixed fallback discounts at orders {model.fallback_orders}" if model.fallback_orders else ""
        self.stdout.write(
            f"wrote {out} ({sizes}; vocabulary {len(model.vocab) - 1}{note}) in {time.perf_counter() - t0:.1f} s"
        )
