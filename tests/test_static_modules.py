"""ES modules survive collectstatic: in production every relative import of the grid's
entry module, and of the judge's pages' modules (judging/absolute/rate.js and judging/side_by_side/side_by_side.js
import judging/judge_form.js), points at a hashed file that collectstatic wrote
(config/storage.py).

The browser resolves ``import … from "./grid/model.js"`` against the URL of the
importing file, so the hashed ``alignment/grid.<hash>.js`` must import
``./grid/model.<hash>.js``; an unhashed name would be a file served without the release's
cache lifetime, or a 404 where only hashed files are kept.
"""

import json
import posixpath
import re
import shutil
from pathlib import Path

from django.core.management import call_command
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[1]
#: Each judging protocol's scripts are its package's static/judging/<name>/ (issue 39).
PROTOCOL_STATIC = sorted(ROOT.glob("annotation/judging/protocols/*/static"))
#: Static name -> source file, for the grid's modules and every judge page's module.
SOURCES = {
    f"{top.name}/{p.relative_to(top).as_posix()}": p
    for root in (ROOT / "static", *PROTOCOL_STATIC)
    for top in (root / "alignment", root / "judging")
    for p in sorted(top.rglob("*.js"))
}
MODULES = sorted(SOURCES)
IMPORT = re.compile(r"""^\s*(?:import|export)\b[^'"]*?\bfrom\s*["']([^"']+)["']""", re.MULTILINE)


def _imports(text: str) -> list[str]:
    return IMPORT.findall(text)


def test_the_grid_is_an_es_module_with_relative_imports():
    entry = (ROOT / "static/alignment/grid.js").read_text()
    found = _imports(entry)
    assert found, "grid.js imports its parts"
    assert all(spec.startswith("./") and spec.endswith(".js") for spec in found)
    for spec in found:
        assert (ROOT / "static/alignment" / spec).is_file(), spec
    for template in ("grid.html", "pair.html"):
        html = (ROOT / "templates/alignment" / template).read_text()
        assert '<script type="module" src="{% static \'alignment/grid.js\' %}"></script>' in html


def test_the_judge_pages_share_their_form_module_by_relative_import():
    side_by_side = ROOT / "annotation/judging/protocols/side_by_side"
    for page, template, form in (
        (
            "judging/absolute/rate.js",
            ROOT / "annotation/judging/protocols/absolute/templates/judging/absolute/rate.html",
            "../judge_form.js",
        ),
        (
            "judging/side_by_side/side_by_side.js",
            side_by_side / "templates/judging/side_by_side/page.html",
            "../judge_form.js",
        ),
    ):
        assert _imports(SOURCES[page].read_text()) == [form]
        assert posixpath.normpath(posixpath.join(posixpath.dirname(page), form)) == "judging/judge_form.js"
        html = template.read_text()
        assert f'<script type="module" src="{{% static \'{page}\' %}}"></script>' in html


def test_collectstatic_rewrites_module_imports_to_hashed_names(tmp_path):
    # The production storage, over the alignment and judging scripts only (the whole static
    # tree takes minutes to compress on a busy machine; .ci/production.sh collects it all).
    source = tmp_path / "source"
    shutil.copytree(ROOT / "static/alignment", source / "alignment")
    shutil.copytree(ROOT / "static/judging", source / "judging")
    for folder in PROTOCOL_STATIC:
        shutil.copytree(folder / "judging", source / "judging", dirs_exist_ok=True)
    root = tmp_path / "root"
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "config.storage.ManifestStaticStorage"},
    }
    with override_settings(
        STATIC_ROOT=root,
        STORAGES=storages,
        STATICFILES_DIRS=[source],
        STATICFILES_FINDERS=["django.contrib.staticfiles.finders.FileSystemFinder"],
    ):
        call_command("collectstatic", interactive=False, verbosity=0)
    tmp_path = root
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    for name in MODULES:
        hashed = manifest[name]
        assert hashed != name and re.search(r"\.[0-9a-f]{12}\.js$", hashed), hashed
        text = (tmp_path / hashed).read_text()
        source = _imports(SOURCES[name].read_text())
        rewritten = _imports(text)
        assert len(rewritten) == len(source)
        for before, after in zip(source, rewritten, strict=True):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), before))
            # The import now names the hashed file of the same module, which exists.
            assert posixpath.normpath(posixpath.join(posixpath.dirname(hashed), after)) == manifest[target]
            assert (tmp_path / manifest[target]).is_file()
