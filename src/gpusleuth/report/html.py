"""The HTML report: one self-contained page to attach to a ticket or a postmortem.

Verdict and the first root cause with its first fix on top, then every root cause with its fixes, the cascade,
the timeline picture (inline SVG), the other findings, every evidence line with the lines around it in its source
document, and the gaps. Nothing is loaded from anywhere: the CSS is inline, there is no script, and a
Content-Security-Policy forbids the page from fetching anything. Readable on a phone and printable (print CSS).

The lines around an evidence line come from the source documents, which `render(report, documents=...)` is
given by `gpusleuth diagnose`; a report rendered without them (from JSON, say) shows each evidence line alone
and says so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from jinja2 import Environment
from markupsafe import Markup

from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Role
from gpusleuth.model.report import VERDICTS, Report
from gpusleuth.report.decisive import decisive
from gpusleuth.report.fleet_view import group_lines, group_of, node_command, operand_rows, race_groups
from gpusleuth.report.sentences import first_sentences

CONTEXT = 3  # lines shown before and after each evidence line
_ROLE_TITLE = ((Role.CONTRIBUTING, "Contributing"), (Role.SYMPTOM, "Symptoms"), (Role.BLOCKED, "Blocked"), (Role.INFO, "Notes"))
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>\s*")


@dataclass
class Cited:
    """One evidence line as the page shows it: its anchor, and the lines around it when the source is at hand."""

    anchor: str
    evidence: Evidence
    context: list[tuple[int, str, bool]] = field(default_factory=list)  # (line number, text, is the cited line)
    why_alone: str | None = None


def render(report: Report, documents: list[Document] | tuple[Document, ...] | None = None) -> str:
    """A fleet's page (analysis/fleet.py) shows its operands by name with their counts and its races grouped by rule,
    not every node's components, cascade and timeline (report/fleet_view.py)."""
    fleet = report.extras.get("fleet")
    cited = _cite_all(report, documents, with_components=not fleet)
    anchor = {key: c.anchor for key, c in cited.items()}
    top = report.root_causes[0] if report.root_causes else None
    top_line = decisive(top) if top else None
    first_fix = top.fixes[0] if top and top.fixes else None
    by_artifact: dict[str, list[Cited]] = defaultdict(list)
    for c in cited.values():
        by_artifact[c.evidence.artifact or "(artifact not named)"].append(c)
    for items in by_artifact.values():
        items.sort(key=lambda c: c.evidence.line or 0)
    return _env().get_template("report").render(
        r=report,
        verdict=VERDICTS.get(report.verdict, report.verdict.upper()),
        top=top,
        top_line=top_line,
        first_fix=first_fix,
        others=[(title, [f for f in report.findings if f.role == role]) for role, title in _ROLE_TITLE],
        cascade="" if fleet else report.extras.get("cascade_text") or "",
        timeline=None if fleet else _timeline(report),
        races=[] if fleet else (report.extras.get("ordering") or {}).get("violations", []),
        fleet=fleet,
        operands=operand_rows(report) if fleet else [],
        race_groups=race_groups(report) if fleet else [],
        node_command=node_command(report) if fleet else "",
        timeline_command=node_command(report, "timeline") if fleet else "",
        group_lines=lambda f: group_lines(group, True) if (group := group_of(f)) else [],
        phases=report.extras.get("phases") or [],
        evidence=sorted(by_artifact.items()),
        have_documents=documents is not None,
        anchor=lambda e: anchor.get(_key(e), ""),
        sentence=first_sentences,
        health=report.extras.get("health") or [],
    )


def _key(e: Evidence) -> tuple:
    """One anchor per artifact:line (findings may quote the same line differently); a line-less one by its text."""
    return (e.artifact, e.line) if e.line is not None else (e.artifact, None, e.text)


