"""REST API of the alignment app: one view per operation, explicit serializers.

Researchers (of the study) import pairs and system alignments, set k, hand out
pairs, export, and run scoring; annotators read their assignments, autosave
drafts and submit. The grid page itself uses the draft and submit endpoints.

One module per audience and concern; every name is re-exported here, so
``api_urls`` and ``from annotation.alignment import apis`` keep working:

- ``data``: the researcher's pairs, systems, settings, assignment and exports;
- ``scoring``: the researcher's scoring runs;
- ``annotators``: the annotator's pairs, drafts and submissions;
- ``_common``: reading an upload, the link-list field and the error bodies.
"""

from ._common import AlignmentErrorSerializer, AlignmentImportErrorSerializer
from .annotators import (
    AlignmentAssignmentDetailApi,
    AlignmentAssignmentListApi,
    AlignmentAssignmentOutputSerializer,
    AlignmentConflictSerializer,
    AlignmentDraftOutputSerializer,
    AlignmentDraftSaveApi,
    AlignmentLinksInputSerializer,
    AlignmentSubmitApi,
    AlignmentSubmitOutputSerializer,
    get_own_assignment,
)
from .data import (
    AlignmentAssignApi,
    AlignmentAssignOutputSerializer,
    AlignmentConfigDetailApi,
    AlignmentConfigOutputSerializer,
    AlignmentConfigUpdateApi,
    AlignmentExportApi,
    AlignmentPairListApi,
    AlignmentPairOutputSerializer,
    AlignmentPairsImportApi,
    AlignmentPairsImportOutputSerializer,
    AlignmentSystemImportApi,
    AlignmentSystemListApi,
    AlignmentSystemOutputSerializer,
)
from .scoring import (
    AlignmentScoringRunCreateApi,
    AlignmentScoringRunDetailApi,
    AlignmentScoringRunListApi,
    AlignmentScoringRunOutputSerializer,
)

__all__ = [
    "AlignmentAssignApi",
    "AlignmentAssignOutputSerializer",
    "AlignmentAssignmentDetailApi",
    "AlignmentAssignmentListApi",
    "AlignmentAssignmentOutputSerializer",
    "AlignmentConfigDetailApi",
    "AlignmentConfigOutputSerializer",
    "AlignmentConfigUpdateApi",
    "AlignmentConflictSerializer",
    "AlignmentDraftOutputSerializer",
    "AlignmentDraftSaveApi",
    "AlignmentErrorSerializer",
    "AlignmentExportApi",
    "AlignmentImportErrorSerializer",
    "AlignmentLinksInputSerializer",
    "AlignmentPairListApi",
    "AlignmentPairOutputSerializer",
    "AlignmentPairsImportApi",
    "AlignmentPairsImportOutputSerializer",
    "AlignmentScoringRunCreateApi",
    "AlignmentScoringRunDetailApi",
    "AlignmentScoringRunListApi",
    "AlignmentScoringRunOutputSerializer",
    "AlignmentSubmitApi",
    "AlignmentSubmitOutputSerializer",
    "AlignmentSystemImportApi",
    "AlignmentSystemListApi",
    "AlignmentSystemOutputSerializer",
    "get_own_assignment",
]
