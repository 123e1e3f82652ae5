"""A question answered by what it means, through the public store (issues 35 and 36).

The attribute a question asks ranks the memory stating it above other facts about
the same subject; a thing described is found by the name another memory gives it;
a plainly stated change replaces the old fact and the history says why.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_pg.config import RankingSettings

UNCLE = [
    "我姑父老家是江西九江的",
    "姑父在一家物流公司开货车",
    "我姑父今年五十三岁",
    "姑父特别爱喝茶，家里全是茶叶",
]


def first_answers(
    make_store: Any, notes: list[str], asked: tuple[tuple[str, str], ...]
) -> list[dict[str, Any]]:
    """A fresh user holding ``notes``; the first result for each question of
    ``asked`` (question, a word of its answer), checked to hold the answer."""
    store = make_store(user_id="alice")
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in notes])
    tops = []
    for question, answer in asked:
        top = store.search(question, top_k=1, track_access=False)[0]
        assert answer in top["text"], (question, top["text"])
        tops.append(top)
    return tops


def test_the_asked_attribute_of_the_subject_ranks_first(make_store: Any) -> None:
    asked = (
        ("我姑父多大年纪了？", "五十三岁"),
        ("姑父是干什么的？", "开货车"),
        ("我姑父是哪里人？", "九江"),
    )
    for top in first_answers(make_store, UNCLE, asked):
        assert top["attribute_match"] == 1.0


def test_without_the_attribute_weight_the_ranking_is_as_before(make_store: Any) -> None:
    store = make_store(user_id="alice", ranking=RankingSettings(attribute_weight=0.0))
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in UNCLE])
    hits = store.search("我姑父多大年纪了？", top_k=4)
    assert all("attribute_match" not in h for h in hits)


def test_an_age_of_someone_else_is_no_answer(make_store: Any) -> None:
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {"text": "我侄女今年六岁", "memory_type": "user_profile"},
            {"text": "姑父在一家物流公司开货车", "memory_type": "user_profile"},
        ]
    )
    hits = store.search("我姑父多大年纪了？", top_k=2)
    by_text = {h["text"]: h for h in hits}
    assert by_text["我侄女今年六岁"]["attribute_match"] != 1.0


def test_a_described_place_is_found_by_the_name_a_memory_gives_it(make_store: Any) -> None:
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {"text": "我常去的那家理发店是星剪，在地铁站旁边", "memory_type": "dialogue"},
            {"text": "星剪的剪发一次八十，有点贵", "memory_type": "dialogue"},
            {"text": "周末去公园跑了五公里", "memory_type": "dialogue"},
            {"text": "公司楼下新开了一家面馆", "memory_type": "dialogue"},
        ]
    )
    top = [h["text"] for h in store.search("我常去的那个理发店收费怎么样？", top_k=2)]
    assert "星剪的剪发一次八十，有点贵" in top
    assert "我常去的那家理发店是星剪，在地铁站旁边" in top
    # The use of what was returned is recorded as for any search.
    store.flush_uses()
    used = store.search("我常去的那个理发店收费怎么样？", top_k=2, track_access=False)
    assert all(h["access_count"] >= 1 for h in used)


def test_another_users_name_for_it_is_never_used(make_store: Any) -> None:
    bob = make_store(user_id="bob")
    bob.add_memories(
        [
            {"text": "我常去的那家理发店是星剪", "memory_type": "dialogue"},
            {"text": "星剪的剪发一次八十", "memory_type": "dialogue"},
        ]
    )
    alice = make_store(user_id="alice")
    alice.add_memory("我常去的那家理发店在小区门口", "dialogue")
    hits = alice.search("我常去的那个理发店收费怎么样？", top_k=5)
    assert [h["text"] for h in hits] == ["我常去的那家理发店在小区门口"]


def test_a_stated_change_replaces_and_the_history_says_why(make_store: Any) -> None:
    store = make_store(user_id="alice")
    old = store.add_memory("The offsite is in Lisbon", "key_decision")
    new = store.add_memory("The offsite moved to Porto", "key_decision")
    current = [m["text"] for m in store.list_memories()]
    assert current == ["The offsite moved to Porto"]
    event = next(e for e in store.history(old) if e["event"] == "superseded")
    assert event["detail"]["by"] == new
    assert event["detail"]["reason"] == "change"
    assert event["detail"]["evidence"]["cue_kind"] == "moved"


def test_a_todo_moved_replaces_the_old_one(make_store: Any) -> None:
    store = make_store(user_id="alice")
    store.add_memory("周六上午去车管所换驾照", "todo")
    store.add_memory("换驾照推迟到下周六了", "todo")
    assert [m["text"] for m in store.list_memories()] == ["换驾照推迟到下周六了"]


def test_two_facts_of_one_noun_stay(make_store: Any) -> None:
    store = make_store(user_id="alice")
    store.add_memory("测试环境用 MySQL", "key_decision")
    store.add_memory("生产环境不再用 MySQL", "key_decision")
    assert len(store.list_memories()) == 2


def test_an_age_stated_against_the_speakers_brings_the_speakers_age(make_store: Any) -> None:
    """ "我表哥多大？" is answered by two memories: "比我大五岁" and the speaker's own
    age. The second ranks right below the first, above the other facts."""
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {"text": "我表哥比我大五岁，在银行上班", "memory_type": "user_profile"},
            {"text": "我表哥喜欢打羽毛球", "memory_type": "user_profile"},
            {"text": "我今年二十六，刚工作两年", "memory_type": "user_profile"},
            {"text": "我舅舅今年五十了", "memory_type": "user_profile"},
        ]
    )
    top = [h["text"] for h in store.search("我表哥今年多大了？", top_k=3, track_access=False)]
    assert top[:2] == ["我表哥比我大五岁，在银行上班", "我今年二十六，刚工作两年"]


# One subject, one kind of fact: only the class's own word tells them apart.
CLASSES = [
    "女儿每周三下午学游泳",
    "女儿每周六下午学钢琴",
    "女儿每周日上午学围棋",
    "女儿每周五晚上学英语",
]


def test_a_typo_by_sound_or_a_word_in_pinyin_still_finds_the_memory(make_store: Any) -> None:
    asked = (
        ("女儿的游勇课是星期几？", "游泳"),  # 勇 for 泳: one sound
        ("女儿那个 gang qin 课是哪天来着", "钢琴"),
        ("女儿学为旗是星期几", "围棋"),  # 为旗 for 围棋
        ("女儿的yingyu课几点", "英语"),
    )
    first_answers(make_store, CLASSES, asked)


# Three costs of a shop, each a price: only a character (租) ties the question's
# word (租金) to the one it asks.
COSTS = [
    "电费一个月两千左右",
    "两个店员的工资一共一万二",
    "月租一万一，押一付三",
    "装修当时花了五万",
]


def test_a_word_meets_a_memory_that_shares_its_root(make_store: Any) -> None:
    first_answers(make_store, COSTS, (("租金多少？", "月租"), ("每月的电钱多少？", "电费")))


def holding(make_store: Any, notes: list[str]) -> Any:
    """A fresh user's store holding ``notes`` as profile memories."""
    store = make_store(user_id="alice")
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in notes])
    return store


