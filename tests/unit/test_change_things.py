"""What a change is said of: the thing before "moved to", "换成", "推迟到". Another one
of a kind, or an organisation's own move, keeps the older fact; the same slot, named
by the attribute's noun or not named at all, with a new value of the old one's shape,
is a change.

Cases written for these tests, not taken from the pairs sets (their figures:
docs/measurements.md, "What a change is said of").
"""

from __future__ import annotations

import pytest

from memory_pg.text.changes import judge
from memory_pg.text.things import said_of, same_slot


@pytest.mark.parametrize(
    ("new", "thing"),
    [
        ("Project Orion's launch moved to June.", ("launch", ["project", "orion"])),
        ("隔壁团队的周会改到周四了。", ("周会", ["隔壁", "团队"])),
        ("The office moved to Oakland.", ("office", [])),
        ("Last month we moved to Oakland.", None),  # the speaker
        ("上个月搬到了杭州。", None),  # a time, no thing
        ("The landlord raised the rent to $2,400.", None),  # the thing follows the verb
        ("Team dinner costs went up to $400.", ("cost", ["team", "dinner"])),
    ],
)
def test_the_thing_a_change_is_said_of(new: str, thing: tuple[str, list[str]] | None) -> None:
    found = said_of(new)
    assert (found and (found[0], list(found[1]))) == thing


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Another one of the same kind, qualified as such.
        ("Project Vega launches on May 2.", "Project Orion's launch moved to June."),
        ("我们团队的周会在周二。", "隔壁团队的周会改到周四了。"),
        ("C 计划预算十万。", "D 计划的预算砍到五万了。"),
        # An organisation moved, not the speaker's home.
        ("我住在西湖区。", "公司搬到滨江了。"),
        ("I live in Oakland.", "Our office moved to downtown Berkeley."),
        # Someone else moved (a relative named by one character).
        ("我家在南京鼓楼区。", "我哥搬去苏州了。"),
        # A date's character ties no two things (the bundled write-path set).
        ("月度复盘在周五", "周会改成周三了"),
        # Two things of one attribute: a number or a date of another thing.
        ("My rent is $2000.", "My salary went up to $5000."),
        ("我每月工资一万。", "房租涨到六千了。"),
        ("Our wedding date is June 8.", "The deadline moved to September."),
        ("我的生日是5月3号。", "截止日期推迟到6月了。"),
        # Another event moved to another day: a hyphenated name is still a thing, and
        # two meetings sharing 会 are two meetings.
        ("The choir meets on Thursdays.", "The staff all-hands was moved to Monday."),
        ("棋友会每周日下午活动。", "部门大会改到周四了。"),
        # Another event whose name jieba cuts apart (年/会) or tags oddly (团建).
        ("我的体检约在12月5号。", "我们把年会推迟到一月了。"),
        ("牙医预约在周三。", "团建改到周五了。"),
        # Nothing named: "it", "we" could be any memory with a date or a number.
        ("My flight to Tokyo is on March 3.", "We pushed it to April."),
        ("I have 2 kids.", "We're up to 5 now."),
        # One capital letter names which one, in English too.
        ("Project A launches on May 2.", "Project B's launch moved to June."),
        # A relative's relative ("妹夫" is not "我妹").
        ("我妹住在杭州。", "我妹夫搬到上海了。"),
    ],
)
def test_a_change_of_another_thing_keeps_the_older_fact(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The attribute's own noun, the new value of the old one's shape.
        ("年会定在十二月二十号。", "日子往后挪到一月中旬了。"),
        ("Our phone bill is about $80 a month.", "Phone costs dropped to about $55."),
        ("项目经费是二十万。", "经费被砍到十二万了。"),
        # A word before the thing that only describes it: the old text has no other.
        ("My rent is $2000.", "The monthly rent went up to $2400."),
        ("The launch is on May 2.", "Project Orion's launch moved to June."),
        # The thing held by the older text, a number for a number.
        ("数据库是 MySQL 5.7。", "库已经升级到 8.0 了。"),
    ],
)
def test_a_new_value_for_the_same_slot_is_a_change(old: str, new: str) -> None:
    assert judge(old, new) is not None


def test_a_time_moved_is_the_slot_of_the_thing_named() -> None:
    assert same_slot("The party is on Friday.", "The party got pushed to next Tuesday.") == "time"
    assert same_slot("The party is at Nora's place.", "The party got pushed to Tuesday.") == ""
    # Not named: "it" could be any dated memory the user holds.
    assert same_slot("The party is on Friday.", "We pushed it to next Tuesday.") == ""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A career's change states the job: no word of the old job is said again.
        ("我在银行做柜员。", "转行了，现在做保险。"),
        ("I work as a paralegal.", "Got promoted to associate last week."),
    ],
)
def test_a_career_changed_replaces_the_job(old: str, new: str) -> None:
    assert judge(old, new) is not None


def test_someone_elses_job_is_not_the_speakers() -> None:
    assert judge("我的导师是张教授。", "我们组换了个新秘书。") is None
    # "Left" alone is no career: "I left early today" states no job.
    assert judge("I'm a nurse.", "I left early today.") is None


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # A value moved "from A to B", A the old value, with a decimal point or a time.
        ("My cholesterol was 5.2 at the last check.", "Cholesterol went from 5.2 to 4.6.", True),
        ("I catch the 8:05 train.", "My train changed from the 8:05 to the 8:35.", True),
        ("我的会员费是一年两百。", "会员费从两百加到了三百。", True),
        # "从…起" says when it starts, not what was left.
        ("每月定投一千块。", "定投从下个月起加到两千。", True),
        # From another value than the old text's: another thing's ("from 3.1").
        ("我的房租是三千。", "房租从两千五涨到了三千二。", False),
        ("My GPA is 3.4.", "My brother's GPA went from 3.1 to 3.5.", False),
        # A relative's own X beside the speaker's own X.
        ("My commute is 40 minutes.", "My wife's commute is 15 minutes now.", False),
        ("我的工资是一万。", "我老婆的工资涨到一万五了。", False),
    ],
)
def test_a_value_from_a_to_b_and_whose_it_is(old: str, new: str, changed: bool) -> None:
    assert (judge(old, new) is not None) is changed


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The change names another attribute by its own noun: the old value stands.
        ("年会定在 1 月 20 号", "年会的场地换成了希尔顿酒店"),
        ("The book club meets on the first Friday.", "Book club's room changed to 3B."),
        ("The hotel is $180 a night.", "The hotel's date moved to May 3."),
    ],
)
def test_another_attribute_named_by_its_noun_keeps_the_old_value(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("年会定在 1 月 20 号", "年会的日期改到 1 月 27 号了"),
        # A place or a count given with digits is that attribute's value.
        ("The party is at 12 Oak Street.", "The party's location changed to 30 Elm Street."),
        ("Our weekly review is in room 301.", "The weekly review room changed to 305."),
        ("家长会在三楼 302 教室", "家长会的地点换到了 305"),
    ],
)
def test_the_same_attribute_named_by_its_noun_is_still_a_change(old: str, new: str) -> None:
    assert judge(old, new) is not None