def _cite_all(report: Report, documents, with_components: bool = True) -> dict[tuple, Cited]:
    """Every evidence line the page shows (findings, then components), each once, with its context."""
    index: dict[str, list[Document]] = defaultdict(list)
    for d in documents or ():
        index[d.artifact].append(d)
    out: dict[tuple, Cited] = {}
    lines = [e for f in report.findings for e in f.evidence] + [e for c in report.components if with_components for e in c.evidence]
    for e in lines:
        k = _key(e)
        if k in out:
            continue
        c = Cited(f"ev-{len(out) + 1}", e)
        doc = _holding(index.get(e.artifact, ()), e.line)
        if documents is None:
            c.why_alone = "the source documents were not given to this rendering"
        elif e.line is None:
            c.why_alone = "the evidence names no line number"
        elif doc is None:
            c.why_alone = "the line is not in the documents read (a summary gpusleuth derived, or a renamed artifact)"
        else:
            i = e.line - doc.first_line
            lo, hi = max(0, i - CONTEXT), min(len(doc.lines), i + CONTEXT + 1)
            c.context = [(doc.first_line + j, doc.lines[j], j == i) for j in range(lo, hi)]
        out[k] = c
    return out


def _holding(docs, line: int | None) -> Document | None:
    if line is None:
        return None
    for d in docs:
        if d.first_line <= line < d.first_line + len(d.lines):
            return d
    return None


def _timeline(report: Report) -> Markup | None:
    """The timeline picture from report/timeline_svg.py, inline (its XML declaration dropped), or None."""
    tagged = [e for e in report.timeline if e.tag and e.source]
    if not tagged:
        return None
    from gpusleuth.report.timeline_svg import render_svg

    violations = (report.extras.get("ordering") or {}).get("violations", [])
    try:
        svg = render_svg(list(report.timeline), violations, title="Timeline")
    except Exception:  # noqa: BLE001 - a picture that cannot be drawn is left out, never a broken report
        return None
    svg = _XML_DECL.sub("", svg)
    # the SVG's markup is produced by an autoescaping template (timeline_svg.py), so log text in it is escaped
    return Markup(svg.replace("<svg ", '<svg role="img" aria-label="Timeline of the events" ', 1))




_ENV: Environment | None = None


