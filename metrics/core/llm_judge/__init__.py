"""LLM judges as metrics: ``llm-judge`` rates each pair as a human judge would.

The LLM gets what the human judges got — the study's criteria, their scale labels
and the instructions (PEM's four 1–5 criteria by default) — one item at a time, and
answers on the same scale, so that its ratings go into the report like any
metric's and can be set beside the humans' agreement with each other (the human
ceiling; Proietti et al., ACL 2025, report metric–human agreement relative to it).
LLM-as-a-judge: Zheng et al. 2023 (NeurIPS, "Judging LLM-as-a-Judge with MT-Bench
and Chatbot Arena"); Chiang & Lee 2023 (ACL, "Can Large Language Models Be an
Alternative to Human Evaluations?").

For an item (original R, candidate P) and criterion c the metric renders the
prompt template with R, P and c's name, help and scale (:mod:`.prompt`), asks the
model with greedy decoding (:mod:`.backends`), and parses the answer: the first
number on c's scale, or a scale label it starts with. The segment statistics are
``(rating, 1, 0)`` for a parsed answer and ``(0, 0, 1)`` for an unparseable one,
so the corpus score is the mean rating over parsed answers and the number of
unparseable answers adds up like any statistic (shown per system on the run's
page; never dropped silently: the sentence score is empty there).

Answers are cached by (model, decoding, rendered prompt) (:mod:`.cache`). The
signature records the model (an in-process file by name and hash), the template
(default version or custom, and its hash), the rubric's hash, the criterion and
the decoding settings — never the endpoint's URL or key.

Layout: :mod:`.rubric` (criteria and scales as data, PEM's default),
:mod:`.prompt` (template, rendering, parsing), :mod:`.backends` (endpoint and
in-process models), :mod:`.cache`, :mod:`.metric` (the registered metric).
"""
