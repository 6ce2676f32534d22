"""The one interface both witness backends implement, and the registry that picks one.

A backend says what witnesses a query's answer has: :meth:`Backend.witness_query` gives SQL
returning one ``w bigint[]`` (sorted row ids) per witness, a :class:`Lineage`, or raises
:class:`Unsupported` with the reason it cannot handle the query; :meth:`Backend.usable`
says whether it can run on this server at all. What rows one witness holds is that array.
The search, verification and minimisation consume either backend the same way.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor, Trusting
from siselect.runtime.pgcheck import Name


class Unsupported(SiselectError):
    """A backend cannot give the witnesses of this query; the message says why."""

    sqlstate = "0A000"


@dataclass(frozen=True)
class Deferred:
    """A keyed witness query whose witnesses are not built yet: ``sql`` returns ``k`` and
    the row identities each witness is built from (columns ``__t1``, ``__t2``, ...), ``w``
    is the SQL expression, over those columns, that builds it. A statement that keeps a few
    of millions of witnesses (a top-N sort by key) builds only the ones it keeps: the
    planner computes an output column below the sort, for every row it sorts."""

    sql: str
    w: str
    # Per column __t<i>: the relation number its rows belong to, whether it holds row ids
    # already (else ctids), and the SQL of its row id (an element of w; NULL for none).
    ids: tuple[tuple[int, bool, str], ...] = ()


@dataclass
class Lineage:
    """SQL returning one row per witness (column ``w bigint[]``), and how exact it is.

    ``keyed_sql``, when given: the same witnesses with a second column ``k bigint``, a key
    equal for equal witnesses that costs less to compute than ``w`` (see
    :mod:`siselect.instances.search`).
    """

    sql: str
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    keyed_sql: str | None = None
    deferred: Deferred | None = None  # keyed_sql's witnesses, built later (see Deferred)
    # keyed_sql's witnesses before their deduplication, some perhaps more than once (None:
    # keyed_sql is not deduplicated). A LIMIT over it stops early and a top-N sort holds N
    # rows, where deduplicating reads and sorts every witness first: a product of two
    # gathered groups had 8 million on a database of 190,000 rows (60 s, against 0.07 s to
    # read the first 50,000 as they come). Read it where repeats do not matter.
    raw_sql: str | None = None
    raw_deferred: Deferred | None = None  # raw_sql's witnesses, built later
    # What the ProvSQL backend adds: calls of its own helpers, and the query texts those
    # helpers run (checked like any text siselect sends, see Executor.run).
    allow: frozenset[Name] = frozenset()
    inner: tuple[str, ...] = ()

    @property
    def raw(self) -> str | None:
        """The keyed witnesses, repeats allowed: :attr:`raw_sql`, else :attr:`keyed_sql`."""
        return self.raw_sql or self.keyed_sql

    @property
    def raw_witnesses(self) -> str:
        """:attr:`sql`'s witnesses, repeats allowed."""
        return f"SELECT w FROM ({self.raw_sql}) AS __w" if self.raw_sql else self.sql

    @property
    def raw_built_later(self) -> Deferred | None:
        """:attr:`raw`'s witnesses not built yet, when they can be."""
        return self.raw_deferred if self.raw_sql else self.deferred


def executor_for(executor: Executor, lineages: Sequence[Lineage]) -> Executor:
    """``executor``, trusting what the witness queries of ``lineages`` add to the text."""
    allow = frozenset().union(*(lin.allow for lin in lineages))
    inner = tuple(text for lin in lineages for text in lin.inner)
    if not allow and not inner:
        return executor
    return Trusting(executor, allow, inner)


class Backend(Protocol):
    name: str
    label: str  # how reasons name it

    def usable(self, executor: Executor) -> str | None:
        """None when the backend can run here, else why not."""
        ...

    def witness_query(self, tree: exp.Query, catalog: Catalog) -> Lineage:
        """The witnesses of ``tree``'s answer; raises :class:`Unsupported`."""
        ...
