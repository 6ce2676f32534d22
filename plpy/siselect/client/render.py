"""Plain-text tables for the terminal."""

from collections.abc import Sequence
from typing import Any

from siselect.instances.render import value_text


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = 50) -> str:
    """A boxed-less aligned table like psql's, with a row count footer; values written as
    the reports and the judge write them (NULL, true/false, an array as JSON)."""
    shown = [[value_text(v) for v in row] for row in rows[:limit]]
    widths = [len(c) for c in columns]
    for row in shown:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    line = " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    rule = "-+-".join("-" * w for w in widths)
    body = [" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in shown]
    more = f" (showing {limit})" if len(rows) > limit else ""
    noun = "row" if len(rows) == 1 else "rows"
    return "\n".join([line, rule, *body, f"({len(rows)} {noun}{more})"])


def instance_text(instance: dict[str, Any]) -> str:
    """Each table of an instance as a titled text table."""
    parts = []
    for table, data in instance.items():
        parts.append(f"{table}:\n{text_table(data['columns'], data['rows'])}")
    return "\n\n".join(parts)


def separation_text(result: dict[str, Any]) -> str:
    """What a person wants to read of a ``separate`` result."""
    lines = [
        f"status: {result['status']}" + (f" ({result['reason']})" if result.get("reason") else "")
    ]
    if result.get("instance"):
        lines.append(f"\nseparating instance D' ({result['rows']} rows):\n")
        lines.append(instance_text(result["instance"]))
        for label in ("q1", "q2"):
            answer = result["answers"][label]
            lines.append(
                f"\n{label.upper()} on D':\n{text_table(answer['columns'], answer['rows'])}"
            )
    timings = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.get("timings", {}).items())
    if result.get("backend_reason"):
        lines.append(f"\nbackend: {result['backend']} ({result['backend_reason']})")
    lines.append(f"tries: {result.get('tries', 0)}; {timings}")
    return "\n".join(lines)


def tournament_text(result: dict[str, Any]) -> str:
    """The winner, the groups with their scores, and one line per duel."""
    dropped = [
        f"dropped candidate {d['index']}: {d['message']} (SQLSTATE {d.get('sqlstate')})"
        for d in result.get("dropped", [])
    ]
    if result.get("winner") is None:
        return "\n".join([f"no winner: {result.get('reason')}", *dropped])
    lines = [
        f"winner: candidate {result['winner']['index']} (decided by {result['decided_by']})",
        result["winner"]["sql"],
        "",
    ]
    rows = [
        [
            g["representative"],
            ", ".join(map(str, g["members"])),
            g["size"],
            g["score"],
            g["rows_on_d"],
        ]
        for g in result["groups"]
    ]
    lines.append(text_table(["representative", "members", "size", "score", "rows on D"], rows))
    for d in result["duels"]:
        size = f", {d['rows']} rows" if "rows" in d else ""
        lines.append(f"duel {d['a']} vs {d['b']}: {d['verdict']} ({d['reason']}{size})")
    lines += dropped
    lines.append(
        f"judge calls: {result.get('judge_calls', 0)}; total {result['timings']['total']:.2f} s"
    )
    return "\n".join(lines)