def _env() -> Environment:
    global _ENV
    if _ENV is None:
        from jinja2 import DictLoader

        _ENV = Environment(loader=DictLoader({"report": _TEMPLATE}), autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return _ENV


_CSS = """
:root { --fg:#1d1f23; --muted:#5d636d; --line:#d9dde3; --bg:#ffffff; --soft:#f5f6f8; --red:#b3261e; --amber:#8a5a00;
        --green:#1e6b34; --blue:#1f5fa8; --mark:#fff2b3; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto,
       "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 12px 16px 40px; overflow-wrap: anywhere; }
h1 { font-size: 1.25rem; margin: 4px 0 6px; line-height: 1.3; }
h2 { font-size: 1.1rem; margin: 26px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 16px 0 6px; }
p { margin: 6px 0; }
a { color: var(--blue); }
code, pre, .cite { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.86em; }
pre { margin: 6px 0; padding: 8px 10px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px;
      white-space: pre-wrap; overflow-wrap: anywhere; }
.cite { overflow-wrap: anywhere; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; font-weight: 700; color: #fff; background: #555;
           letter-spacing: .02em; }
.verdict.broken, .verdict.failing { background: var(--red); }
.verdict.degraded { background: #c98a00; color: #111; }
.verdict.healthy { background: var(--green); }
.meta { color: var(--muted); font-size: .88rem; }
.summary { border: 2px solid var(--line); border-left: 6px solid var(--red); border-radius: 8px; padding: 8px 12px; margin: 10px 0; }
.summary.healthy { border-left-color: var(--green); }
.summary h2 { margin: 0 0 4px; border: 0; padding: 0; font-size: .8rem; text-transform: uppercase; letter-spacing: .06em;
              color: var(--muted); }
.summary .title { font-weight: 700; margin: 0 0 4px; }
.summary .fix { margin-top: 8px; }
.fix h4, .summary .fix b { color: var(--green); }
.fix h4 { margin: 10px 0 2px; font-size: .95rem; }
nav { font-size: .9rem; margin: 8px 0; }
nav a { margin-right: 12px; white-space: nowrap; }
.finding { border-top: 1px solid var(--line); padding-top: 6px; margin-top: 12px; }
.finding .code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 700; }
.sev-critical, .sev-error { color: var(--red); }
.sev-warning { color: var(--amber); }
ul.ev { margin: 4px 0; padding-left: 18px; }
ul.ev li { margin: 2px 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .86rem; }
th, td { text-align: left; vertical-align: top; padding: 4px 6px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
td.k, th.k { white-space: nowrap; overflow-wrap: normal; }
figure { margin: 8px 0; }
figure svg { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.evidence { margin: 8px 0 14px; }
.evidence:target { outline: 3px solid var(--blue); outline-offset: 2px; }
.ctx { display: block; margin: 4px 0; padding: 6px 0; background: var(--soft); border: 1px solid var(--line); border-radius: 6px;
       font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .82rem; }
.ctx .l { display: grid; grid-template-columns: 4.5em 1fr; column-gap: 8px; padding: 0 8px; }
.ctx .n { color: var(--muted); text-align: right; user-select: none; }
.ctx .t { white-space: pre-wrap; overflow-wrap: anywhere; }
.ctx .hit { background: var(--mark); font-weight: 700; }
.alone { color: var(--muted); font-size: .85rem; }
footer { color: var(--muted); font-size: .8rem; margin-top: 30px; }
@media (max-width: 600px) {
  body { font-size: 14px; }
  main { padding: 8px 10px 30px; }
  h1 { font-size: 1.05rem; }
  .ctx .l { grid-template-columns: 3.2em 1fr; }
  nav { display: none; }
}
@media print {
  @page { margin: 14mm; }
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  nav, .noprint { display: none; }
  a { color: inherit; text-decoration: none; }
  h2, h3 { break-after: avoid; }
  .finding, .evidence, pre, figure, tr { break-inside: avoid; }
  .verdict, .ctx .hit, .summary { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  figure svg { border: 0; }
}
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="gpusleuth">
<title>{{ verdict }}: {{ r.headline | truncate(110) }}</title>
<style>""" + _CSS + """</style>
</head>
<body>
<main>
<header>
<span class="verdict {{ r.verdict }}" id="verdict">{{ verdict }}</span>
<h1 id="headline">{{ r.headline }}</h1>
<p class="meta">source <code>{{ r.source.description }}</code> · {{ r.source.recognised or 0 }} artifact(s) recognised ·
analysed {{ r.source.analysed_at }} by gpusleuth</p>
</header>
{% macro cite(e) %}{% set a = anchor(e) %}{% if a %}<a class="cite" href="#{{ a }}">{{ e.cite() }}</a>{% else %}<span class="cite">{{ e.cite() }}</span>{% endif %}{% endmacro %}
{% macro fixblock(fx) %}
<div class="fix">
<h4>{{ fx.kind.value | capitalize }}</h4>
<p>{{ fx.description }}</p>
{% if fx.commands %}<pre><code>{% for c in fx.commands %}$ {{ c }}
{% endfor %}</code></pre>{% endif %}
{% if fx.snippet %}<pre><code>{{ fx.snippet }}</code></pre>{% endif %}
</div>
{% endmacro %}
{% macro meta(f) %}<p class="meta">{{ f.code }} {{ f.name }} · layer {{ f.layer.value }} · severity {{ f.severity.value }} · confidence {{ '%.0f' | format(f.confidence * 100) }}%
{%- if f.node %} · node {{ f.node }}{% endif %}{% if f.component %} · component {{ f.component }}{% endif %}
{%- if f.caused_by %} · caused by {{ f.caused_by | join(', ') }}{% endif %}</p>{% endmacro %}
{% if top %}
<section class="summary" id="summary" aria-label="In short">
<h2>Root cause</h2>
<p class="title" id="first-root-cause"><span class="code">[{{ top.code }}]</span> {{ top.title }}</p>
{% if top_line %}<p id="first-line">Seen at {{ cite(top_line) }}: <code>{{ top_line.text }}</code></p>{% endif %}
{% if first_fix %}
<div class="fix" id="first-fix"><b>First fix ({{ first_fix.kind.value }}):</b> {{ sentence(first_fix.description) }}
{% if first_fix.commands %}<pre><code>{% for c in first_fix.commands %}$ {{ c }}
{% endfor %}</code></pre>{% endif %}
</div>
{% endif %}
</section>
{% else %}
<section class="summary {{ r.verdict }}" id="summary" aria-label="In short">
<h2>Root cause</h2>
<p class="title" id="first-root-cause">{% if r.verdict == 'healthy' %}None: the artifacts show the GPU stack working.{% else %}Not identified from these artifacts (see the gaps).{% endif %}</p>
</section>
{% endif %}
<nav aria-label="Sections">
{% if fleet %}<a href="#fleet">Fleet</a>{% endif %}
{% if r.root_causes %}<a href="#root-causes">Root causes</a>{% endif %}
{% if fleet and operands %}<a href="#cascade">Operands</a>{% elif cascade or r.components %}<a href="#cascade">Cascade</a>{% endif %}
{% if timeline or races or phases or race_groups %}<a href="#timeline">Timeline</a>{% endif %}
<a href="#findings">Other findings</a>
{% if evidence %}<a href="#evidence">Evidence</a>{% endif %}
<a href="#gaps">Gaps</a>
</nav>
{% if health and r.verdict == 'healthy' %}
<section id="health"><h2>Seen working</h2><ul class="ev">
{% for h in health %}<li>{{ h.what }} ({{ h.artifact }}{% if h.line %}:{{ h.line }}{% endif %})</li>{% endfor %}
</ul></section>
{% endif %}
{% if fleet %}
<section id="fleet">
<h2>Fleet</h2>
<p>{{ fleet.nodes }} node(s) · {{ fleet.failing_nodes }} with a finding at error or above · {{ fleet.without_errors }} without. One node in full: <code>{{ node_command }}</code></p>
<div class="scroll"><table>
<thead><tr><th class="k">#</th><th class="k">nodes</th><th class="k">code</th><th class="k">severity</th><th>cause</th><th>where it differs</th></tr></thead>
<tbody>
{% for row in fleet.causes %}<tr><td class="k">{{ loop.index }}</td><td class="k">{{ row.nodes if row.nodes is not none else 'all' }}</td><td class="k">{{ row.code }}</td><td class="k sev-{{ row.severity }}">{{ row.severity }}</td><td>{{ row.title }}</td><td>{{ row.differs | join('; ') or '-' }}</td></tr>
{% endfor %}
</tbody></table></div>
</section>
{% endif %}
{% if r.root_causes %}
<section id="root-causes">
<h2>Root cause{{ 's' if r.root_causes | length > 1 }}</h2>
{% for f in r.root_causes %}
<article class="finding" id="rc-{{ loop.index }}">
<h3 class="sev-{{ f.severity.value }}">{{ loop.index }}. <span class="code">[{{ f.code }}]</span> {{ f.title }}</h3>
{{ meta(f) }}
{% for ln in group_lines(f) %}{% if loop.first %}<ul>{% endif %}<li>{{ ln }}</li>{% if loop.last %}</ul>{% endif %}{% endfor %}
<p>{{ f.explanation }}</p>
{% if f.evidence %}<ul class="ev">{% for e in f.evidence %}<li>{{ cite(e) }} <code>{{ e.text | truncate(220) }}</code></li>{% endfor %}</ul>{% endif %}
{% for fx in f.fixes %}{{ fixblock(fx) }}{% endfor %}
</article>
{% endfor %}
</section>
{% endif %}
{% if fleet and operands %}
<section id="cascade">
<h2>The operands</h2>
<p>Each node's cascade: <code>{{ node_command }}</code></p>
<div class="scroll"><table>
<thead><tr><th>operand</th><th>layer</th><th>pods</th></tr></thead>
<tbody>
{% for o in operands %}<tr><td class="k">{{ o.name }}</td><td>{{ o.layer }}</td><td>{{ o.summary() }}</td></tr>
{% endfor %}
</tbody></table></div>
</section>
{% elif cascade or r.components %}
<section id="cascade">
<h2>The cascade</h2>
{% if cascade %}<pre>{{ cascade }}</pre>{% endif %}
{% if r.components %}
<div class="scroll"><table>
<thead><tr><th>component</th><th>node</th><th>layer</th><th>state</th><th>status</th><th>blocked by / reason</th><th>evidence</th></tr></thead>
<tbody>
{% for c in r.components %}
<tr><td>{{ c.name }}</td><td>{{ c.node or '-' }}</td><td>{{ c.layer.value }}</td><td>{{ c.state.value }}</td><td>{{ c.status or '-' }}</td>
<td>{% if c.blocked_by %}{{ c.blocked_by }}{% if c.waiting_on %} (waits on {{ c.waiting_on }}){% endif %}{% else %}{{ c.reason or '' }}{% endif %}</td>
<td>{% for e in c.evidence[:3] %}{{ cite(e) }}{% if not loop.last %}, {% endif %}{% endfor %}</td></tr>
{% endfor %}
</tbody></table></div>
{% endif %}
</section>
{% endif %}
{% if race_groups %}
<section id="timeline">
<h2>Timeline</h2>
{% for g in race_groups %}
<p class="sev-critical"><b>{{ 'Race' if g.certain else 'Probable race' }} on {{ g.nodes | length }} node(s):</b> {{ g.title }}. For example {{ g.example.node or 'the node' }}: {{ g.example.summary }}</p>
{% endfor %}
<p>Each node's events: <code>{{ timeline_command }}</code></p>
</section>
{% elif timeline or races or phases %}
<section id="timeline">
<h2>Timeline</h2>
{% for v in races %}
<p class="sev-critical"><b>{{ 'Race' if v.certain else 'Probable race' }} on {{ v.node or 'the node' }}:</b> {{ v.summary }}</p>
<ul class="ev">
<li>late: <span class="cite">{{ v.then.artifact }}:{{ v.then.line }}</span> <code>{{ v.then.text }}</code></li>
{% if v.first %}<li>awaited: <span class="cite">{{ v.first.artifact }}:{{ v.first.line }}</span> <code>{{ v.first.text }}</code></li>{% endif %}
</ul>
{% endfor %}
{% if phases %}<ul>{% for p in phases %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
{% if timeline %}<figure>{{ timeline }}</figure>{% endif %}
</section>
{% endif %}
<section id="findings">
<h2>Other findings</h2>
{% set ns = namespace(any=false) %}
{% for title, items in others if items %}{% set ns.any = true %}
<h3>{{ title }}</h3>
{% for f in items %}
<div class="finding">
<p class="sev-{{ f.severity.value }}"><span class="code">[{{ f.code }}]</span> {{ f.title }}</p>
{{ meta(f) }}
{% if f.evidence %}<ul class="ev">{% for e in f.evidence[:5] %}<li>{{ cite(e) }} <code>{{ e.text | truncate(220) }}</code></li>{% endfor %}</ul>{% endif %}
</div>
{% endfor %}
{% endfor %}
{% if not ns.any %}<p>None.</p>{% endif %}
</section>
{% if evidence %}
<section id="evidence">
<h2>Evidence</h2>
{% if not have_documents %}<p class="alone">The source documents were not given to this rendering, so each evidence line is shown alone, without the lines around it.</p>{% endif %}
{% for artifact, items in evidence %}
<h3 class="cite">{{ artifact }}</h3>
{% for c in items %}
<div class="evidence" id="{{ c.anchor }}">
<span class="cite">{{ c.evidence.cite() }}</span>
{% if c.context %}
<div class="ctx" role="group">{% for n, t, hit in c.context %}<div class="l{{ ' hit' if hit }}"><span class="n">{{ n }}</span><span class="t">{{ t }}</span></div>{% endfor %}</div>
{% else %}
<div class="ctx"><div class="l hit"><span class="n">{{ c.evidence.line or '' }}</span><span class="t">{{ c.evidence.text }}</span></div></div>
{% if have_documents %}<p class="alone">Shown alone: {{ c.why_alone }}.</p>{% endif %}
{% endif %}
</div>
{% endfor %}
{% endfor %}
</section>
{% endif %}
<section id="gaps">
<h2>Gaps: what could not be seen</h2>
{% set skipped = r.checks | selectattr('status', 'in', ['skipped', 'error']) | list %}
{% if r.gaps or skipped %}<ul>
{% for g in r.gaps %}<li>{{ g }}</li>{% endfor %}
{% for c in skipped %}<li>check {{ c.code }} {{ c.status }}: {{ c.reason or '' }}</li>{% endfor %}
</ul>{% else %}<p>None recorded.</p>{% endif %}
</section>
<footer>gpusleuth report · {{ r.source.analysed_at }} · every conclusion cites artifact:line evidence above.</footer>
</main>
</body>
</html>
"""