NEIGHBOURS = [
    "我今年六十一，退休第六年了",
    "老伴比我大四岁，属龙的",
    "每天早上六点半去人民公园跳坝坝舞",
    "跳舞队的队长是王姐，比我小两岁",
    "王姐住在我们楼上，七楼",
    "王姐的孙子跟豆豆同一个班",
    "今天豆豆在幼儿园跟人打架了，哭着回来的",
    "豆豆上的幼儿园叫小天鹅，在玉林路",
    "女婿是中学数学老师，在七中",
    "女婿喜欢钓鱼，周末常去三圣乡那边",
]


def test_a_described_person_is_not_named_by_a_common_character(make_store: Any) -> None:
    # "那个人" describes by its clause, not by 人: "跟人打架" names no one it means,
    # so 豆豆 is not asked in its place; the age asked of 王姐 is answered by ages,
    # not by another fact that names her (the search asked with her name weighs none).
    store = holding(make_store, NEIGHBOURS)

    def top(question: str) -> list[str]:
        return [h["text"] for h in store.search(question, top_k=5, track_access=False)][:2]

    assert set(top("王姐今年多大？")) == {NEIGHBOURS[3], NEIGHBOURS[0]}
    for question in ("跳舞队领头的那个人住几楼？", "在七中教书的那个人周末喜欢干啥？"):
        assert not any("豆豆" in t for t in top(question)), question


