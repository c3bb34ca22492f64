"""REST API of the alignment app: one view per operation, explicit serializers.

Researchers (of the study) import pairs and system alignments, set k, hand out
pairs, export, and run scoring; annotators read their assignments, autosave
drafts and submit. The grid page itself uses the draft and submit endpoints.

One module per audience and concern; import each name from its module
(``api_urls``: ``from .apis import data``, then ``data.AlignmentPairListApi``):

- ``data``: the researcher's pairs, systems, settings, assignment and exports;
- ``scoring``: the researcher's scoring runs;
- ``annotators``: the annotator's pairs, drafts and submissions;
- ``_shared``: reading an upload, the link-list field and the error bodies.
"""
