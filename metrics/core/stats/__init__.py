"""Statistics for human and automatic paraphrase evaluation (pure Python, no Django).

The canonical data shapes are described in :mod:`metrics.core.stats.data`.  The main
entry points:

* :func:`build_report` — everything a study report needs, as a JSON-able dict;
* :func:`judge_qc` — per-judge quality control from controls, timing, straight-lining;
* :func:`simulate_judgments` — a seeded judge simulator returning the canonical frame;
* the building blocks: correlations, agreement coefficients, significance tests.
"""

from .agreement import (
    CriterionAgreement,
    IncompleteDesignError,
    JudgePairResult,
    agreement_by_criterion,
    cohen_kappa,
    criterion_agreement,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    krippendorff_alphas,
    pairwise_cohen_kappa,
    pairwise_pearson,
)
from .correlation import (
    METHODS,
    correlation,
    correlation_with_ci,
    correlations,
    kendall,
    pairwise_accuracy,
    pearson,
    segment_and_system,
    spearman,
    system_means,
)
from .data import (
    CRITERIA,
    DEFAULT_CONTROL_EXPECTED,
    JUDGMENT_COLUMNS,
    RatingMatrix,
    rating_matrix,
    validate_judgments,
    validate_metric_scores,
)
from .interjudge import interjudge_correlations
from .metric_human import LeaderboardRow, MetricHumanCorrelation, metric_human_correlations, metric_leaderboard
from .qc import DEFAULT_QC_TESTS, judge_qc
from .reference import DEFAULT_SUBSET_MIN, CriterionCorrelation, criterion_correlations, human_reference
from .report import REPORT_SCHEMA, build_report
from .results import (
    AgreementResult,
    BootstrapDifferenceResult,
    ConfidenceInterval,
    ControlTest,
    CorrelationResult,
    DocumentLevelResult,
    ICCResult,
    JudgePlanRow,
    JudgeQC,
    PermutationResult,
    SystemRank,
    WilliamsResult,
)
from .significance import (
    LeaderboardTests,
    document_level_test,
    metric_pairwise_tests,
    paired_bootstrap,
    permutation_test,
    system_ranking,
    williams_test,
    williams_test_scores,
)
from .simulate import DEFAULT_SYSTEMS, judges_needed, plan_judges, simulate_judgments, simulate_metric_scores

__all__ = [
    "AgreementResult",
    "BootstrapDifferenceResult",
    "CRITERIA",
    "ConfidenceInterval",
    "ControlTest",
    "CorrelationResult",
    "CriterionAgreement",
    "CriterionCorrelation",
    "DEFAULT_CONTROL_EXPECTED",
    "DEFAULT_QC_TESTS",
    "DEFAULT_SUBSET_MIN",
    "DEFAULT_SYSTEMS",
    "DocumentLevelResult",
    "ICCResult",
    "IncompleteDesignError",
    "JUDGMENT_COLUMNS",
    "JudgePairResult",
    "JudgePlanRow",
    "JudgeQC",
    "LeaderboardRow",
    "METHODS",
    "MetricHumanCorrelation",
    "PermutationResult",
    "REPORT_SCHEMA",
    "RatingMatrix",
    "SystemRank",
    "WilliamsResult",
    "agreement_by_criterion",
    "build_report",
    "cohen_kappa",
    "correlation",
    "correlation_with_ci",
    "correlations",
    "criterion_agreement",
    "criterion_correlations",
    "document_level_test",
    "fleiss_kappa",
    "human_reference",
    "icc",
    "interjudge_correlations",
    "judge_qc",
    "judges_needed",
    "kendall",
    "krippendorff_alpha",
    "krippendorff_alphas",
    "metric_human_correlations",
    "metric_pairwise_tests",
    "LeaderboardTests",
    "metric_leaderboard",
    "paired_bootstrap",
    "pairwise_accuracy",
    "pairwise_cohen_kappa",
    "pairwise_pearson",
    "pearson",
    "permutation_test",
    "plan_judges",
    "rating_matrix",
    "segment_and_system",
    "simulate_judgments",
    "simulate_metric_scores",
    "spearman",
    "system_means",
    "system_ranking",
    "validate_judgments",
    "validate_metric_scores",
    "williams_test",
    "williams_test_scores",
]
