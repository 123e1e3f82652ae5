"""Who fills a one-person role, read as people write it in chat (names in lower case,
the role before or after the name, a verb of the role), and when another person in it
is a change: the decision replaces the old holder, and keeps both where the role is of
another thing, of another person, one of several, or the same person named again.

Cases written for these tests, not taken from the sets the rule was tuned on.
"""

from __future__ import annotations

import pytest

from memory_pg.text.changes import judge
from memory_pg.text.roles import holder


def test_the_person_and_the_role_are_read_in_either_order() -> None:
    assert holder("nadia is the release manager for ios") is not None
    found = holder("nadia is the release manager for ios")
    assert found is not None and found.person == "nadia" and found.role == "manager"
    found = holder("the point of contact for payments is felix")
    assert found is not None and found.person == "felix" and "payments" in found.of
    found = holder("运维对接人是小邓")
    assert found is not None and found.person == "小邓"
    assert holder("Nadia is a designer on the web team") is None  # one of several
    assert holder("my manager is really nice") is None  # no name
    assert holder("aisha is acting tech lead on checkout") is None  # a stand-in


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("our tech lead is ravi", "yuki leads the team now"),
        ("my manager is gloria", "i report to stefan after the reorg"),
        ("The product owner for search is Dev", "Search PO is Hannah"),
        ("运营负责人是小邓", "运营这块改由老罗负责了"),
        ("我们组长是阿强", "组长现在是王姐"),
    ],
)
def test_another_person_in_a_one_person_role_replaces_the_old_holder(old: str, new: str) -> None:
    assert judge(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The role of another thing, or of another person.
        ("ravi is the tech lead for billing", "the tech lead for search is yuki"),
        ("android负责人是小邓", "ios负责人是老罗"),
        ("my manager is gloria", "my manager's manager is stefan"),
        ("我领导是王总", "我老公的领导是李姐"),
        # A second one of its kind; one of several.
        ("紧急联系人：妈妈", "第二紧急联系人：爸爸"),
        ("Wen is a designer on the app", "Pablo is a designer on the app"),
        # The same person, named more or less fully; a stand-in while away.
        ("my manager is gloria ramos", "i report to gloria"),
        ("our tech lead is ravi", "ravi is out next week, yuki covers for him"),
        ("我的领导是王总", "我的领导是王建国"),
        # In lower case with no word of change, a word after "is" may describe.
        ("my manager is priya", "my manager is remote"),
        # Someone else's career, a task handed over, a person in another role.
        ("I work as a barista.", "Jess took a full-time job as a nurse."),
        ("我是销售", "小王升主管了"),
        ("我们组长是老刘", "报销的事交给小张了"),
    ],
)
def test_another_slot_or_the_same_person_keeps_both(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("old", "new", "replaces"),
    [
        # One attribute held one value at a time, named by other words.
        ("my job title is staff accountant", "got promoted to finance manager!!", True),
        ("我的职位是行政专员", "升职了 现在是行政主管", True),
        # One role of two things; another person's job.
        ("Lina is the product manager for Maps", "Jon is now the PM for Photos", False),
        ("我的导师是周老师。", "我们实验室换了个新秘书。", False),
    ],
)
def test_one_attribute_by_other_words_and_one_role_of_two_things(
    old: str, new: str, replaces: bool
) -> None:
    assert (judge(old, new) is not None) is replaces


def test_who_is_responsible_now_replaces_the_role_of_the_same_thing() -> None:
    # "改由…负责" says who answers for the thing the old role was of; a new holder said
    # outright ("a new tech lead: …") needs no capital.
    assert judge("运营经理是小邓", "运营这块改由老罗负责了") is not None
    assert judge("tom is the tech lead on checkout", "checkout has a new tech lead: aisha")
    assert judge("运营经理是小邓", "财务那边改由老罗负责了") is None  # another thing


def test_a_things_place_is_no_home_of_the_speaker() -> None:
    # "lives in" and "moved to" both state a place; only the speaker's own is one home.
    assert judge("The staging database lives in Frankfurt", "The wiki moved to Confluence") is None
    assert judge("I live in Leeds", "moved to Bristol with my partner last month") is not None