ROOMMATES = [
    "新来的室友叫小周，在国贸那边上班，做投行的",
    "我们合租在望京，两室一厅，月租九千，两个人对半分",
    "小周比我小两岁，挺爱干净的",
    "我们组长老郭人不错，就是会开得太多",
    "我对花生过敏，吃宫保鸡丁都得挑出来",
    "小周对猫毛过敏，所以我们家没法养猫",
    "我爸在郑州老家开了个五金店",
    "小周老家是长沙的",
    "我老家郑州，坐高铁两个半小时到",
    "中午吃了楼下兰州拉面，二十二块",
]


def test_one_hop_answers_right_below_the_memory_that_names_the_thing(make_store: Any) -> None:
    # "不能跟猫待一块的那个人" is 小周 by "小周对猫毛过敏"; where 小周 comes from is
    # stated elsewhere, and answers with it, above the words that match by chance.
    store = holding(make_store, ROOMMATES)
    hits = store.search("不能跟猫待一块的那个人是哪里人？", top_k=5, track_access=False)
    assert [h["text"] for h in hits[:2]] == [ROOMMATES[5], ROOMMATES[7]]


def test_a_subject_typed_by_its_sound_is_the_subject(make_store: Any) -> None:
    # "游勇课" is typed for "游泳": the swimming class is the subject whose time is
    # asked, not the piano class that shares 朵朵 and 课 with the question.
    notes = [
        "朵朵的钢琴课在周六上午九点，在文三路那边",
        "朵朵还报了个游泳班，周日下午两点开始",
        "女儿朵朵今年上幼儿园大班了",
    ]
    store = holding(make_store, notes)
    top = store.search("朵朵的游勇课是几点的", top_k=3, track_access=False)[0]
    assert top["text"] == notes[1] and top["attribute_match"] == 1.0


FAMILY = [
    "男朋友小凯是做平面设计的，天天加班",
    "我爸开了二十年货车，腰不太好",
    "对了，我今年31，在苏州上班",
    "小凯比我大两岁，属马的",
    "我的经理是个广州人，说话特别快",
    "我的经理比我大十岁，孩子都上高中了",
    "周末和小凯去了趟平江路",
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # The asked person by another word: 对象 covers a boyfriend, 老爸 is 爸,
        # 上司 a manager; the attribute by the user's words (干哪行, 营生, 哪里人).
        ("我对象是干哪行的？", FAMILY[0]),
        ("我老爸靠什么营生？", FAMILY[1]),
        ("我的顶头上司是哪里人？", FAMILY[4]),
    ],
)
def test_a_person_asked_by_another_word_is_found_by_the_attribute(
    make_store: Any, question: str, answer: str
) -> None:
    store = holding(make_store, FAMILY)
    assert store.search(question, top_k=3, track_access=False)[0]["text"] == answer


REGIONS = [
    "我对象在电网公司上班，搞调度的，这礼拜又值夜班",
    "我对象他们单位食堂的饭贼难吃",
    "老爷子今年七十三了，天天去江边溜达",
    "我阿大腿脚不好，大夫让少走路",
    "我弟在杭州一家游戏公司做策划",
    "细佬话今年想同我合伙开档",
    "尕儿子上初二，在兰州三中",
    "尕儿子说他想学画画",
    "我以前在机务段开了三十年火车",
    "我那退休金一个月六千二",
]


LIVINGS = [
    "我姐夫一直在老家种果树，还养了几箱蜂",
    "我姐夫爱喝酒，一顿能喝半斤",
    "家里那只金毛叫旺财，三岁了",
    "楼下新开了个宠物店，老板挺热情",
    "额娘今年六十八了，腿脚还利索",
    "额娘做的臊子面最香",
    "孩他爸在一家研究所搞科研，天天加班",
    "孩他爸爱钓鱼，周末都不着家",
    "囡囡在南京读的是会计专业",
    "囡囡最爱吃鸭血粉丝",
]


