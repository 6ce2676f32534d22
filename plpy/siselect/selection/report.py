"""Tournament reports for people: Markdown here (also from SQL, ``tournament_report``);
HTML from the same result through an autoescaped template (:mod:`siselect.client.report_html`).

What a report shows, and in which order, is :func:`report_view`'s. Each duel shows both
texts, the rows of D', every answer on D' (the judge's too) and the verdict; when
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

from siselect.instances.render import markdown_table
from siselect.selection.report_view import Inputs, report_view

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
    if not rows:  # a header over nothing reads as a rendering fault
        names = ", ".join(md_text(c) for c in columns)
        return f"(0 rows; columns: {names})" if columns else "(0 rows)"
    return markdown_table(columns, rows, md_text)


def _sql(text: str | None) -> str:
    return md_fence(text) if text else "(SQL text not in the result)"


_MARKS = {"win": "win", "loss": "loss", "draw": "draw", None: "-"}


def _summary(view: dict[str, Any]) -> list[str]:
    lines = ["## Summary\n"]
    if view["judge_failure"]:
        lines.append(f"**The judge could not answer**: {_inline(view['judge_failure'])}.\n")
    winner = view["winner"]
    if winner is None:
        lines.append(f"No winner: {_inline(view['reason'])}.\n")
    else:
        lines.append(
            f"**Winner**: candidate {winner['index']}, decided by "
            f"{_inline(view['decided_by'])}: {_inline(view['why'])} "
            f"(judge: {_inline(view['judge'])}).\n\n{md_fence(winner['sql'])}\n"
        )
    if view["groups"]:
        lines.append("## Scores\n")
        lines.append(_table(
            ["group", "members", "size", "score", "won", "drawn", "lost", "rows on D"],
            [[f"#{g['representative']}", ", ".join(map(str, g["members"])), g["size"],
              g["score"], g["wins"], g["draws"], g["losses"], g.get("rows_on_d")]
             for g in view["groups"]]))
    if len(view["reps"]) > 1:
        lines.append("\n**Verdicts** (row group against column group):\n")
        lines.append(_table([""] + [f"#{r}" for r in view["reps"]],
                            [[f"#{r}"] + [_MARKS[m] for m in row]
                             for r, row in zip(view["reps"], view["matrix"], strict=True)]))
    return lines


def _inputs(view: dict[str, Any]) -> list[str]:
    lines = [f"**Question**: {_inline(view['question'])}\n"]
    if view["evidence"]:
        lines.append(f"**Evidence**: {_inline(view['evidence'])}\n")
    if view["reference"]:
        lines.append(f"**Reference**:\n\n{md_fence(view['reference'])}\n")
    return lines


def _candidates(view: dict[str, Any]) -> list[str]:
    lines = ["## Candidates\n"]
    for c in view["candidates"]:
        if c["dropped"]:
            drop = c["dropped"]
            note = (f"dropped out: {_inline(drop['message'])} "
                    f"(SQLSTATE {_inline(drop['sqlstate'])})")
        elif c["group"] is None:
            note = "not run"
        else:
            note = f"group #{c['group']}" + (", the winner" if c["winner"] else "")
        lines.append(f"### Candidate {c['index']} ({note})\n")
        if c["sql"]:
            lines.append(f"{md_fence(c['sql'])}\n")
    return lines


def _votes(votes: list[dict[str, Any]]) -> str:
    lines = []
    for i, vote in enumerate(votes, 1):
        parsed = vote.get("rows")
        shown = (
            md_code(json.dumps(parsed, ensure_ascii=False))
            if parsed is not None
            else f"unreadable ({_inline(vote.get('error') or 'no answer')})"
        )
        lines.append(f"{i}. {shown}")
    return "\n".join(lines)


def duel_markdown(d: dict[str, Any]) -> str:
    """One duel of :func:`report_view`: both texts, D' (the tables both queries read
    first, foreign-key context last), every answer on D' and the verdict."""
    parts = [
        f"### Candidate {d['a']} (A) vs candidate {d['b']} (B): {d['verdict_text']}\n",
        f"{_inline(d['reason'])}.\n",
        f"**A** (candidate {d['a']}):\n\n{_sql(d['sql_a'])}\n",
        f"**B** (candidate {d['b']}):\n\n{_sql(d['sql_b'])}\n",
    ]
    if d["separated"]:
        parts.append(f"Separating instance D' ({d['rows']} rows):\n")
        for t in d["tables"]:
            note = ", foreign-key context: rows the others refer to" if t["context"] else ""
            count = len(t["rows"])
            parts.append(f"#### {md_text(t['name'])} ({count} row{'' if count == 1 else 's'}"
                         f"{note})\n\n{_table(t['columns'], t['rows'])}\n")
        for answer in d["answers"]:
            parts.append(f"**{md_text(answer['label'])}**\n\n"
                         f"{_table(answer['columns'], answer['rows'])}\n")
        if d["judge_error"]:
            parts.append(f"The judge failed: {_inline(d['judge_error'])}\n")
        votes = _votes(d["votes"])
        if votes and len(d["votes"]) > 1:
            parts.append(f"Votes:\n\n{votes}\n")
        if d["evidence_against_reference"]:
            parts.append(
                "> **Evidence against the reference**: on these rows the judge's answer "
                "differs from the reference query's, so the reference may be wrong.\n"
            )
    return "\n".join(parts)


def markdown_report(result: dict[str, Any], inputs: Inputs | None = None) -> str:
    """The whole tournament as Markdown: the inputs, a summary, the candidates, the duels."""
    view = report_view(result, inputs)
    lines = [f"# Tournament: {_inline(view['question'])}\n", *_inputs(view), *_summary(view),
             *_candidates(view)]
    if view["duels"]:
        lines.append("## Duels\n")
        lines += [duel_markdown(d) for d in view["duels"]]
    return "\n".join(lines)
