"""Tournament reports for people: Markdown here (also from SQL, ``tournament_report``);
HTML from the same result through an autoescaped template (:mod:`siselect.client.report_html`).

Each duel shows the rows of D', the judge's votes, both answers and the verdict; when
a reference query disagrees with the judge on D', the duel is marked as evidence
against the reference (paper section IV).

Every text in a report may come from someone untrusted (candidate SQL, database values,
column names, the question, the judge's reply), and Markdown passes raw HTML and links
through to whoever renders it: text goes through :func:`md_text` or :func:`md_code`, SQL
into a fence longer than any run of backticks it holds.
"""

import html
import json
import re
from typing import Any

from siselect.instances.render import markdown_table, to_markdown

# Backslash-escaped: what makes links and images ([ ]), code spans (`), escapes (\) and
# template syntax of some renderers ({ }). Emphasis stays: it cannot carry markup, and
# identifiers (height_cm) stay readable.
_MD_PUNCTUATION = re.compile(r"([\\`\[\]{}])")


def md_text(text: Any) -> str:
    """``text`` as literal Markdown inline text: Markdown syntax backslash-escaped and
    ``&``, ``<``, ``>`` as entities, so no renderer makes a tag, a link or an image of it."""
    return html.escape(_MD_PUNCTUATION.sub(r"\\\1", str(text)), quote=False)


def _inline(text: Any) -> str:
    """Text on one line (a newline could start a heading, a list or a raw HTML block)."""
    return md_text(" ".join(str(text).split()))


def _backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def md_code(text: Any) -> str:
    """``text`` as an inline code span (shown literally), on one line."""
    flat = " ".join(str(text).split())
    tick = "`" * (_backtick_run(flat) + 1)
    return f"{tick} {flat} {tick}"


def md_fence(text: Any, info: str = "sql") -> str:
    """A fenced code block no line of ``text`` can close."""
    text = str(text)
    fence = "`" * max(3, _backtick_run(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _table(columns: list[Any], rows: list[list[Any]]) -> str:
    return markdown_table(columns, rows, md_text)


def _answer(label: str, answer: dict[str, Any] | None) -> str:
    if not answer:
        return ""
    return f"**{label}**\n\n{_table(answer['columns'], answer['rows'])}\n"


def _votes(judge: dict[str, Any]) -> str:
    lines = []
    for i, vote in enumerate(judge.get("votes") or [], 1):
        parsed = vote.get("rows")
        shown = (
            md_code(json.dumps(parsed, ensure_ascii=False))
            if parsed is not None
            else f"unreadable ({_inline(vote.get('error') or 'no answer')})"
        )
        lines.append(f"{i}. {shown}")
    return "\n".join(lines)


def duel_markdown(d: dict[str, Any]) -> str:
    parts = [
        f"### Candidate {d['a']} (A) vs candidate {d['b']} (B): "
        f"{ {'a': 'A wins', 'b': 'B wins'}.get(d['verdict'], 'draw') }\n",
        f"{_inline(d['reason'])}.\n",
    ]
    if d.get("instance"):
        parts.append(f"Separating instance D' ({d.get('rows')} rows):\n")
        parts.append(to_markdown(d["instance"], escape=md_text))
        judge = d.get("judge", {})
        answer = md_code(json.dumps(judge.get("rows"), ensure_ascii=False))
        parts.append(f"\n**Judge ({_inline(judge.get('name'))})**: {answer}\n")
        votes = _votes(judge)
        if votes:
            parts.append(f"Votes:\n\n{votes}\n")
        parts.append(_answer("A on D'", d["answers"]["a"]))
        parts.append(_answer("B on D'", d["answers"]["b"]))
        if d.get("reference_answer"):
            parts.append(_answer("Reference on D'", d["reference_answer"]))
        if d.get("evidence_against_reference"):
            parts.append(
                "> **Evidence against the reference**: on these rows the judge's answer "
                "differs from the reference query's, so the reference may be wrong.\n"
            )
    return "\n".join(parts)


def markdown_report(result: dict[str, Any]) -> str:
    """The whole tournament as Markdown."""
    lines = [f"# Tournament: {_inline(result.get('question', ''))}\n"]
    winner = result.get("winner")
    for drop in result.get("dropped", []):
        lines.append(
            f"- candidate {drop['index']} dropped out: {_inline(drop['message'])} "
            f"(SQLSTATE {_inline(drop['sqlstate'])})\n"
        )
    if winner is None:
        lines.append(f"No winner: {_inline(result.get('reason'))}.\n")
        return "\n".join(lines)
    lines.append(
        f"**Winner**: candidate {winner['index']} (decided by {_inline(result['decided_by'])}; "
        f"judge: {_inline(result['judge'])})\n\n{md_fence(winner['sql'])}\n"
    )
    rows = [
        [g["representative"], ", ".join(map(str, g["members"])), g["size"], g["score"]]
        for g in result.get("groups", [])
    ]
    lines.append("## Scores\n")
    lines.append(_table(["representative", "members", "group size", "score"], rows))
    lines.append("\n## Duels\n")
    lines += [duel_markdown(d) for d in result.get("duels", [])]
    return "\n".join(lines)