SHOPS = [
    "我舅在镇上开修车铺，二十来年了",
    "我舅血压有点高，在县医院开了药",
    "我姨在二中教化学",
    "我姨的班这次考得不错，家长送了锦旗",
    "阿弟手机号换了，新号是 139-555-0172",
    "阿弟在昆明读研，明年毕业",
]


@pytest.mark.parametrize(
    ("memories", "question", "answer"),
    [
        # A husband asked of by the broader word the memory uses (对象).
        (REGIONS, "我老公是干什么工作的？", REGIONS[0]),
        # A father by the words of age or of a region (老爷子, 阿大).
        (REGIONS, "我爸今年多大岁数了？", REGIONS[2]),
        # A school by its number; a living driven ("开了三十年火车").
        (REGIONS, "我小儿子在哪个学校上学？", REGIONS[6]),
        (REGIONS, "我退休前是干哪行的？", REGIONS[8]),
        # A living by what one does (种果树, 搞科研), not by a job's name.
        (LIVINGS, "我姐夫是干啥的？", LIVINGS[0]),
        (LIVINGS, "我老公是做什么工作的？", LIVINGS[6]),
        # A dog asked of by its kind's broader word; a mother, a daughter, a husband
        # by the words of a region or of the child (额娘, 囡囡, 孩他爸).
        (LIVINGS, "我家那条狗叫什么？", LIVINGS[2]),
        (LIVINGS, "我老娘今年好大岁数了？", LIVINGS[4]),
        (LIVINGS, "我女儿学的啥专业？", LIVINGS[8]),
        # A shop run or a subject taught is a living, where one teaches the employer;
        # a brother by the south's 阿弟.
        (SHOPS, "我舅是干啥的？", SHOPS[0]),
        (SHOPS, "我姨在哪个学校教书？", SHOPS[2]),
        (SHOPS, "我弟弟电话多少？", SHOPS[4]),
    ],
)
def test_a_relative_a_living_or_a_kind_in_other_words_is_the_one_asked(
    make_store: Any, memories: list[str], question: str, answer: str
) -> None:
    store = holding(make_store, memories)
    assert store.search(question, top_k=3, track_access=False)[0]["text"] == answer


def test_an_age_stated_against_the_speaker_brings_the_speakers_own(make_store: Any) -> None:
    # "小凯比我大两岁" answers only with the speaker's age, said after a filler.
    store = holding(make_store, FAMILY)
    hits = store.search("我男朋友小凯今年多大？", top_k=3, track_access=False)
    assert {h["text"] for h in hits[:2]} == {FAMILY[3], FAMILY[2]}


@pytest.mark.parametrize(
    ("memory_type", "before", "after"),
    [
        (
            "user_profile",
            "I work in the marketing department",
            "transferred over to the sales team",
        ),
        ("user_profile", "我有抽烟的习惯", "烟已经戒了半年了"),
        ("user_profile", "我喜欢喝美式咖啡", "现在改喝拿铁了"),
        # Another person in a one-person role; a key said again with another name.
        ("key_decision", "Our tech lead is Tom.", "Our tech lead is Aisha now."),
        ("user_profile", "My accountant is Rita Gomez.", "Accountant: Sam Oduya, downtown."),
        # Said in chat with no word of change: a day, a product, a number in another's
        # place.
        ("project_status", "The visa interview is on May 14.", "visa interview got set for june 2"),
        ("key_decision", "Our CI runs on CircleCI.", "CI is Jenkins."),
        ("user_profile", "My phone number is 503-555-0117.", "Call me at 971-555-0188."),
        # A number given with a reason around it.
        ("user_profile", "我的手机号是139 5550 1234。", "运营商转网了 新号139 5550 8899"),
        # A day moved while another part stays, or a second change said with 也.
        (
            "project_status",
            "家长会定在周五下午三点，在三楼会议室",
            "家长会改到下周一了，还是下午三点，地点不变",
        ),
        (
            "project_status",
            "部门聚餐定在12号晚上六点，在湘菜馆",
            "聚餐改期了！改到19号，时间也提前到五点半",
        ),
    ],
)
def test_a_change_said_by_its_shape_replaces_the_old_memory(
    make_store: Any, memory_type: str, before: str, after: str
) -> None:
    store = make_store(user_id="alice")
    old = store.add_memory(before, memory_type)
    new = store.add_memory(after, memory_type)
    assert store.get(old)["superseded_by"] == new
    assert store.history(old)[-1]["detail"]["reason"] == "change"


