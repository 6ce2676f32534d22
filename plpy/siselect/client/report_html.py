"""The tournament report as one standalone HTML page, from the result dict through one
Jinja2 template with autoescaping (``templates/report.html.j2``).

Every text in a result may come from someone untrusted (candidate SQL, database values,
column names, the question, the judge's reply, an endpoint's error): the template only
ever inserts it as escaped text, never as markup, and the page's Content-Security-Policy
forbids scripts should a template change ever slip.
"""

import json
from functools import cache
from typing import Any

from siselect.instances.render import tables, value_text

TEMPLATE = "report.html.j2"
VERDICTS = {"a": "A wins", "b": "B wins"}


@cache
def _environment() -> Any:
    import jinja2  # client-side only: the server renders Markdown, never HTML

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("siselect.client", "templates"),
        autoescape=True,  # whatever the template's name: every value is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cell"] = value_text
    env.filters["json_text"] = lambda value: json.dumps(value, ensure_ascii=False)
    env.filters["verdict"] = lambda side: VERDICTS.get(side, "draw")
    env.globals["instance_tables"] = lambda instance: list(tables(instance))
    return env


def html_report(result: dict[str, Any]) -> str:
    """The whole tournament as an HTML page."""
    duels = [{"instance": None, "judge": {}, "answers": {}, "reference_answer": None,
              "evidence_against_reference": False, **d} for d in result.get("duels", [])]
    return _environment().get_template(TEMPLATE).render(
        question=str(result.get("question", "")),
        winner=result.get("winner"),
        reason=result.get("reason"),
        decided_by=result.get("decided_by"),
        judge=result.get("judge"),
        score_rows=[[g["representative"], ", ".join(map(str, g["members"])), g["size"],
                     g["score"]] for g in result.get("groups", [])],
        dropped=result.get("dropped", []),
        duels=duels,
    )
