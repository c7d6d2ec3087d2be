"""The README and docs/ name files, folders and other docs: each must exist, so the docs cannot rot silently
when code moves. Also keeps the README short (the details live in docs/)."""

import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A repository path as the docs write it: `paddle_compat/...`, `tools/...`, ... (not part of a longer path
# or a URL). Braces ({a,b}) and globs (*) are expanded against the tree.
PATH = re.compile(r"(?<![\w./~-])((?:paddle_compat|tools|benchmarks|tests|examples|docs)/[\w./{},*-]*)")
# The short form inside the package (`backends/wire/auth.py`), resolved under paddle_compat/.
SHORT = re.compile(r"(?<![\w./~-])((?:backends|ops)/[\w./{},*-]*)")


def _expand_braces(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(","):
        out.extend(_expand_braces(p[:m.start()] + alt + p[m.end():]))
    return out


def _exists(rel):
    rel = rel.split("::")[0].rstrip(".,;:")
    if not rel or rel.endswith("/."):
        return True
    for p in _expand_braces(rel):
        full = os.path.join(ROOT, p)
        if not (glob.glob(full) if "*" in p else os.path.exists(full)):
            return False
    return True


def _text(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def test_docs_exist():
    names = {os.path.basename(d) for d in DOCS}
    for want in ("single-machine.md", "parameter-server.md", "collective.md", "compatibility.md",
                 "performance.md", "internals.md", "testing.md", "threat-model.md"):
        assert want in names, "docs/%s is missing" % want


def test_relative_links_resolve():
    bad = []
    for doc in DOCS:
        for target in LINK.findall(_text(doc)):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), path))):
                bad.append("%s: link to %s" % (os.path.relpath(doc, ROOT), target))
    assert not bad, "links to missing files:\n" + "\n".join(bad)


def _anchors(path):
    """The anchors GitHub makes for a markdown file's headings (lower case, punctuation dropped, spaces -> -)."""
    out = set()
    for line in _text(path).splitlines():
        m = re.match(r"#+\s+(.*)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def test_anchors_resolve():
    bad = []
    for doc in DOCS:
        for target in LINK.findall(_text(doc)):
            if re.match(r"[a-z]+:", target) or "#" not in target:
                continue
            path, anchor = target.split("#", 1)
            full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if full.endswith(".md") and os.path.exists(full) and anchor not in _anchors(full):
                bad.append("%s: link to %s (no such heading)" % (os.path.relpath(doc, ROOT), target))
    assert not bad, "links to missing headings:\n" + "\n".join(bad)


def test_named_repository_paths_exist():
    bad = []
    for doc in DOCS:
        text = _text(doc)
        named = set(PATH.findall(text)) | {"paddle_compat/" + p for p in SHORT.findall(text)}
        for rel in sorted(named):
            if not _exists(rel):
                bad.append("%s names %s" % (os.path.relpath(doc, ROOT), rel))
    assert not bad, "paths named in the docs that do not exist:\n" + "\n".join(bad)


def test_paths_check_can_fail():
    assert not _exists("paddle_compat/backends/no_such_module.py")
    assert not _exists("tests/unit/test_{docs_links,no_such_test}.py")
    assert _exists("tests/unit/test_docs_links.py::test_paths_check_can_fail")
    assert "paddle_compat/backends/ps/auth.py" in PATH.findall("the former `paddle_compat/backends/ps/auth.py`")
    assert SHORT.findall("(`backends/ps/auth.py`)") == ["backends/ps/auth.py"]
    assert not _exists("paddle_compat/backends/ps/auth.py")


def test_readme_is_short():
    n = len(_text(os.path.join(ROOT, "README.md")).splitlines())
    assert n < 200, "README.md has %d lines: keep it under 200, details go to docs/" % n
