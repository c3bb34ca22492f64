"""Pages of the alignment app: the annotator's task list, grid and guidelines; the
researcher's alignment page, pair preview, scoring runs, results and exports.

One module per audience and page family; import each view from its module
(``urls``: ``from .views import annotators``, then ``annotators.grid``):

- ``annotators``: the task list, the next pair, the guidelines, the grid;
- ``study``: the researcher's alignment page and its forms;
- ``pairs``: exports, the pair list and one pair's read-only grid;
- ``scoring``: scoring runs, their results and exports;
- ``_shared``: downloads, the grid's data and import errors, shared by the others.
"""
