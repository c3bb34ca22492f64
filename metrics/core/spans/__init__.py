"""Error spans (ESA, Kocmi et al. 2024) on paraphrases: offsets, analysis, agreement, pre-filled spans.

One module per idea; import a name from the module that defines it:

- :mod:`.offsets`: span offsets in code points, and how they meet UTF-16 (browsers),
  grapheme clusters (combining marks, emoji) and right-to-left text;
- :mod:`.model`: an error span and one judge's ESA annotation of an item;
- :mod:`.esa`: errors per system by severity, the MQM-style weighted score, the ESA score
  summary and a system ranking with significance;
- :mod:`.agreement`: agreement on spans between judges (character/token F1, token κ);
- :mod:`.prefill`: spans proposed from paraeval's word aligner, and the proposals' precision;
- :mod:`.jsonl`: an annotation as a JSON line (paraeval's or Appraise's span shape), the
  export side of ``annotation.judging.protocols.esa.parsers``.
"""
