"""Static files storage for production: whitenoise's compressed manifest storage, with
JavaScript module imports rewritten to the hashed names.

``collectstatic`` hashes every file name (``grid.js`` → ``grid.3f1c….js``) so that pages
can be cached for a year. An ES module (``static/alignment/grid.js``) imports its parts by
relative URL (``import … from "./grid/model.js"``); Django rewrites such imports (and
``export … from``) in ``.js`` files only when ``support_js_module_import_aggregation`` is
on, which it is not by default. Without it the hashed ``grid.js`` would import the
unhashed ``./grid/model.js``, which is served without the long cache lifetime and may
not match the release (tests/test_static_modules.py checks the rewrite).
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestStaticStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
