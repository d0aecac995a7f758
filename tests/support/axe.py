"""The accessibility check of the browser tier: axe-core (Deque's rules engine, from npm: ``package.json``, installed
by ``make test`` with ``npm ci``) run inside the page by playwright.

:func:`serious_violations` injects ``node_modules/axe-core/axe.min.js`` into the page and runs it with the WCAG 2.0,
2.1 and 2.2 A and AA rules (the bar of issue 41: WCAG 2.2 AA), returning the violations whose impact is serious or
critical, each with the elements it found, so a failing test says what to fix where.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
MISSING = "axe-core is missing: run `make test` (it runs `npm ci`) or `npm ci --ignore-scripts` in the project folder."
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa")
SERIOUS = ("serious", "critical")

RUN = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => ({target: n.target.join(' '), summary: n.failureSummary,
                                          html: n.html.slice(0, 160)}))}));
}"""


def serious_violations(page) -> list[dict]:
    """The serious and critical WCAG A/AA violations axe-core finds on the page as it is now."""
    if not AXE.exists():
        pytest.fail(MISSING)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return [v for v in page.evaluate(RUN, list(TAGS)) if v["impact"] in SERIOUS]


def described(violations: list[dict]) -> str:
    """The violations as lines a person can act on: rule, impact, what it asks, and where."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        lines.extend(f"    at {node['target']}: {node['summary'].splitlines()[-1].strip() if node['summary'] else ''}"
                     f" | {node['html']}" for node in v["nodes"])
    return "\n".join(lines)
