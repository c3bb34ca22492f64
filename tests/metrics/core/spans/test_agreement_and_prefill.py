"""Span agreement (character/word F1, κ over words) and spans pre-filled from the word aligner."""

import math

import pytest
from sklearn.metrics import cohen_kappa_score

from metrics.core.spans.agreement import char_labels, pairwise_span_agreement, span_agreement, word_labels
from metrics.core.spans.model import ErrorSpan, EsaAnnotation
from metrics.core.spans.offsets import span_problem
from metrics.core.spans.prefill import prefill_timing, proposal_outcomes, propose_spans
from metrics.core.spans.words import word_offsets

ORIGINAL = "And God said, Let there be light: and there was light."
CANDIDATE = "Then God said, let there be bright light, and at once there was light."
TEXTS = {"i1": (ORIGINAL, CANDIDATE)}


def _span(text, word, severity="minor", side="candidate"):
    start = text.index(word)
    return ErrorSpan(side, start, start + len(word), severity)


def test_character_f1_counts_overlapping_characters():
    a = EsaAnnotation("a", "i1", "o1", "s", (_span(CANDIDATE, "bright light"),))
    b = EsaAnnotation("b", "i1", "o1", "s", (_span(CANDIDATE, "bright", "major"), _span(CANDIDATE, "Then")))
    result = span_agreement([a], [b], TEXTS)
    ma, mb, both = len("bright light"), len("bright") + len("Then"), len("bright")
    assert result.char_precision == pytest.approx(both / mb)
    assert result.char_recall == pytest.approx(both / ma)
    assert result.char_f1 == pytest.approx(2 * both / (ma + mb))
    # words: a marks {bright, light}, b marks {Then, bright}
    assert result.word_f1 == pytest.approx(2 * 1 / (2 + 2))


def test_kappa_over_words_equals_scikit_learn():
    a = EsaAnnotation("a", "i1", "o1", "s", (_span(CANDIDATE, "bright light"), _span(ORIGINAL, "And", side="original")))
    b = EsaAnnotation(
        "b",
        "i1",
        "o1",
        "s",
        (_span(CANDIDATE, "bright", "major"), _span(CANDIDATE, "Then"), ErrorSpan.missing_marker("minor")),
    )
    result = span_agreement([a], [b], TEXTS)
    la = [*word_labels(a.spans, CANDIDATE, side="candidate"), *word_labels(a.spans, ORIGINAL, side="original")]
    lb = [*word_labels(b.spans, CANDIDATE, side="candidate"), *word_labels(b.spans, ORIGINAL, side="original")]
    assert len(la) == len(word_offsets(CANDIDATE)) + 1 + len(word_offsets(ORIGINAL))  # +1: the [missing] marker
    assert result.word_kappa == pytest.approx(cohen_kappa_score([x > 0 for x in la], [x > 0 for x in lb]))
    assert result.word_kappa_severity == pytest.approx(cohen_kappa_score(la, lb, labels=[0, 1, 2]))


def test_identical_annotations_agree_perfectly_and_empty_ones_are_undefined():
    spans = (_span(CANDIDATE, "bright"), _span(ORIGINAL, "light:", "major", side="original"))
    a, b = EsaAnnotation("a", "i1", "o1", "s", spans), EsaAnnotation("b", "i1", "o1", "s", spans)
    result = span_agreement([a], [b], TEXTS)
    assert result.char_f1 == 1.0 and result.word_f1 == 1.0 and result.word_kappa == pytest.approx(1.0)
    empty = span_agreement([EsaAnnotation("a", "i1", "o1", "s", ())], [EsaAnnotation("b", "i1", "o1", "s", ())], TEXTS)
    assert math.isnan(empty.char_f1)


