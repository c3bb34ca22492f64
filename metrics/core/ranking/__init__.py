"""Analysis of k-way rankings of candidates (one original, k candidates ordered at once, ties allowed).

One module per idea; import a name from the module that defines it:

- :mod:`.orders`: a judge's ranking as ordered groups of tied systems, and the nested-list
  form files use (``["a", ["b", "c"], "d"]``);
- :mod:`.plackett_luce`: system strengths (Plackett–Luce through choix), bootstrap intervals
  and significance clusters;
- :mod:`.win_rates`: head-to-head wins, ties and losses of every pair of systems;
- :mod:`.concordance`: agreement of judges' rankings, Kendall's W with tie correction;
- :mod:`.controls`: the copy of the original expected first, an unrelated sentence last.
"""
