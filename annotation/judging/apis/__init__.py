"""Judging REST API: one view per operation, explicit serializers.

Judge endpoints answer only about the requesting judge's own assignment and expose
items by opaque tokens; a study the user does not judge is a 404. Researcher
endpoints need the study's researcher role (403 otherwise).

The package re-exports every view, serializer and helper that ``api_urls.py`` and the
other judging APIs use (``apis.JudgingSubmitApi``). Its modules:

* :mod:`.judge` — the judge's endpoints (next item, one item, the one before, submit);
* :mod:`.study` — the researcher's design, opening, closing and progress;
* :mod:`.results` — judge QC, exclusions, the CSV exports, importing judgments;
* :mod:`._common` — the schema tags and the answer to a judging error.
"""

from ._common import TAG_JUDGE, TAG_RESEARCHER, judging_error
from .judge import (
                    JudgingItemDetailApi,
                    JudgingItemPreviousApi,
                    JudgingItemSerializer,
                    JudgingLastItemApi,
                    JudgingNextItemApi,
                    JudgingNextSerializer,
                    JudgingScoresSerializer,
                    JudgingSubmitApi,
                    JudgingSubmitInputSerializer,
                    JudgingSubmitOutputSerializer,
                    get_judged_study,
)
from .results import (
                    CSVRenderer,
                    JudgingControlTestSerializer,
                    JudgingExclusionInputSerializer,
                    JudgingExclusionOutputSerializer,
                    JudgingExportTidyApi,
                    JudgingExportWideApi,
                    JudgingImportApi,
                    JudgingImportSummarySerializer,
                    JudgingJudgeExcludeApi,
                    JudgingJudgeIncludeApi,
                    JudgingJudgeQCSerializer,
                    JudgingQCApi,
                    JudgingQCOutputSerializer,
)
from .study import (
                    JudgingCloseApi,
                    JudgingControlCountsSerializer,
                    JudgingCriterionSerializer,
                    JudgingDesignApi,
                    JudgingDesignSerializer,
                    JudgingDesignUpdateApi,
                    JudgingExpectedScoresSerializer,
                    JudgingJudgeProgressSerializer,
                    JudgingOpenApi,
                    JudgingOpenJobApi,
                    JudgingOpenJobSerializer,
                    JudgingOpenSummarySerializer,
                    JudgingProgressApi,
                    JudgingProgressSerializer,
                    JudgingStatusOutputSerializer,
                    JudgingSystemProgressSerializer,
)

__all__ = [
    "TAG_JUDGE",
    "TAG_RESEARCHER",
    "CSVRenderer",
    "JudgingCloseApi",
    "JudgingControlCountsSerializer",
    "JudgingControlTestSerializer",
    "JudgingCriterionSerializer",
    "JudgingDesignApi",
    "JudgingDesignSerializer",
    "JudgingDesignUpdateApi",
    "JudgingExclusionInputSerializer",
    "JudgingExclusionOutputSerializer",
    "JudgingExpectedScoresSerializer",
    "JudgingExportTidyApi",
    "JudgingExportWideApi",
    "JudgingImportApi",
    "JudgingImportSummarySerializer",
    "JudgingItemDetailApi",
    "JudgingItemPreviousApi",
    "JudgingItemSerializer",
    "JudgingJudgeExcludeApi",
    "JudgingJudgeIncludeApi",
    "JudgingJudgeProgressSerializer",
    "JudgingJudgeQCSerializer",
    "JudgingLastItemApi",
    "JudgingNextItemApi",
    "JudgingNextSerializer",
    "JudgingOpenApi",
    "JudgingOpenJobApi",
    "JudgingOpenJobSerializer",
    "JudgingOpenSummarySerializer",
    "JudgingProgressApi",
    "JudgingProgressSerializer",
    "JudgingQCApi",
    "JudgingQCOutputSerializer",
    "JudgingScoresSerializer",
    "JudgingStatusOutputSerializer",
    "JudgingSubmitApi",
    "JudgingSubmitInputSerializer",
    "JudgingSubmitOutputSerializer",
    "JudgingSystemProgressSerializer",
    "get_judged_study",
    "judging_error",
]
