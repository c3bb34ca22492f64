"""Word alignments between two tokenized sentences, and the files they travel in.

An :class:`Alignment` is the value the alignment grid edits, the aligner
produces and ParaMetric scores (Callison-Burch, Cohn & Lapata 2008, §3–§4).
A link ``(i, j)`` joins token ``i`` of sentence 1 and token ``j`` of sentence 2,
0-based, and is either *sure* or *possible* (Och & Ney 2003, §5).

Storage convention: ``sure`` and ``possible`` are stored **disjointly** — a
link is in exactly one of them. Och & Ney's set P ("possible") includes S, so
wherever a formula says P we use ``sure | possible`` (:attr:`Alignment.links`).
Building an alignment with a link in both sets keeps it as sure (a sure link is
also possible by definition, so nothing is lost).

Formats (all readers are all-or-nothing: the first problem raises
:class:`FormatError` naming the line, and the column or the link, and nothing is
returned):

``pharaoh``
    One sentence pair per line, links separated by spaces: ``i-j`` sure, ``ipj``
    possible, 0-based (the format of Moses, fast_align and eflomal). An empty
    line is a pair without links, so the line count is the pair count.
``naacl``
    The HLT-NAACL 2003 / ACL 2005 shared-task format (Mihalcea & Pedersen 2003):
    one link per line, ``sent i j [S|P] [confidence]``, everything 1-based. A
    missing S|P field means S. Position 0 is a link to NULL (an unaligned word)
    and adds no cell to the grid, so it is accepted and skipped; the confidence
    column is validated as a number and ignored (an :class:`Alignment` has no
    confidences). Sentences without links do not appear, so the number of pairs
    comes from ``n_pairs``/``pairs`` or else the largest sentence id.
``json`` / ``jsonl``
    One object per pair, ``{"tokens1": [...], "tokens2": [...], "sure":
    [[i, j], ...], "possible": [[i, j], ...]}``; ``json`` is a list of such
    objects (a single object is accepted as one pair), ``jsonl`` one object a
    line. ``tokens1``/``tokens2`` may be omitted or ``null`` when unknown.
``csv``
    Header ``pair,i,j,kind``; one link a row; ``pair`` is the 0-based pair index,
    ``i``/``j`` 0-based, ``kind`` ``sure`` or ``possible``. Like NAACL, the pair
    count comes from ``n_pairs``/``pairs`` or the largest pair index.

Wherever the tokens are known (JSON, or ``pairs=`` given to a reader), every
link is checked against the token counts.

Layout
------
:mod:`.model` holds :class:`Alignment`, :class:`Link`, :class:`FormatError` and the
checks every reader shares; :mod:`.text_formats` the line formats (Pharaoh, NAACL);
:mod:`.table_formats` JSON / JSON Lines and CSV; :mod:`.io` the dispatch by format name
and alignment groups. Import each name from the module that defines it; this package holds no names of its own.
"""