def test_pairwise_agreement_pairs_judges_on_shared_items_without_controls():
    rows = [
        EsaAnnotation("a", "i1", "o1", "s", (_span(CANDIDATE, "bright"),)),
        EsaAnnotation("b", "i1", "o1", "s", (_span(CANDIDATE, "bright"),)),
        EsaAnnotation("c", "i2", "o2", "s", ()),
        EsaAnnotation("c", "i1", "o1", "control:identical", (), 100, True, "identical"),
    ]
    pairs = pairwise_span_agreement(rows, {**TEXTS, "i2": ("x", "y")})
    assert [(p.judge_a, p.judge_b, p.n_items) for p in pairs] == [("a", "b", 1)]


def test_char_labels_take_the_most_severe_span():
    labels = char_labels(
        [ErrorSpan("candidate", 0, 4, "minor"), ErrorSpan("candidate", 2, 6, "major")], "abcdefgh", side="candidate"
    )
    assert labels.tolist() == [1, 1, 2, 2, 2, 2, 0, 0, 0]  # the last position is the [missing] marker


@pytest.mark.parametrize(
    "original, candidate",
    [
        (ORIGINAL, CANDIDATE),
        (
            "In the beginning God created the heaven and the earth.",
            "In the beginning, God created the heavens and the earth.",
        ),
        ("كَتَبَ الولدُ الدرسَ في المدرسة.", "كَتَبَ الولدُ الدرسَ بسرعة."),
        ("Café 😀 is open today.", "The café 😀 is open."),
    ],
)
def test_prefilled_spans_match_the_alignment_they_came_from(original, candidate):
    proposal = propose_spans(original, candidate)
    links = proposal.alignment.sure | proposal.alignment.possible
    for side, text, words, aligned in (
        ("candidate", candidate, proposal.candidate_words, {j for _, j in links}),
        ("original", original, proposal.original_words, {i for i, _ in links}),
    ):
        assert list(proposal.alignment.tokens1 if side == "original" else proposal.alignment.tokens2) == [
            text[s:e] for s, e in words
        ]
        spans = [s for s in proposal.spans if s.side == side]
        covered = {k for k, (s, e) in enumerate(words) for sp in spans if sp.start <= s and e <= sp.end}
        content = {k for k, (s, e) in enumerate(words) if any(ch.isalnum() for ch in text[s:e])}
        # every unaligned word is proposed, no aligned word is, no punctuation is
        assert covered == content - aligned
        for sp in spans:
            assert span_problem(text, sp.start, sp.end) is None
            assert sp.category == ("addition" if side == "candidate" else "omission")
            # a span starts and ends on a proposed word
            assert any(s == sp.start for k, (s, e) in enumerate(words) if k in covered)
            assert any(e == sp.end for k, (s, e) in enumerate(words) if k in covered)


def test_the_proposals_for_a_real_pair_are_the_words_the_candidate_adds_and_drops():
    proposal = propose_spans(ORIGINAL, CANDIDATE)
    cand = {CANDIDATE[s.start : s.end] for s in proposal.spans if s.side == "candidate"}
    assert {"bright", "at once"} <= cand
    assert all(s.severity == "minor" for s in proposal.spans)


def test_proposal_precision_counts_accepted_edited_deleted_and_added():
    p1, p2, p3 = (
        ErrorSpan("candidate", 0, 4, "minor"),
        ErrorSpan("candidate", 10, 16, "minor"),
        ErrorSpan("original", 0, 3, "minor"),
    )
    kept = (
        ErrorSpan("candidate", 0, 4, "major"),  # p1 accepted, severity raised
        ErrorSpan("candidate", 10, 13, "minor"),  # p2 edited (shortened)
        ErrorSpan("candidate", 30, 35, "minor"),
    )  # the judge's own; p3 deleted
    outcome = proposal_outcomes(
        [
            EsaAnnotation("j", "i1", "o1", "s", kept, 60, proposed=(p1, p2, p3), seconds=20),
            EsaAnnotation("j", "i2", "o2", "s", (ErrorSpan("candidate", 0, 2, "minor"),), 80, seconds=50),
        ]
    )
    assert (outcome.n_annotations, outcome.proposed, outcome.accepted, outcome.severity_changed) == (1, 3, 1, 1)
    assert (outcome.edited, outcome.deleted, outcome.added, outcome.kept) == (1, 1, 1, 3)
    assert outcome.precision_strict == pytest.approx(1 / 3)
    assert outcome.precision_lenient == pytest.approx(2 / 3)
    assert outcome.recall == pytest.approx(2 / 3)