@pytest.mark.parametrize(
    ("memory_type", "before", "after"),
    [
        ("todo", "Finish the slide deck by Thursday", "Rachel's slide deck got moved to next week"),
        ("key_decision", "A项目的产品经理是周敏", "B项目的产品经理换成了吴磊"),
        ("user_profile", "I work at Google as a PM.", "I moved my 1:1 to Thursday."),
        # Someone else's career; a description of the same dentist; a second phone.
        ("user_profile", "I work as a barista.", "Jess took a full-time job as a nurse."),
        ("user_profile", "My dentist is Dr. Patel.", "My dentist is really gentle."),
        ("user_profile", "My phone is 555-123-4567.", "Phone: 555-987-6543 (work)"),
        # A one-off day, a second product, a relative's number, progress to a goal.
        ("todo", "Payday is the 15th.", "payday is the 13th this month since it's a holiday"),
        ("key_decision", "Our CI runs on CircleCI.", "we use Jenkins too"),
        ("user_profile", "我的手机号是13822223333。", "电话15944445555，是我老公的"),
        ("user_profile", "Reading goal: 30 books", "hit 12 books toward my reading goal"),
        # A plan beside a fact; a verb's complement "认不出来了" is no "不…了" given up.
        (
            "user_profile",
            "我家房子是租的，在静安，一个月八千",
            "打算明年在松江买房，总价控制在四百万",
        ),
        ("project_status", "婚礼定在十月二号，在老家办", "婚礼上喝多了，好几个老同学都认不出来了"),
    ],
)
def test_what_only_looks_like_a_change_keeps_both_memories(
    make_store: Any, memory_type: str, before: str, after: str
) -> None:
    store = make_store(user_id="alice")
    store.add_memory(before, memory_type)
    store.add_memory(after, memory_type)
    assert {r["text"] for r in store.list_memories()} == {before, after}


#: A partner and a child only ever called by name; a colleague named as often.
BY_NAME_ONLY = [
    "小凡在一家物流公司开货车，常年跑长途",
    "小凡说他爸妈年底想见见我，催我们把婚事定了",
    "情人节跟小凡去吃了日料，人均三百",
    "同事老周也开货车，跟小凡一个车队",
    "老周说他儿子考上研究生了",
    "朵朵期末考了全班第三，班主任夸她进步大",
    "朵朵说长大想当兽医",
    "朵朵今年九岁，属狗",
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("我男朋友是干啥的？", BY_NAME_ONLY[0]),
        ("我闺女今年多大了？", BY_NAME_ONLY[7]),
    ],
)
def test_a_partner_or_a_child_called_only_by_name_is_found_by_what_is_said_of_them(
    make_store: Any, question: str, answer: str
) -> None:
    # No memory says who the boyfriend or the daughter is: a wedding talked of and the
    # other's parents, or an exam and a class teacher, say it. (老周's memory says what
    # 小凡 does too.)
    store = holding(make_store, BY_NAME_ONLY)
    hits = store.search(question, top_k=3, track_access=False)
    assert answer in [h["text"] for h in hits[:2]]


