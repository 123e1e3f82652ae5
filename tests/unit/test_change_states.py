"""What a new statement says of an old one's state, read as a user writes it: a thing
to do finished, a negation lifted, a number of another kind, progress towards a
target, a short form, another word for one role or one meal.

Cases written for these tests, not taken from the sets the rules were tuned on
(docs/measurements.md has those sets' figures).
"""

from __future__ import annotations

import pytest

from memory_pg.text.changes import judge, may_change
from memory_pg.text.quantities import kinds
from memory_pg.text.subjects import spelled_out
from memory_pg.text.topics import product_topics


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A thing to do, then done, with no word of change.
        ("renew the car insurance", "car insurance renewed this morning"),
        ("要还这个月的信用卡", "信用卡还了"),
        # A negation lifted, or put on, with the state said to have turned.
        ("我不喝酒", "最近开始喝酒了，红酒为主"),
        ("我每天都在控糖", "不控糖了，体检都正常"),
        # A short form of the old text's words.
        ("Our product manager is Carla", "new PM is Dev, Carla moved teams"),
        # One role or one meal named by another word.
        ("My manager is Tom", "my boss is now Ana"),
        ("早饭一般喝粥", "现在早餐都吃三明治"),
        # A level with another number, said of the speaker.
        ("我的职级是T5", "今年升到T6了"),
    ],
)
def test_a_change_said_without_the_old_words_is_one(old: str, new: str) -> None:
    assert may_change(new)
    assert judge(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Part of it done, the rest still to do.
        ("要交论文", "论文初稿写完了，参考文献还没整理"),
        # A number of another kind about the same thing.
        ("The backup bucket holds 2TB", "backup bucket is 40% full now"),
        ("我们组有6个人", "组里现在每周开2次会"),
        # Progress towards a target is not a new target.
        ("savings goal is $20k", "saved $8k so far, now at 8k"),
        ("旅行预算两万", "目前已经花了一万二"),
        # How long a state has lasted says it continues.
        ("I'm vegetarian", "been vegetarian for 4 years now"),
        # What is not done is changed only by doing it.
        ("我不吃香菜", "我现在特别能吃辣"),
        ("I don't eat pork", "I eat a lot of fish now"),
        # A level of someone else.
        ("I'm a senior engineer, L5", "the new hire on my team is L2"),
    ],
)
def test_a_second_fact_about_the_subject_keeps_both(old: str, new: str) -> None:
    assert judge(old, new) is None


def test_quantities_are_read_by_kind() -> None:
    assert kinds("disk is 2TB") == {"size"}
    assert kinds("87% done") == {"percent"}
    assert kinds("月薪两万五") == {"money"}
    assert kinds("每天7:30起床") == {"clock"}
    assert kinds("在这家公司三年了") == {"duration"}
    assert kinds("家里两只猫") == {"count:只"}
    assert kinds("we have 12 servers") == {"count:server"}


def test_a_short_form_is_written_out_only_from_the_other_text() -> None:
    assert spelled_out("the TL is Marco", "Priya is the tech lead") == "the tech lead is Marco"
    assert spelled_out("ditched LP", "I use LastPass") == "ditched LastPass"
    # Nothing in the other text stands for it: it stays as written.
    assert spelled_out("the TL is Marco", "Priya runs QA") == "the TL is Marco"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A state said again with a clause-final 了: a new situation, with no word of change.
        ("女儿在上小学五年级", "女儿上初一了"),
        ("我儿子在上幼儿园", "儿子上一年级了"),
        ("我养了一条狗", "家里两条狗了"),
    ],
)
def test_a_chinese_state_ending_in_le_is_a_new_situation(old: str, new: str) -> None:
    assert judge(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # 了 after a verb of finishing is a step done, not a new state of the old fact.
        ("周五要给投资人讲融资计划", "讲稿写好了"),
        # Another person's state.
        ("女儿在上小学五年级", "儿子上初一了"),
        # Both texts end in 了: neither says the other's state is over.
        ("我戒烟了", "我也戒酒了"),
        # Another attribute of the same person or thing, or an occasion, not a new state.
        ("我对花生过敏", "今天吃了花生了"),
        ("我妈在医院当护士", "我妈感冒了"),
        ("我住在杭州", "杭州下雪了"),
        ("老婆喜欢吃辣", "老婆怀孕了"),
        ("女儿在上小学五年级", "女儿发烧了"),
        ("我老公在银行上班", "老公出差了"),
        ("我每天喝两杯咖啡", "今天喝了三杯咖啡了"),
        # Another thing counted, or the same thing counted of someone else.
        ("我家有三只猫", "邻居家三只狗了"),
        ("我有两只猫", "邻居家现在三只猫"),
        ("我们组有五个人", "今天会议来了三个人了"),
    ],
)
def test_a_clause_ending_in_le_alone_changes_nothing_else(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("text", "kinds_named"),
    [
        ("We moved to Lisbon last spring", set()),
        ("I snack on celery and hummus", set()),
        ("Cut me some slack this week", set()),
        ("The backend runs on Spring Boot", {"framework"}),
        ("Background jobs go through Celery", {"queue"}),
        ("Team chat moved to Slack", {"chat"}),
        # Beside Chinese the word has no English sense: any case names the product.
        ("团队用slack沟通", {"chat"}),
    ],
)
def test_a_product_named_by_an_ordinary_word_is_one_only_as_a_proper_noun(
    text: str, kinds_named: set[str]
) -> None:
    assert product_topics(text) == kinds_named


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A subject word named in another form ("onboarding" is the stem "onboard").
        ("The onboarding session is on Tuesday", "onboarding got moved to Thursday"),
        # One thing counted, with no other subject named.
        ("Our team has 14 engineers.", "After the reorg we're down to 9 engineers."),
        # The holder named by a pronoun.
        ("My daughter is in 2nd grade", "She started 3rd grade this fall"),
    ],
)
def test_a_subject_named_another_way_is_one_subject(old: str, new: str) -> None:
    assert judge(old, new) is not None


