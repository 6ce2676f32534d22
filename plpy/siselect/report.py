"""Tournament reports for people: Markdown (also from SQL) and HTML (from the CLI).

Each duel shows the rows of D', the judge's votes, both answers and the verdict; when
a reference query disagrees with the judge on D', the duel is marked as evidence
against the reference (paper section IV).
"""

import html
import json
from typing import Any

from .instances import markdown_table, to_markdown


def _answer(label: str, answer: dict[str, Any] | None) -> str:
    if not answer:
        return ""
    return f"**{label}**\n\n{markdown_table(answer['columns'], answer['rows'])}\n"


def _votes(judge: dict[str, Any]) -> str:
    lines = []
    for i, vote in enumerate(judge.get("votes") or [], 1):
        parsed = vote.get("rows")
        shown = (
            json.dumps(parsed, ensure_ascii=False)
            if parsed is not None
            else f"unreadable ({vote.get('error', 'no answer')})"
        )
        lines.append(f"{i}. {shown}")
    return "\n".join(lines)


def duel_markdown(d: dict[str, Any]) -> str:
    parts = [
        f"### Candidate {d['a']} (A) vs candidate {d['b']} (B): "
        f"{ {'a': 'A wins', 'b': 'B wins'}.get(d['verdict'], 'draw') }\n",
        f"{d['reason']}.\n",
    ]
    if d.get("instance"):
        parts.append(f"Separating instance D' ({d.get('rows')} rows):\n")
        parts.append(to_markdown(d["instance"]))
        judge = d.get("judge", {})
        answer = json.dumps(judge.get("rows"), ensure_ascii=False)
        parts.append(f"\n**Judge ({judge.get('name')})**: {answer}\n")
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
    lines = [f"# Tournament: {result.get('question', '')}\n"]
    winner = result.get("winner")
    if winner is None:
        lines.append(f"No winner: {result.get('reason')}.\n")
        return "\n".join(lines)
    lines.append(
        f"**Winner**: candidate {winner['index']} (decided by {result['decided_by']}; "
        f"judge: {result['judge']})\n\n```sql\n{winner['sql']}\n```\n"
    )
    rows = [
        [g["representative"], ", ".join(map(str, g["members"])), g["size"], g["score"]]
        for g in result.get("groups", [])
    ]
    lines.append("## Scores\n")
    lines.append(markdown_table(["representative", "members", "group size", "score"], rows))
    for drop in result.get("dropped", []):
        lines.append(
            f"\n- candidate {drop['index']} dropped out: {drop['message']} "
            f"(SQLSTATE {drop['sqlstate']})"
        )
    lines.append("\n## Duels\n")
    lines += [duel_markdown(d) for d in result.get("duels", [])]
    return "\n".join(lines)


def html_report(result: dict[str, Any]) -> str:
    """The Markdown report inside a minimal standalone HTML page."""
    try:
        import markdown  # client-side only; the server never renders HTML
    except ImportError:
        body = f"<pre>{html.escape(markdown_report(result))}</pre>"
    else:
        body = markdown.markdown(markdown_report(result), extensions=["tables", "fenced_code"])
    title = html.escape(str(result.get("question", "tournament")))
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{style}</style></head><body>{body}</body></html>\n"
    )