@pytest.mark.parametrize(
    ("notes", "question", "answers"),
    [
        (
            [
                "早上跟老李在公园下棋，输了三盘",
                "对门老李，七十了，以前开公交车",
                "老李家孙女考上了大学，请我们喝酒",
                "跟你说下，我今年六十八，退休前干桥梁设计",
            ],
            "老李和我谁岁数大？",
            ("七十", "六十八"),
        ),
        (
            [
                "新买的扫地机器人是石头的，花了2899，比原来那个安静",
                "周末去商场看了半天手机，最后啥也没买",
                "给阳台换了台烘干机，美的的，3499块",
                "扫地机器人每天上午十点自己出来扫",
            ],
            "扫地机器人和烘干机加起来花了多少？",
            ("2899", "3499"),
        ),
    ],
)
def test_both_sides_of_a_comparison_or_a_sum_lead_the_results(
    make_store: Any, notes: list[str], question: str, answers: tuple[str, ...]
) -> None:
    # What is asked is stated of each side in a memory of its own; both lead.
    store = make_store(user_id="alice")
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in notes])
    top = [h["text"] for h in store.search(question, top_k=2, track_access=False)]
    assert all(any(a in t for t in top) for a in answers), top


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("家长会最后是哪天开的？", "家长会改到下周一了，还是下午三点，地点不变"),
        ("家长会现在定在哪天？", "家长会改到下周一了，还是下午三点，地点不变"),
        # What was first said is asked for: the older stays first.
        ("家长会后来改了，原来定的是哪天？", "家长会定在周五下午三点，在三楼会议室"),
    ],
)
def test_a_question_about_the_end_gets_the_newer_statement_first(
    make_store: Any, question: str, first: str
) -> None:
    # Dialogue keeps both; the newer says the day moved, and answers what holds now.
    notes = [
        "家长会定在周五下午三点，在三楼会议室",
        "女儿这学期数学进步挺大，老师让家长会上分享一下",
        "家长会改到下周一了，还是下午三点，地点不变",
    ]
    assert_leads(make_store, notes, question, notes.index(first))


def assert_leads(make_store: Any, notes: list[str], question: str, first: int) -> None:
    """Of ``notes`` (dialogue, oldest first), ``notes[first]`` answers ``question``
    first; where that is the last note, the first one (the plan it changes) is right
    below it."""
    store = make_store(user_id="alice")
    for text in notes:
        store.add_memory(text, "dialogue")
    hits = [h["text"] for h in store.search(question, top_k=3, track_access=False)]
    assert hits[0] == notes[first], hits
    if first == len(notes) - 1:
        assert hits[1] == notes[0], hits  # the older right below the newer that changes it


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("国庆出游的安排最后定在什么时候？", 2),  # what became of the plan leads, the plan below
        ("国庆原来打算去哪儿玩？", 0),  # what was first said stays first
        ("现在国庆出游怎么安排的？", 0),  # a question about now follows nothing
    ],
)
def test_what_became_of_a_plan_is_found_by_the_plans_own_words(
    make_store: Any, question: str, first: int
) -> None:
    # The change shares no word with the question: only the plan's own words (厦门,
    # 民宿) lead to it. A later note of the same place with no word of change is none.
    notes = [
        "国庆打算去厦门玩，鼓浪屿的民宿已经订好了",
        "厦门的同学说鼓浪屿人特别多",
        "厦门民宿退掉了，行程推迟到11月15号",
    ]
    assert_leads(make_store, notes, question, first)


@pytest.mark.parametrize(
    ("notes", "question", "answer"),
    [
        (
            ["老同学当上主任医师了，儿子说要请他吃饭", "儿子今年三十五，在招商银行上班，做信贷的"],
            "我儿子在哪儿工作？",
            "招商银行",
        ),
        (
            ["邻居升了车间主任，表姐说替他高兴", "表姐在市二医院上班，离她家两站地"],
            "我表姐在哪儿工作？",
            "市二医院",
        ),
    ],
)
def test_the_attribute_asked_itself_ranks_above_a_related_one(
    make_store: Any, notes: list[str], question: str, answer: str
) -> None:
    # Both name the subject; an occupation also answers "where does he work", but the
    # memory that says where ranks first.
    store = make_store(user_id="alice")
    store.add_memories([{"text": t, "memory_type": "dialogue"} for t in notes])
    top = store.search(question, top_k=2, track_access=False)[0]
    assert answer in top["text"], top["text"]