def test_a_change_for_a_purpose_of_its_own_keeps_the_old_fact() -> None:
    # The switch is for work notes; the old fact says nothing of them.
    assert judge("I write my notes in Obsidian", "For work notes I switched to OneNote") is None
    # The same purpose on both sides: one subject, changed.
    assert judge("For side projects I use Vim", "For side projects I switched to Helix") is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A product kind named in either language: 安卓 is Android, 沃尔沃 is Volvo.
        ("我用安卓手机", "我换了iPhone"),
        ("我开的是沃尔沃", "去年换成了比亚迪"),
        ("I drive a Honda", "I switched to a Tesla"),
    ],
)
def test_a_product_of_one_kind_replaces_another_in_either_language(old: str, new: str) -> None:
    assert judge(old, new, (product_topics(old), product_topics(new))) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One part said to stay ("地点不变", "还是…") beside a part that moved.
        ("体检约在3号上午九点，在社区医院", "体检改到10号了，时间不变，还是社区医院"),
        # A second change said with 也, in a clause of its own.
        ("年会定在酒店三楼，晚上七点开始", "年会换到五楼宴会厅了，开始时间也推迟到七点半"),
        # Why it moved, said with 临时 in a clause of its own: not a change for a while.
        ("牙医约在周三下午四点", "临时要出差，牙医改到下周五了"),
        # An English plan said beside a change does not hide it.
        ("I work at Google.", "I left Google last month and plan to take a break."),
        ("We use MySQL.", "We switched to Postgres and plan to migrate the rest in May."),
        # A plan of the past, or a schedule issued, is no plan beside a fact.
        ("五一去成都", "本来打算去成都结果改去重庆了"),
        ("项目上线定在5月", "上线推迟到6月了，新的排期计划下周出"),
        # "不过来了" gives up coming; 过 is no complement there.
        ("他周末过来吃饭", "他周末不过来了"),
    ],
)
def test_a_change_said_in_a_clause_of_its_own_is_one(old: str, new: str) -> None:
    assert judge(old, new, (product_topics(old), product_topics(new))) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Nothing changed; in English "still" covers the sentence.
        ("体检约在3号上午九点", "体检还是3号，照旧"),
        ("I walk 10,000 steps a day", "Still hitting my 10k daily steps, streak is going strong"),
        # A plan beside a fact changes nothing.
        ("我家房子是租的，在徐汇，一个月九千", "打算明年在嘉定买房，总价控制在五百万"),
        # A verb's complement ("认不出来了", "吃不下了") gives nothing up.
        ("同学会定在周六中午", "同学会喝多了，好几个人都认不出来了"),
        # "改到" moves a value, it is no verb "到" of the old text ("忙到凌晨").
        ("元旦店里忙到凌晨一点，腰都直不起来", "同学会改到3月15号了，地方也换了，改在老街的酒楼"),
        # 临时 in the changed clause, with one occasion, or beside what recurs: an
        # exception for a while, the old fact stands.
        ("牙医约在每周三下午四点", "这周牙医临时改到周五"),
        ("牙医约在每周三下午四点", "这周临时有事，牙医改到周五了"),
        ("每周日去奶奶家吃饭", "这周日奶奶临时有事，改去外婆家吃"),
        # A judgement is no "不…了" given up: 也 adds the guitar.
        ("我在学钢琴", "我也在学吉他了，钢琴练得不错了"),
    ],
)
def test_what_stays_a_plan_an_exception_or_a_complement_keeps_both(old: str, new: str) -> None:
    assert judge(old, new, (product_topics(old), product_topics(new))) is None
