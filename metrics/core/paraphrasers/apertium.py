"""``roundtrip-apertium``: English → Spanish → English through Apertium's rule-based pairs, as a subprocess."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import ClassVar

from metrics.core.base.params import Param
from metrics.core.text import normalize

from ._base import Paraphrase, Paraphraser, ParaphraserError, ParaphraserUnavailable, check_texts

# --------------------------------------------------------------------------- Apertium round trip

#: What to tell a user whose machine lacks Apertium.
APERTIUM_INSTALL_HINT = "install Debian's apertium-eng-spa (apt-get install -y apertium-eng-spa)"


# Apertium marks unknown (*), untranslatable (@) and ungenerable (#) words; -u only drops '*'.
_APERTIUM_MARKS = re.compile(r"(?<![^\s(“‘\"'])[#@*]+(?=\w)")


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)\]}”’])")


_SPACE_AFTER_OPEN = re.compile(r"([(\[{“‘])\s+")


def clean_apertium_output(text: str) -> str:
    """Apertium output as a plain sentence: marks dropped, whitespace and punctuation spacing normalised.

    Apertium leaves a blank where it drops a word (*I say* → *digo* → *say*) and a
    space before some punctuation (*Word ,*); neither is a paraphrase.
    """
    text = _APERTIUM_MARKS.sub("", text)
    text = " ".join(text.split())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    return _SPACE_AFTER_OPEN.sub(r"\1", text)


class ApertiumRoundTripParaphraser(Paraphraser):
    """English → Spanish → English through Apertium (module docstring).

    Apertium is deterministic, so ``seed`` changes nothing (it is still recorded
    in the signature). Two modes:

    * batch (default): one ``apertium`` process per direction translates up to
      200 sentences, one a line. Apertium's pipeline keeps state from one line to
      the next (blank lines between sentences do not reset it), so a sentence's
      translation can depend on its neighbours in the batch (6 of 36 John verses
      we checked changed a word or two). paraeval always feeds a study's originals in study order,
      so the same study gives the same output.
    * ``isolate=true``: each sentence is translated alone (two processes per
      sentence, about 0.7 s), so its output depends on nothing else. The demo's
      shipped outputs were made this way.

    Every call has a timeout (``timeout`` seconds).
    """

    slug = "roundtrip-apertium"
    description = "Round trip English → Spanish → English through Apertium (rule-based MT, apertium-eng-spa)"
    params = MappingProxyType(
        {
            "binary": Param("binary", str, "apertium", "the apertium program (a name on PATH or a path)"),
            "forward": Param("forward", str, "eng-spa", "Apertium mode English → pivot"),
            "backward": Param("backward", str, "spa-eng", "Apertium mode pivot → English"),
            "timeout": Param("timeout", float, 120.0, "seconds each apertium call may take", minimum=1.0),
            "isolate": Param(
                "isolate",
                bool,
                False,
                "translate each sentence alone (slow; output independent of the other sentences)",
            ),
        }
    )
    batch_size: ClassVar[int] = 200

    def _binary(self) -> str | None:
        return shutil.which(self.param_values["binary"])

    def unavailable_reason(self) -> str:
        binary = self._binary()
        if binary is None:
            return (
                f"{self.slug} is unavailable: the program {self.param_values['binary']!r} was not found; "
                f"{APERTIUM_INSTALL_HINT}"
            )
        modes = _apertium_modes(binary, self.param_values["timeout"])
        if modes is None:
            return f"{self.slug} is unavailable: {binary} -l did not answer; {APERTIUM_INSTALL_HINT}"
        missing = [m for m in (self.param_values["forward"], self.param_values["backward"]) if m not in modes]
        if missing:
            return (
                f"{self.slug} is unavailable: Apertium has no mode {', '.join(missing)} "
                f"(installed: {', '.join(sorted(modes)) or 'none'}); {APERTIUM_INSTALL_HINT}"
            )
        return ""

    def resource_fingerprints(self) -> dict[str, str]:
        binary = self._binary()
        version = _apertium_version(binary, self.param_values["timeout"]) if binary else None
        return {"apertium": version or "unknown"}

    def translate(self, lines: Sequence[str], mode: str) -> list[str]:
        """Translate ``lines`` (one sentence each) with Apertium ``mode`` in one process; one output line per input.

        Raises :class:`ParaphraserError` when Apertium fails, times out or returns
        a different number of lines, and :class:`ParaphraserUnavailable` when it
        cannot be started.
        """
        if not lines:
            return []
        self.check_available()
        binary = self._binary()
        assert binary is not None  # check_available() raised otherwise
        timeout = self.param_values["timeout"]
        data = "".join(" ".join(line.split()) + "\n" for line in lines)
        try:
            proc = subprocess.run(
                [binary, "-u", mode],
                input=data,
                capture_output=True,
                text=True,
                encoding="utf-8",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ParaphraserError(f"apertium {mode} took longer than {timeout:g} s on {len(lines)} lines") from None
        except OSError as exc:
            raise ParaphraserUnavailable(f"{self.slug} is unavailable: cannot run {binary}: {exc.strerror}") from None
        if proc.returncode != 0:
            raise ParaphraserError(f"apertium {mode} failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}")
        out = proc.stdout.split("\n")
        if out and out[-1] == "":
            out.pop()
        if len(out) != len(lines):
            raise ParaphraserError(f"apertium {mode} returned {len(out)} lines for {len(lines)}")
        return out

    def _round_trip(self, sentences: list[str]) -> list[str]:
        pivot = self.translate(sentences, self.param_values["forward"])
        return self.translate(pivot, self.param_values["backward"])

    def paraphrase_batch(
        self, texts: Sequence[str], *, progress: Callable[[int], None] | None = None
    ) -> list[Paraphrase]:
        texts = check_texts(texts)
        self.check_available()
        out: list[Paraphrase] = []
        step = 1 if self.param_values["isolate"] else self.batch_size
        for start in range(0, len(texts), step):
            chunk = texts[start : start + step]
            back: list[str] = [""] * len(chunk)
            todo = [i for i, t in enumerate(chunk) if normalize(t)]  # Apertium drops empty lines
            if todo:
                for i, text in zip(todo, self._round_trip([normalize(chunk[i]) for i in todo])):
                    back[i] = text
            out.extend(Paraphrase(original, clean_apertium_output(text)) for original, text in zip(chunk, back))
            if progress is not None and (len(out) % 50 == 0 or len(out) == len(texts) or step > 1):
                progress(len(out))
        return out


@lru_cache(maxsize=8)
def _apertium_modes(binary: str, timeout: float) -> frozenset[str] | None:
    try:
        proc = subprocess.run([binary, "-l"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return frozenset(line.strip() for line in proc.stdout.splitlines() if line.strip())


@lru_cache(maxsize=8)
def _apertium_version(binary: str, timeout: float) -> str | None:
    try:
        proc = subprocess.run([binary, "-V"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0].replace(" ", "_") if text else None
