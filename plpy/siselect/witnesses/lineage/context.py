"""State shared by the rewrite of one query: names, notes, hoisted CTEs, side witnesses."""

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.witnesses.interface import Unsupported
from siselect.witnesses.lineage.rep import Names, Rep


class UnsupportedLineage(Unsupported):
    """The query uses a construct whose witnesses this backend cannot compute."""

    def __init__(self, construct: str):
        super().__init__(f"lineage: unsupported construct: {construct}", "0A000")
        self.construct = construct


def ident_key(ident: exp.Identifier | str) -> str:
    """How PostgreSQL compares an identifier: unquoted names fold to lower case."""
    if isinstance(ident, str):
        return ident.lower()
    return ident.name if ident.args.get("quoted") else ident.name.lower()


@dataclass
class CteInfo:
    global_name: str  # name of the rewritten body in the hoisted WITH list
    rep: Rep
    columns: list[str] | None  # None: unknown
    # The original body, its column list and the scope it was defined in: what rewriting
    # it again, narrowed (see :mod:`.cut`), needs.
    body: exp.Query | None = None
    renamed: list[str] | None = None
    scope: "Env | None" = None


@dataclass
class Context:
    catalog: Catalog
    names: Names = field(default_factory=Names)
    notes: list[str] = field(default_factory=list)
    exact: bool = True
    ctes: list[str] = field(default_factory=list)  # hoisted WITH entries, SQL text, in order
    cte_keys: set[str] = field(default_factory=set)
    extras: list[str] = field(default_factory=list)  # SELECTs of side witnesses (column w)
    may_repeat: bool = False  # whether equal witnesses can come from different rows
    # rewrite(query, env) -> Rewritten: query.rewrite_query, for blocks' subqueries.
    rewrite: Any = None

    def approximate(self, construct: str) -> None:
        """Record that ``construct`` was over-approximated."""
        self.exact = False
        if construct not in self.notes:
            self.notes.append(construct)


@dataclass
class Env:
    """What a block sees: the context and the CTEs in scope (by PostgreSQL name)."""

    ctx: Context
    ctes: dict[str, CteInfo] = field(default_factory=dict)

    def with_cte(self, key: str, info: CteInfo) -> "Env":
        return Env(self.ctx, {**self.ctes, key: info})
