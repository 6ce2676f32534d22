"""Entry points callable from the extension's SQL functions through
:func:`siselect.dispatch.call`, by the names they are registered under."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from siselect.instances.materialize import statements
from siselect.instances.separate import options_from, separate
from siselect.runtime import deadline
from siselect.runtime.catalog import load_catalog
from siselect.runtime.plpython import PlpyExecutor
from siselect.sqltext.transpile import to_postgres

ENTRY_POINTS: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make ``fn(plpy, **args)`` callable from SQL as entry point ``name``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        ENTRY_POINTS[name] = fn
        return fn

    return wrap


@register("transpile")
def transpile(plpy: Any, sql: str, dialect: str) -> str:
    return to_postgres(sql, dialect)


@contextmanager
def _call_deadline(plpy: Any) -> Iterator[None]:
    """The call's Python work bounded by the caller's statement_timeout; and a cancel or a
    timeout acted on within :data:`deadline.POLL_SECONDS` of Python work, since a query,
    however trivial, is where PostgreSQL raises a pending one."""
    ping = plpy.prepare("SELECT 1")
    left = deadline.statement_seconds_left(lambda sql: plpy.execute(sql)[0]["seconds_left"])
    with deadline.scope(left, poll=lambda: plpy.execute(ping)):
        yield


@register("separate")
def separate_entry(plpy: Any, q1: str, q2: str, search_path: str, **options: Any) -> dict:
    executor = PlpyExecutor(plpy, search_path)
    with _call_deadline(plpy):
        return separate(executor, q1, q2, options_from(**options))


@register("materialize")
def materialize_entry(plpy: Any, instance: str, schema: str | None, search_path: str) -> str:
    catalog = load_catalog(PlpyExecutor(plpy, search_path))
    name, steps = statements(json.loads(instance), catalog, schema)
    for sql, records in steps:
        if records is None:
            plpy.execute(sql)
        else:
            plan = plpy.prepare(sql, ["jsonb"])
            plpy.execute(plan, [json.dumps(records)])
    return name


@register("tournament")
def tournament_entry(
    plpy: Any,
    candidates: list[str] | None,
    question: str,
    evidence: str | None,
    judge: str,
    reference: str | None,
    search_path: str,
    counts: list[int] | None = None,
    **options: Any,
) -> dict:
    from siselect.runtime.catalog import load_catalog
    from siselect.runtime.errors import InvalidInput
    from siselect.selection.judges import make_judge
    from siselect.selection.llm_settings import llm_config
    from siselect.selection.tournament import check_inputs, run_tournament
    from siselect.sqltext.transpile import to_tree

    if candidates is None:
        raise InvalidInput("candidates must not be NULL")
    counts = list(counts) if counts is not None else None
    check_inputs(list(candidates), question, counts)
    config = None
    if judge == "llm":  # an unconfigured endpoint is refused before any work
        from siselect.selection.llm import require_endpoint

        config = llm_config()
        require_endpoint(config)
    from siselect.selection.rules import rules_from

    executor = PlpyExecutor(plpy, search_path)
    opts = options_from(**options)
    rules = rules_from(**options)  # grouping, scoring, schedule, instances (None: default)
    catalog = load_catalog(executor)
    ref_tree = to_tree(reference, opts.dialect, catalog) if reference else None
    # The LLM judge's requests run in worker threads that never call plpy; the main thread
    # waits on them in short slices and lets PostgreSQL act on a cancel between them
    # (_call_deadline's poll), see siselect.selection.judge_pool.
    chosen = make_judge(judge, ref_tree, config)
    if config is not None:
        _audit(plpy, chosen, config.audit)
    with _call_deadline(plpy):
        return run_tournament(
            executor, list(candidates), question, evidence, chosen, opts, reference, catalog,
            rules=rules, counts=counts,
        )


def _audit(plpy: Any, judge: Any, level: str) -> None:
    """Give the LLM judge the audit log an administrator turned on (see judge_audit)."""
    from siselect.selection.judge_audit import make_audit

    if level == "off":
        return
    who = plpy.execute("SELECT pg_catalog.current_database()::text AS audit_database, "
                       "session_user::text AS audit_session_role, "
                       "current_user::text AS audit_current_role")[0]
    judge.audit = make_audit(level, {"database_name": who["audit_database"],
                                     "session_role": who["audit_session_role"],
                                     "calling_role": who["audit_current_role"]})


@register("judge_audit")
def judge_audit_entry(plpy: Any) -> Any:
    from siselect.selection.judge_audit import entries

    # One jsonb a record, as a set rather than one array: the file may be large. The
    # records hold no float and no NUL (they are siselect's own, from PostgreSQL text).
    return (json.dumps(entry, ensure_ascii=False) for entry in entries())


@register("tournament_report")
def tournament_report_entry(plpy: Any, result: str) -> str:
    from siselect.runtime.errors import InvalidInput
    from siselect.selection.report import markdown_report

    # The argument is any jsonb a caller passes: a value of the wrong shape is their error.
    try:
        return markdown_report(json.loads(result))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise InvalidInput(
            f"not a result of siselect.tournament ({type(exc).__name__}: {exc})"
        ) from None


@register("set_llm_config")
def set_llm_config_entry(plpy: Any, config: str | None) -> str:
    from siselect.selection.llm_settings import write_llm_config

    return write_llm_config(json.loads(config) if config is not None else None)


@register("llm_config")
def llm_config_entry(plpy: Any) -> dict:
    from siselect.selection.llm_settings import llm_config, public_view

    return public_view(llm_config())
