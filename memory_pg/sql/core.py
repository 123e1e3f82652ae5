"""Pieces every statement builder uses: bound statements, arrays of values, vectors in text form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import (
    ColumnElement,
    Executable,
    bindparam,
    cast,
    func,
    literal_column,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

ENGLISH: ColumnElement[Any] = literal_column("'english'::regconfig")
SIMPLE: ColumnElement[Any] = literal_column("'simple'::regconfig")


def vector_literal(vector: np.ndarray[Any, Any]) -> str:
    """A vector in pgvector's text form, ``[0.1,0.2]``.

    Nine significant digits give back the exact float32 (pgvector reads it with
    ``strtof``) in about half the characters of ``repr``, and faster.
    """
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ("%.9g," * len(values))[:-1] % tuple(values) + "]"


def vector_array(vectors: Sequence[np.ndarray[Any, Any]]) -> str:
    """Vectors as one PostgreSQL array literal, for ``CAST(... AS vector[])``.

    One string rather than a list: the driver would scan every element of a list
    for characters to escape, and a vector's text form has none.
    """
    return "{" + ",".join(['"' + vector_literal(v) + '"' for v in vectors]) + "}"


class Bound(NamedTuple):
    """A statement built once and the values of one execution: ``conn.execute(*bound)``.

    Building and cache-keying a statement of many parts costs more than running it
    for one row; one statement object is built, keyed and compiled once.
    """

    statement: Executable
    params: dict[str, Any]


def array_param(name: str, element: TypeEngine[Any]) -> ColumnElement[Any]:
    """The parameter ``name``: an array of ``element`` (cast, so typed even when all NULL)."""
    return cast(bindparam(name, type_=ARRAY(element)), ARRAY(element))


def unnest_rows(**arrays: ColumnElement[Any]) -> TableValuedAlias:
    """``unnest(a, b, ...) AS anon(name_a, name_b, ...)``: parallel arrays as rows."""
    return func.unnest(*arrays.values()).table_valued(*arrays).render_derived()
