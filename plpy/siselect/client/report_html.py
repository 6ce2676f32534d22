"""The tournament report as one standalone HTML page, from the result dict through one
Jinja2 template with autoescaping (``templates/report.html.j2``).

Every text in a result may come from someone untrusted (candidate SQL, database values,
column names, the question, the judge's reply, an endpoint's error): the template only
ever inserts it as escaped text, never as markup, and the page's Content-Security-Policy
forbids scripts should a template change ever slip. What the page shows is
:func:`siselect.selection.report_view.report_view`'s, the same as the Markdown report's.
"""

import json
from functools import cache
from typing import Any

from siselect.instances.render import value_text
from siselect.selection.report_view import Inputs, report_view

TEMPLATE = "report.html.j2"


@cache
def environment() -> Any:
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
    env.filters["percent"] = lambda share: "-" if share is None else f"{share:.1%}"
    return env


def html_report(result: dict[str, Any], inputs: Inputs | None = None) -> str:
    """The whole tournament as an HTML page."""
    return environment().get_template(TEMPLATE).render(v=report_view(result, inputs))
