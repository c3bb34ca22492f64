"""The metric engine: sufficient statistics, signatures, bootstrap and paired tests.

Every automatic metric in paraeval has the shape of sacrebleu's metrics
(Post 2018, *A Call for Clarity in Reporting BLEU Scores*):

1. :meth:`Metric.segment_stats` turns each (original, candidate, reference)
   segment into a small vector of *additive* sufficient statistics, so a batch
   becomes a float matrix of shape ``(n, k)``;
2. :meth:`Metric.scores_from_sums` turns *summed* statistics into a score, so the
   corpus score is ``scores_from_sums(stats.sum(0))`` and a bootstrap resample is
   just another weighted sum of the same rows (no text is ever re-scored);
3. :meth:`Metric.signature` names the metric, its parameters, the hashes of its
   resource files, the tokenizer and the paraeval version, so that a number in a
   paper can be reproduced.

Metrics whose corpus score is the mean of sentence scores (PINC, WEEM4PG, ...)
subclass :class:`MeanMetric`: their statistics are ``[sentence_score, 1]`` and
the corpus score is ``Σ score / Σ 1`` — the mean, and still a ratio of sums.

Writing a metric
----------------
Subclass :class:`Metric` (or :class:`MeanMetric`), set the class attributes
``slug``, ``description``, ``params``, ``resources``, ``version``,
``higher_is_better`` and ``stat_names``, implement ``_segment_stats`` (the
public :meth:`Metric.segment_stats` validates the input first) and
``scores_from_sums``, and decorate the class with
:func:`metrics.core.registry.register`. Parameter values are in
``self.param_values``; resources are loaded lazily by ``self.resource(name)``.

Signature format (stable; :func:`parse_signature` reads it back)::

    metric:<slug>|version:<metric version>|<param>:<value>|...|<extra>:<value>|...
    |res:<name>=<sha256 prefix>|...|tok:<TOKENIZER_VERSION>|paraeval:<version>

Fields are separated by ``|`` and split at their first ``:``; in values, ``%``
and ``|`` are written ``%25`` and ``%7C``. Parameters appear in declaration
order, booleans as ``true``/``false``. ``<extra>`` fields are metric-specific
(e.g. ``sacrebleu:`` carries sacrebleu's own signature). ``res:`` repeats once
per resource, in declaration order; the hash is the first 12 hex digits of the
SHA-256 of the resource file (of every file, by sorted relative path, for a
directory), or the ``fingerprint`` of a resource object passed in directly.

Layout
------
The package splits the engine along its seams: :mod:`.params` (versions, errors,
:class:`Param`), :mod:`.resources` (resource specs and fingerprints), :mod:`.signature`
(escaping and :func:`parse_signature`), :mod:`.results` (result objects),
:mod:`.metric` (:class:`Metric`, :class:`MeanMetric`) and :mod:`.bootstrap`
(intervals, paired tests) over :mod:`.resampling`.  The registry stays in
:mod:`metrics.core.registry`. Import each name from the module that defines it; this package holds no names of its own.
"""
