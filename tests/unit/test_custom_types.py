"""A team's own memory types: a bad name is refused when the settings are made."""

from __future__ import annotations

import pytest

from memory_pg import InvalidInput, StoreSettings
from memory_pg.config import BUILTIN_MEMORY_TYPES


def test_a_good_custom_type_is_accepted():
    settings = StoreSettings(memory_types=(*BUILTIN_MEMORY_TYPES, "meeting_note"))
    assert "meeting_note" in settings.memory_types


@pytest.mark.parametrize(
    "name", ["Meeting-Note", "meeting note", "1st", "", "x" * 65, "todo\n", "类型", 7]
)
def test_a_bad_custom_type_name_is_refused_by_the_settings(name):
    # Before, the name was accepted and the first write of that type failed at the
    # table's check constraint (memory_type ~ '^[a-z][a-z0-9_]{0,63}$').
    with pytest.raises(InvalidInput, match="memory type"):
        StoreSettings(memory_types=(*BUILTIN_MEMORY_TYPES, name))


def test_one_string_is_not_a_list_of_types():
    with pytest.raises(InvalidInput, match="tuple of type names"):
        StoreSettings(memory_types="meeting_note")  # type: ignore[arg-type]
