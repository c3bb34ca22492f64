"""The columns many report tables share, named once, so that a system, a rank, a count, a
correlation or an interval reads the same in every protocol's tables and in every export (the
page, CSV headers, LaTeX heads). A table names its own columns where they are its alone."""

from __future__ import annotations

from .model import Column

SYSTEM = Column("system", "System", latex="System")
RANK = Column("rank", "Rank", "int", latex="Rank")
CLUSTER = Column("cluster", "Cluster", "int", latex="Cl.")
N = Column("n", "n", "int", latex="$n$")
N_JUDGMENTS = Column("n_judgments", "Judgments", "int", latex="$n$")
N_SYSTEMS = Column("n_systems", "Systems", "int")
LEVEL = Column("level", "Level", latex="Level")
METRIC = Column("metric", "Metric", latex="Metric")
CRITERION = Column("criterion", "Criterion", latex="Criterion")
JUDGE = Column("judge", "Judge")
PVALUE = Column("pvalue", "p", "p")
PASSES = Column("passes", "Passes", "bool")
WINS = Column("wins", "Wins", "int", latex="Wins")
TIES = Column("ties", "Ties", "int", latex="Ties")
LOSSES = Column("losses", "Losses", "int", latex="Losses")

# Correlations of a metric with the judges.
PEARSON = Column("pearson", "r", "r", latex="$r$")
SPEARMAN = Column("spearman", "ρ", "r", latex="$\\rho$")
KENDALL_B = Column("kendall_b", "τb", "r", latex="$\\tau_b$")
PEARSON_WITH_CONTROLS = Column("pearson_with_controls", "r +controls", "r", latex="$r_{+c}$")


def ci_column(ci: str, key: str = "ci") -> Column:
    """An interval at the report's level ``ci`` (e.g. "95 %"): two CSV columns, ``<key>_low`` and ``<key>_high``."""
    return Column(key, f"{ci} CI", "ci", latex="CI")
