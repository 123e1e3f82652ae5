"""The signals of change a new statement may carry, by kind, in English and Chinese:
from–to, instead-of, stopped, left, moved, postponed, cancelled, switched, a value
that rose or fell, now, new, used-to, a status reached. Each kind is one concept,
read by :mod:`memory_pg.text.changes`; this module holds only the lexicons.

Pure data, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Signals of change by kind, each a concept in both languages.
CUES: tuple[tuple[str, str], ...] = (
    (
        "from_to",
        r"从[^，,。；;]{1,20}?(?:改|换|搬|迁|调|挪|推迟|提前|降|涨|升|变|转|提|加|减|砍)[^，,。；;]{0,3}?[到至成为]"
        r"|\bfrom\b(?:[^.;]|\.(?=\d)){1,40}?\bto\b|由[^，,。]{1,15}?(?:改|换|变)[为成]",
    ),
    (
        "instead",
        r"\binstead\b|\brather than\b|\bin place of\b|而不是|而非|取代|替代|代替|替换",
    ),
    (
        "stopped",
        r"\bno longer\b|\bnot anymore\b|\bany ?more\b|\bstopped\b|\bquit\b|\bdropped\b"
        r"|\bditched\b|\bretired\b|\bgave up\b|\bshut (?:it )?down\b|\bclosed\b|\bis gone\b"
        r"|\bdecommissioned\b|\boutgrew\b|\bsold\b|\bturned off\b|\bkilled\b|\bended\b(?!\s+up)"
        r"|\bpassed away\b|\bdied\b|\bthrew (?:it |them )?(?:out|away)\b|\bgot rid of\b"
        r"|去世|过世|扔了|扔掉|丢了|处理掉"
        r"|不再|停(?:用|掉|了|止)|戒(?:了|掉)|下线|关掉|关了|砍掉|砍了|放弃|不用了|退了|弃用|废弃"
        r"|淘汰|没了|不开了|不坚持|结束了|撤了|卖了|解约",
    ),
    (
        "left",
        r"\bleft\b|\bresigned\b|\bquit\b|\blaid off\b|\bfired\b|\bwent on leave\b"
        r"|离职|辞职|跳槽|辞了|被裁|走了|退休(?![的前])",  # not "退休的老师", "退休前"
    ),
    (
        "moved",
        r"\bmoved\b|\bmoving\b|\brelocated\b|\btransferred\b|\bmigrat(?:ed|ing)\b|\bre-?homed\b"
        r"|搬(?:到|去|了|家|回)|迁(?:到|至|移|去|回)|调(?:到|回|去)|挪(?:到|去)|转到|转去|落户到"
        # A home of one's own is a move: "bought a house in the suburbs", "买房了".
        r"|\bbought (?:a|our|my) (?:house|home|place|condo|flat|apartment)\b"
        r"|\bgot (?:a|our|my) own (?:place|apartment|flat)\b|\bmoved out\b|买(?:了)?房"
        # Settled somewhere: "在那边定居了", "在成都安家了", "settled down in Denver".
        r"|定居|安家|\bsettled (?:down |in\b)",
    ),
    (
        "postponed",
        r"\bpostponed\b|\bpushed (?:back|out|to)\b|\bdelayed\b|\bslipped\b|\brescheduled\b"
        r"|\bmoved up\b|\bbrought forward\b|\breschedul\w*|\bbumped\b|\bpushed\b|\brebooked\b"
        r"|推迟|延期|延后|改期|提前到|顺延|往后推|推到|改[约签订排](?=到|在|成)"
        # A date booked or put off to another: "复查约到下周一了", "排到月底".
        r"|(?:约|排|定|延|拖)到(?=\s*(?:[\d零一二两三四五六七八九十]|下|这|本|明|后|周|星期|礼拜|月底|月初|年底))",
    ),
    (
        "cancelled",
        r"\bcancel(?:l)?ed\b|\bcalled off\b|\bscrapped\b|\bfell through\b|\bwithdr[ae]w\b"
        r"|\bbroke up\b|\bcame off\b|\bstepped down\b|取消|作废|黄了|分手|离婚|退课|退学"
        # "不去了", "就不弄了", "不过来了"; not a verb's complement ("认不出来了", "看
        # 不清了") nor a judgement ("不错了", "差不多了").
        r"|(?<!差)不(?!出来|出去|下去|下来|起来|动了|懂|清|及|着|完|见|错|少|多|行|早|好意思)"
        r"[\u4e00-\u9fff]{1,2}了",
    ),
    (
        "switched",
        r"\bswitched\b|\bswapped\b|\breplaced\b|\bupgraded\b|\bdowngraded\b|\brewr(?:ote|itten)\b"
        r"|\bchanged\b|\bconverted\b|\brenamed\b|\bupdated\b|\bbecame\b|\bturned into\b"
        r"|\bnow (?:use|uses|using|run|runs|on|is|are|at|in)\b|\bgone\b|\bgoing\b"
        r"|换成|换了|改用|换用|切到|切换|升级到|升级成|降级到|更换|换掉|改成|改为|改到|变成|变为"
        r"|更新|改名|重写|转成|改了|改(?=[喝吃用在去做走坐买学打穿开住])|换(?=[了成到掉个])|转行|转岗"
        r"|\b(?:went |going |got |am |are |is |we're |i'm )?back to\b|回到|恢复(?:到|成|为)"
        r"|入职|\bjoined\b|\bstarted (?:at|a new job)\b|进入|\btook over\b|\bhanded\b"
        r"|\bpassed to\b|\btaken over\b|接手|接管|换人"
        # A job taken: "took a full time job as…", "landed a role at…".
        r"|\b(?:took|got|accepted|landed) (?:a|an) (?:[\w-]+ ){0,2}(?:job|position|role|offer)\b",
    ),
    (
        "value",
        r"\braised\b|\bcut\b|\bincreased\b|\bdecreased\b|\bdown to\b|\bup to\b|\brose\b|\bfell\b"
        r"|\bgrew\b(?!\s+up)|\bcrossed\b|\breached\b|\bhit\b|\bjumped\b|\bdoubled\b|\bhalved\b"
        r"|\bapproved\b|\brepriced\b|\bscaled\b|\bextended\b|\bshortened\b"
        r"|涨到|降到|涨了|降了|提高到|提到|减少到|减到|只剩|还剩|剩下|增加到|达到|突破|调整|调到|调成"
        r"|涨租|加到|减为|升到|批下来|(?:进度|数)到\s*[\d零一二两三四五六七八九十]"
        # Pay and rank changed: "加薪了", "升职了", "got promoted".
        r"|加薪|涨薪|降薪|调薪|涨工资|升职|晋升|\bpromoted\b"
        # Promoted to a rank: "升经理了", "升了主管".
        r"|升(?:了|到|为|成)?(?=(?:高级|资深|副|正)?(?:经理|主管|总监|组长|主任|科长|处长|部长|店长|主编))"
        # Any verb that brings a value to a number: "放宽到6000", "缩到两台",
        # "lowered my savings target to 7k", "trimmed it to $40".
        # Only the verb is the signal; the words up to the number stay the text's own
        # ("upped my lisinopril to 20mg" is about lisinopril).
        r"|[\u4e00-\u9fff]到(?=\s*[\d零一二两三四五六七八九十])"
        r"|\b[a-z]+ed\b(?=[^.,;]{0,30}?\bto\s+\$?\d)",
    ),
    (
        "now",
        r"\bnow\b|\bthese days\b|\bnowadays\b|\bcurrently\b|\bfrom now on\b|\bgoing forward\b"
        r"|\bas of\b|\bagain\b|\bstarted\b|\bthis (?:year|time)\b|这次|这回"
        r"|现在|如今|目前|眼下|以后|从此|今后|已经|已(?=[\u4e00-\u9fff])|正式|重新|又开始"
        # What was settled in the end: "ended up picking Oct 11", "最终定在10月8号" (not
        # "最终还是去医院做了检查", "turned out my cough was allergies": no value settled).
        r"|\bended up (?:in|at|on|with|picking|choosing|going with|being|as)\b"
        r"|\bturn(?:ed|s) out to be\b|\bsettled on\b|\bdecided on\b"
        r"|(?:最终|最后|后来)(?:还是)?(?=定|决定|选|改|换|确定|敲定|填的是|用的是)",
    ),
    (
        "new",
        r"(?<!\d )\bnew\b|\bbrand-new\b|新的"
        r"|(?:^|(?<=[，,。的个了是换]))新(?![提增加开建招买来添到认识交])(?=[\u4e00-\u9fff])"
        r"|换了个|换了一个",
    ),
    (
        "used_to",
        r"\bused to\b|\bformerly\b|\bpreviously\b|\bthe old\b|\bwas too\b"
        r"|以前|原来|原本|之前|过去|旧的|(?<![照依仍])旧",
    ),
    (
        "status",
        r"\bresumed\b|\bunblocked\b|\bwent (?:live|ga)\b|\blaunched\b|\bshipped\b|\bpassed\b"
        r"|\bcompleted\b|\bfinished\b|\bback on track\b|\breleased\b|\bgot\b"
        r"|\bis done\b|\bdone\b|\bbooked\b|\bsorted\b|\bexpanded\b|\bnarrowed\b"
        r"|上线了|重启|恢复|通过|完成了|解决了|赶上|发布了|交付|好多了|搞定|办好了|办完了|弄好了|做完了",
    ),
)
#: What points back at a value said before instead of naming it: "从原来那天", "从之前那位",
#: "从一开始的打算", "从那个打卡软件", "from the old one".
POINTING_BACK = re.compile(
    r"(?:原来|原先|原本|本来|之前|以前|先前|一开始|起初|最初|上次|那个|那位|那家|那台|那款|老的|旧的)"
    r"|(?:the\s+)?(?:old|previous|former|original)\b|that\b|the\s+one\b",
    re.IGNORECASE,
)


CUE = re.compile("|".join(f"(?P<{k}>{p})" for k, p in CUES), re.IGNORECASE)

#: The kinds that say by themselves that a value was changed (not a word of time, a
#: new thing, a number reached, a former value or a status).
CHANGING = frozenset(
    {"from_to", "instead", "stopped", "left", "moved", "postponed", "cancelled", "switched"}
)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE = re.compile(r"[^，,。；;！!？?\n]+")


def changed_apart(text: str, words: re.Pattern[str]) -> bool:
    """Whether a clause of ``text`` says a change (a word of :data:`CHANGING`) without
    any of ``words``: "改到6月21号了，地点不变" changes the day whatever else stays, and
    "改期了！集合时间也提前了" is a second change, not an addition beside the first.
    Chinese only: its comma clauses each state a part of their own, where an English
    "still …, …" or "also …" covers the sentence."""
    for clause in _CLAUSE.findall(text):
        if not _HAN.search(clause):
            continue
        said = [m for m in CUE.finditer(clause) if m.lastgroup in CHANGING]
        if said and not words.search(clause):
            return True
    return False


#: The English words of change of seven letters or more, for reading them misspelt
#: (a shorter one is a letter away from too many words: "closet", "skilled").
_LONG_WORDS = frozenset(
    w for _, p in CUES for w in re.findall(r"\\b([a-z]{7,})\\b", p) if not w.endswith("ing")
)
#: Each misspelling read: a word of change with one letter dropped ("resheduled",
#: "transfered") or two letters swapped ("swtiched", "relcoated"). Not one letter
#: changed or added: that is how one real word becomes another ("stitched",
#: "charged", "designed", "presumed"). Nor the real words a letter dropped makes.
_MISSPELT: dict[str, str] = {
    typo: word
    for word in sorted(_LONG_WORDS, reverse=True)
    for typo in (
        *(word[:i] + word[i + 1 :] for i in range(1, len(word) - 1)),
        *(word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(1, len(word) - 2)),
    )
    if typo not in _LONG_WORDS and not word.startswith(typo)
}
# Real words a letter short of one: those of all-MiniLM-L6-v2's vocabulary (checked
# once, when this table was made) and a few it lacks.
for _real in (
    "competed unlocked scraped deceased reigned sipped stared stated lunched retied sapped"
).split():
    _MISSPELT.pop(_real, None)


@lru_cache(maxsize=4096)
def spelled(text: str) -> str:
    """``text`` with each misspelt word of change (:data:`_MISSPELT`) written as that
    word: users type fast ("dentist resheduled me", "swtiched to Datadog")."""
    if not re.search(r"[A-Za-z]{6,}", text):
        return text

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        return _MISSPELT.get(word.lower(), word)

    return re.sub(r"[A-Za-z]{6,}", fix, text)


#: A span of years ("worked at Oracle from 2018 to 2021"): when something was so, not a
#: value moved ("from 1950 to 2050 a month" is an amount), unless the old value is its start.
_SPAN = re.compile(
    r"(?:from|从)\s*((?:19|20)\d\d)(?!\d)\s*年?\s*(?:to|到|至)\s*(?:19|20)\d\d(?!\d)"
    r"(?!\s*(?:a\b|per\b|/|dollars|bucks|usd|元|块|万|k\b|%))",
    re.IGNORECASE,
)


def year_span(old: str, new: str, at: int) -> bool:
    """Whether the from–to at ``at`` in ``new`` is a span of years, not a move."""
    m = _SPAN.match(new, at)
    return m is not None and (_SPAN.search(old) is not None or m.group(1) not in old)


__all__ = ["CHANGING", "CUE", "CUES", "POINTING_BACK", "changed_apart", "spelled", "year_span"]