def test_prefill_timing_compares_seconds_with_and_without_proposals():
    proposal = (ErrorSpan("candidate", 0, 2, "minor"),)
    kept = (ErrorSpan("candidate", 0, 2, "minor"),)
    rows = [EsaAnnotation("j", f"w{k}", "o", "s", kept, 50, seconds=30.0 + k, proposed=proposal) for k in range(5)]
    rows += [EsaAnnotation("j", f"n{k}", "o", "s", kept + kept, 50, seconds=70.0 + k) for k in range(5)]
    timing = prefill_timing(rows, n_boot=500)
    assert timing.seconds_with == pytest.approx(32.0) and timing.seconds_without == pytest.approx(72.0)
    assert timing.saved == pytest.approx(40.0)
    assert timing.seconds_per_span_with == pytest.approx(32.0)
    assert timing.seconds_per_span_without == pytest.approx(36.0)
    assert timing.saved_low <= 40.0 <= timing.saved_high


@pytest.mark.parametrize(
    "original, candidate",
    [
        ("My 👩\u200d👩\u200d👧 went home.", "My 👩 \u200d 👩 \u200d 👧 went home."),  # an old unigram control
        ("We flew to 🇪🇸 today.", "We flew to 🇪 🇸 today."),
        ("A cafe\u0301 here.", "A café here \u0301 now."),
        ("كَتَبَ الوَلَدُ الدَّرسَ", "الوَلَدُ كَتَبَ َ الدَّرسَ"),
    ],
)
def test_proposals_never_refuse_a_cluster_after_a_space_and_stay_on_whole_characters(original, candidate):
    proposal = propose_spans(original, candidate)
    for span in proposal.spans:
        text = candidate if span.side == "candidate" else original
        assert span_problem(text, span.start, span.end) is None


def test_spans_like_places_the_shapes_of_one_items_proposals_on_other_texts():
    from metrics.core.spans.prefill import span_shapes, spans_like

    source_o, source_c = "The quick brown fox jumps over the lazy dog.", "A fast brown fox leaps over a sleepy dog!"
    proposals = [
        ErrorSpan("candidate", 2, 6, "major", "fluency"),
        ErrorSpan("original", 4, 15, "minor", "meaning changed"),
        ErrorSpan.missing_marker("minor", "meaning omitted"),
    ]
    shapes = span_shapes(proposals, source_o, source_c)
    assert [(s.side, s.words) for s in shapes] == [("candidate", 1), ("original", 2), ("candidate", 0)]
    original, candidate = "In the beginning was the Word.", "At first there was the Word, said he."
    for seed in range(20):
        spans = spans_like(shapes, original, candidate, seed=seed)
        assert spans == spans_like(shapes, original, candidate, seed=seed)
        assert sorted((s.side, s.severity, s.category, s.missing) for s in spans) == sorted(
            (s.side, s.severity, s.category, s.missing) for s in proposals
        )
        for s in spans:
            if not s.missing:
                text = candidate if s.side == "candidate" else original
                assert span_problem(text, s.start, s.end) is None
                assert len(text[s.start : s.end].split()) == (1 if s.side == "candidate" else 2)
    # more shapes than words: each word is taken once, the rest left out; never an overlap
    many = span_shapes([ErrorSpan("candidate", 0, 1, "minor", "fluency")] * 5, "x", "a")
    assert [(s.start, s.end) for s in spans_like(many, "One two", "Yes no", seed=1)] == [(0, 3), (4, 6)]
