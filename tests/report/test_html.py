"""--format html: self-contained, every evidence anchor resolves, evidence lines carry their context from the
source documents (or say why not), and the root cause and first fix come first. The browser test is
test_html_browser.py."""

from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.cli import cli
from gpusleuth.report.html import render
from gpusleuth.sources import example_names, open_source


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.ids, self.hrefs, self.tags, self.resources, self.classes = set(), [], [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            assert a["id"] not in self.ids, f"duplicate id {a['id']}"
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        for key in ("src", "srcset", "data", "poster"):
            if a.get(key):
                self.resources.append(a[key])
        if tag == "link":
            self.resources.append(a.get("href"))
        self.classes.append(a.get("class") or "")


def source_and_report(name):
    src = open_source(f"example:{name}")
    return src, diagnose(src)


@pytest.mark.parametrize("name", example_names())
def test_the_page_is_self_contained_and_every_anchor_resolves(name):
    src, rep = source_and_report(name)
    text = render(rep, documents=src.documents)
    page = Page(text)
    assert "script" not in page.tags and not page.resources, "no script, no external resource"
    assert "default-src 'none'" in text and "http://" not in text.split("<body>")[0] and "https://" not in text.split("<body>")[0]
    anchors = [h[1:] for h in page.hrefs if h.startswith("#")]
    assert anchors and all(a in page.ids for a in anchors), set(anchors) - page.ids
    cites = {e.cite() for f in rep.findings for e in f.evidence}
    assert all(c in text for c in cites)
    assert "first-root-cause" in page.ids and "first-fix" in page.ids
    assert text.index('id="first-fix"') < text.index('id="root-causes"') < text.index('id="evidence"') < text.index('id="gaps"')
    if rep.timeline and any(e.tag for e in rep.timeline):
        assert "<svg" in text and "<?xml" not in text


def test_evidence_lines_carry_the_lines_around_them_from_the_source():
    src, rep = source_and_report("peermem-race")
    text = render(rep, documents=src.documents)
    top = rep.root_causes[0]
    e = next(e for e in top.evidence if e.line and "ERROR" in e.text)
    doc = next(d for d in src.documents if d.artifact == e.artifact and d.first_line <= e.line < d.first_line + len(d.lines))
    before = doc.lines[e.line - doc.first_line - 1]
    after = doc.lines[e.line - doc.first_line + 1]
    from markupsafe import escape

    assert f'<span class="n">{e.line - 1}</span><span class="t">{escape(before)}</span>' in text
    assert f'<span class="n">{e.line + 1}</span><span class="t">{escape(after)}</span>' in text


def test_without_the_source_documents_each_line_is_shown_alone_and_the_page_says_so():
    _, rep = source_and_report("peermem-race")
    text = render(rep)
    assert "shown alone, without the lines around it" in text
    assert '<div class="l hit">' in text and '<div class="l">' not in text


def test_log_text_cannot_inject_markup(tmp_path):
    (tmp_path / "dmesg.txt").write_text(
        "[  12.345678] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus. <script>alert(1)</script>\n")
    src = open_source(str(tmp_path))
    text = render(diagnose(src), documents=src.documents)
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_cli_writes_html():
    res = CliRunner().invoke(cli, ["diagnose", "example:device-plugin-unregistered", "--format", "html"])
    assert res.exit_code == 1 and res.output.startswith("<!DOCTYPE html>")
    assert 'class="ctx"' in res.output
