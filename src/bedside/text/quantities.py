"""Quantities read one way: number words as digits, and equal amounts spelt alike, before rules compare them.

bedside's two checkers compare the numbers of two sentences: EditJudge's clinical-safety guard
(:mod:`bedside.text.conflicts`) a clinician's against a draft's, the simulator fidelity checker
(:mod:`bedside.sim.contradiction`) a simulated patient's against its facts. Equal amounts written differently
must compare equal and different ones must not: "3,000 mg" is "3 g", "48 hours" is "2 days", "every 12 hours"
is "twice a day", "a hundred and two point five" is 102.5; "125 micrograms" is not "75 mcg", a teaspoon is not
a tablespoon. :func:`normalise_quantities` rewrites a sentence so that the rules' plain digit-and-unit reading
sees that:

- number words become digits with text2num (``alpha2digit``); "one" only before a unit or a count ("one
  tablet"), never as a pronoun ("the blue one", "no one") nor cut out of a compound ("twenty-one days" is 21
  days); a number word joined to its unit stands apart from it ("a twenty-four-hour period" is a 24 hour
  period); "a single drop" is 1 drop; "and a half" and "half a" add 0.5; "point four" is 0.4, "one-fifty" 150;
- a share of a group is a percentage ("nine out of ten people" is 90 percent of people; "six out of ten", a
  score, names no group and is left as said, and a written score is read as said: "6/10" is "6 out of 10");
- an acronym is kept from the number-word reader (a "TENS machine" is not a "10 machine");
- a thousands separator is not two numbers ("4,000 mg" is 4000 mg, never 0 mg); a rough number is about it
  ("eight-ish" is "about 8"); a capital L after a number is litres ("2 L");
- spoken spans of time ("a quarter of an hour", "a fortnight", "a decade", "a year and a half", "a week or two") become
  amounts;
- amounts of mass, volume, length, temperature and time are converted with pint to one unit each: milligrams
  (a weight in pounds at two significant figures of kilograms, since "44 pounds" is someone's "20 kilograms"),
  millilitres, millimetres ("4 mm" is "0.4 cm"), degrees Celsius, and the largest of weeks, days, hours,
  minutes or seconds that keeps a whole number ("sixty seconds" is 1 minute; months and years are left as
  said: a month is not a fixed number of days to a patient);
- an interval that divides the day becomes the frequency the rules read ("every 8 hours", "q8h", "8 hours
  apart": three times a day), and "N times a day" keeps the words the rules read in; alternate days are every
  2 days ("every other night", "every second day" and "on alternate nights" are "every 2 nights"); "six days
  out of the month" is six days a month; "three sessions every week" is three times a week, "each fortnight"
  every 2 weeks, "three times over the course of each day" three times a day; "for hours" is several hours, and
  "cut by one tenth" (a quarter, a half) a share of 10 (25, 50) percent;
- a year said as two numbers is one ("twenty nineteen" is 2019, "nineteen eighty-five" 1985); a person's age
  said as a bare number ("I am 55 and ...") is marked (:data:`BARE_AGE`), and so is the age someone was at an
  event ("diagnosed when I was 19", :data:`AGE_AT`), for readers that compare counts to leave out
  (:func:`without_ages`);
- a 24-hour clock time is said with am or pm ("22:00" is "10 pm", as "nine at night" is "9 pm" to the rules);
  a range whose unit is said once gives it to both numbers ("48 to 72 hours" is "2 days to 3 days"), except a
  mass per volume, whose range stays whole ("180-220 mg/dL"); a mass per volume is compared in mg/dL ("11.2 g/dL"
  is "112 g/L").

Which library reads what: text2num (number words), pint (units and their conversion); the rest is the list of
spoken spans below. A text that any of them cannot read is left as it was: a sentence without a quantity,
of only symbols, or in another language comes back unchanged.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_FRACTIONS = {"half": 0.5, "quarter": 0.25}

# Spoken spans of time, read before number words: (pattern, amount and unit).
_SPANS: tuple[tuple[str, str], ...] = (
    (r"\ba quarter of an hour\b", "15 minutes"),
    (r"\bhalf an hour\b|\ba half hour\b|\bhalf-hour\b", "30 minutes"),
    (r"\bthree quarters of an hour\b", "45 minutes"),
    (r"\ban hour and a half\b", "90 minutes"),
    (r"\ba day and a half\b", "36 hours"),
    (r"\ba week and a half\b", "10.5 days"),
    (r"\ba fortnight\b|\bfortnight\b", "14 days"),
    (r"\ba year and a half\b", "18 months"),
    (r"\ba month and a half\b", "1.5 months"),
    (r"\bhalf a year\b", "6 months"),
    (r"\b(?:once a|every|per|each) decade\b", "every 10 years"),
    (r"\b(?:a|one) decade\b", "10 years"),
    (r"\b(?:the )?day before yesterday\b", "2 days ago"),
    (r"\bhalf a day\b", "12 hours"),
    # "thrice daily" is "three times daily" (the rate readers know "three times", not "thrice")
    (r"\bthrice\b", "three times"),
    (r"\b(?:a|one) dozen\b", "12"),
    # "a couple of hundred metres" is two hundred, not a hundred and a couple
    (r"\b(?:a )?couple(?: of)? (hundred|thousand)\b", r"two \1"),
    # "a single drop": one, where what follows is counted
    (
        r"\ba single(?= (?:[a-z-]+ )?(?:drop|tablet|pill|capsule|dose|puff|injection|shot|patch|spray|teaspoon"
        r"|tablespoon|sachet|vial|suppository|lozenge)s?\b)",
        "one",
    ),
    (r"\bover the course of (?:each|a|every|the) day\b", "a day"),
    # "for hours" is hours, more than one; "cut by a tenth" is a share (not "by half past one")
    (r"\bfor hours(?: on end)?\b", "for several hours"),
    (r"\bby (?:a|one) tenth\b", "by 10 percent"),
    (r"\bby (?:a|one) quarter\b(?! (?:past|to)\b)", "by 25 percent"),
    (r"\bby (?:a |one )?half\b(?! past\b)", "by 50 percent"),
    (r"\ban hour or two\b", "1 to 2 hours"),
    (r"\b(?:a|the (?:next|coming|last|past)) (day|week|month|year) or two\b", r"1 to 2 \1s"),
    (r"\b(for|only|just) the (?:last|past) (day|week|month|year)(?: or so)?\b", r"\1 1 \2"),
    (r"\ba (hundred|thousand)(?= and\b)", r"one \1"),
    (r"\bone and a half\b", "1.5"),
    (r"\b(?:one|a) half of (a|an)\b", r"half \1"),
)
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_DIGIT = "one|two|three|four|five|six|seven|eight|nine"
_HUNDREDS_SPOKEN = re.compile(
    rf"\b(one|two)[- ]({_TENS})(?:[- ]({_DIGIT}))?\b|"
    rf"(?<!\bat )(?<!\bby )(?<!\baround )(?<!\buntil )(?<!\btill )(?<!\bbefore )(?<!\bafter )(?<!\bfrom )"
    rf"\b({_DIGIT})[- ]((?!thirty\b){_TENS})(?!(?<=forty)[- ]five\b)(?:[- ]({_DIGIT}))?\b"
    r"(?! (?:am|pm|a\.m|p\.m|o'clock|in the|tonight|minutes?|hours?|days?|weeks?|months?|years?|times)\b)",
    re.IGNORECASE,
)
"""Hundreds said as two numbers, as patients read doses and readings: "one twenty-five" is 125, "one fifty" and
"one-fifty" 150, "seven fifty" 750, "three twenty-five" 325. From three up, not where it may be a clock time ("at
seven thirty", "six forty-five", "eight twenty in the morning")."""
_BARE_POINT = re.compile(rf"(?<![\w.,] )(?<![\w.,])\b(point)(?= (?:{_DIGIT}|zero|oh)\b)", re.IGNORECASE)
"""A decimal said without its leading zero ("point four milligrams"): read as "zero point four", 0.4; only where no
word comes right before it ("at this point four of us" keeps its four)."""
_DOSES_PER = re.compile(
    r"\b(\d+) (?:doses|injections|shots|infusions|sessions|treatments|visits|appointments) "
    r"(?:a|per|each|every|in (?:a|one|any)) (day|week|month)\b",
    re.IGNORECASE,
)
"""A count of doses or sessions in a period is a rate: "three doses a day" is three times a day, and so are "never
more than three doses in a day" and "three sessions every week" (where "two tablets a day" may be one dose of
two)."""
_DECADES = re.compile(r"\b(\d+) decades\b", re.IGNORECASE)
""""Three decades" is thirty years (read once its number is digits), as "a decade" is ten."""
_ODDS = re.compile(r"\b(\d+|one) in ([2-9]|[1-9]\d)(?= (?:chance|risk)\b)", re.IGNORECASE)
""""A one in seven chance" is a risk of about 14 percent (a share of ten or a hundred is :data:`_CHANCE`'s)."""
_ISH = re.compile(
    rf"\b(\d+|{_DIGIT}|ten|eleven|twelve|(?:{_TENS})(?:-(?:{_DIGIT}))?)-?ish\b",
    re.IGNORECASE,
)
"""A number said roughly ("eight-ish", "fortyish"): about that number."""
_LITRES = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ?L\b")
"""Litres written with a capital L ("2 L", "1.5L"); a lower-case "l" is too often something else."""
_EACH_SPAN = re.compile(r"\beach (\d+(?:\.\d+)? (?:hours?|days?|weeks?|months?|years?))\b", re.IGNORECASE)
""""Each 2 weeks" (as "each fortnight" reads) is every 2 weeks."""
_WHOLE_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.0+(?!\d|\.\d)")
"""A whole number written with a decimal point ("a target of 2.0 to 3.0"): the same number as "2 to 3"."""
_WORD_VALUE = {w: i for i, w in enumerate(_DIGIT.split("|"), start=1)} | {
    w: 10 * i for i, w in enumerate(_TENS.split("|"), start=2)
}
_SPOONS = {"teaspoon": 5.0, "teaspoons": 5.0, "tsp": 5.0, "tablespoon": 15.0, "tablespoons": 15.0, "tbsp": 15.0}
"""Millilitres in a medicine spoon: the metric 5 ml and 15 ml that dosing instructions use, not pint's US
customary 4.93 ml and 14.79 ml."""
_COMPILED_SPANS = tuple((re.compile(p, re.IGNORECASE), amount) for p, amount in _SPANS)

# Intervals that divide the day, read as the frequencies the guard's rules name in words.
_PER_DAY_WORDS = {1: "once a day", 2: "twice a day", 3: "three times a day", 4: "four times a day"}
_EVERY_HOURS = re.compile(r"\b(?:every|each) (\d+(?:\.\d+)?) ?(?:hours?|hrs?|h)\b|\bq ?(\d+) ?h\b", re.IGNORECASE)
_APART = re.compile(
    r"\b(\d+(?:\.\d+)?) ?(seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?) "
    r"(?:apart\b(?! from)|between (?:[a-z]+ ){0,2}?(?:doses|tablets|pills|feeds|injections|puffs)\b)",
    re.IGNORECASE,
)
"""Doses or contractions "8 hours apart" come "every 8 hours", as doses with "6 hours between doses" do ("2 hours
apart from milk" is a food rule)."""
_TIMES_A_DAY = re.compile(r"\b([1-4]) times? (?:a|per|each|every) day\b|\b([1-4]) times daily\b", re.IGNORECASE)
_ALTERNATE = re.compile(
    r"\b(?:on alternate|every other|every 2nd) (day|night|morning|evening|week|month)s?\b", re.IGNORECASE
)
"""A dose on alternate days comes every 2 days ("every other night", "every second day", "on alternate days")."""

_DAYS_OUT_OF = re.compile(r"\b(\d+(?:\.\d+)?) days? (?:out )?of (?:the|a|every|each) (week|month|year)\b", re.I)
""""six days out of the month" is six days a month, a rate, not a span of six days."""
_YEAR_TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_YEAR_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_YEAR_UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_SPOKEN_YEAR = re.compile(
    rf"\b(nineteen|twenty)[ -](?:({'|'.join(_YEAR_TEENS)})|({'|'.join(_YEAR_TENS)})(?:[ -]({'|'.join(_YEAR_UNITS)}))?"
    rf"|oh[ -]({'|'.join(_YEAR_UNITS)}))\b(?! vision)",
    re.IGNORECASE,
)
"""A year said as two numbers ("twenty nineteen", "nineteen eighty-five", "twenty oh nine"), which text2num reads
as two: "in twenty fifteen" is 2015, not 20 and 15."""


def _spoken_year(match: re.Match[str]) -> str:
    century = 1900 if match.group(1).lower() == "nineteen" else 2000
    teen, tens, unit, oh = (g.lower() if g else None for g in match.groups()[1:])
    if teen:
        return str(century + 10 + _YEAR_TEENS.index(teen))
    if tens:
        return str(century + 20 + 10 * _YEAR_TENS.index(tens) + (_YEAR_UNITS.index(unit) + 1 if unit else 0))
    return str(century + _YEAR_UNITS.index(oh or "") + 1)


_SHARE = re.compile(
    r"\b(\d+) (?:out of|in) ([1-9]\d*)(?= (?:people|patients|persons|women|men|adults|children|kids|babies|cases)\b)",
    re.IGNORECASE,
)
""""Nine out of ten people", "1 in 5 women": a share of a group, as "90 percent of people" says it (not a score:
"a six out of ten" names no group)."""
_CHANCE = re.compile(
    r"\b(\d+) (?:in|out of(?! 10\b)) (10|100|1000|10000|100000)\b(?![ -]?(?:%|percent|[a-z]*(?:mg|ml|g|units?"
    r"|minutes?|hours?|days?|weeks?|months?|years?|times?)\b))",
    re.IGNORECASE,
)
""""A 1 in 100 chance", "about 1 in 1000": a risk said as a share of ten, a hundred or a thousand, as "1 percent"
says it; not a count in a span ("1 in 10 days" is no share), nor a score ("six out of ten": `_SCORE`)."""
_QUARTER_A = re.compile(r"\b(?:a|one) quarter of (?:a|an) (?=[a-z])", re.IGNORECASE)
""""A quarter of a milliliter": 0.25 of what follows (after the spans, so "a quarter of an hour" is 15 minutes)."""
_SCORE = re.compile(r"(?<![\d/.])(\d+(?:\.\d+)?)/(10|5)\b(?!/\d)")
"""A score written as a fraction ("pain 6/10"), read as it is said ("a six out of ten"), so a patient's spoken score
and a written one give the same numbers; not a reading ("130/80") nor a date ("2/10/2024")."""
_PRESSURE = re.compile(r"\b(\d{2,3}) over (\d{2,3})\b", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+)(?!\d|,\d|\.\d)")
_WORD_BEFORE_UNIT = re.compile(
    rf"\b((?:{_TENS})(?:-(?:{_DIGIT}))?|{_DIGIT}|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen"
    r"|eighteen|nineteen)-(second|minute|hour|day|week|month|year)\b",
    re.IGNORECASE,
)
"""A number word joined to its unit ("a twenty-four-hour period", "a six-week course"), which text2num reads only
once the unit stands apart."""
_AGE_AFTER = (
    r"(?:,? (?:i think|i guess|i believe))?(?=\s*(?:[,.;]|$)|\s+(?:and|now|but|so|with|this year|next month)\b)"
)
BARE_AGE = re.compile(
    r"\b(?:i am|i'm|she is|she's|he is|he's|(?:i|she|he) turned|aged)\s+(\d{1,3})" + _AGE_AFTER, re.IGNORECASE
)
"""A person's age said as a bare number ("I am 55 and I have COPD", "she's 4 now", on digits): not a count to
meet another number but an age, as "55 years old" is."""
AGE_AT = re.compile(
    r"\b(?:when (?:i|she|he|you) (?:was|were),?(?: (?:like|about|around|only|just|maybe),?)*|(?:at|since|from) "
    r"(?:the )?age(?: of)?)\s+(\d{1,3})(?!\s*(?:%|percent))\b|"
    r"\b(?:i|she|he) was,? (?:(?:like|about|around|only|just|maybe),? )*(\d{1,3})"
    r"(?:" + _AGE_AFTER + r"|(?:,? (?:i think|i guess))?(?=,? when\b))",
    re.IGNORECASE,
)
"""The age someone was when something happened ("diagnosed when I was 19", "a heart attack at age 50", "smoked since
age 16", "I was about eight, I think, when it happened"): compared only with another such age, neither with a count
nor with the person's age now ("Just once, when I was nine" says nothing against "I am 14"). Not "broke her hip at
80.": read so, it no longer met the bare "around forty" an answer gives (three contradictions lost)."""


def without_ages(text: str) -> str:
    """``text`` (its numbers as digits) with each bare age's number (now or when something happened) taken out, for
    readers that compare counts."""
    text = BARE_AGE.sub(lambda m: _without_group(m, 1), text)
    return AGE_AT.sub(lambda m: _without_group(m, 1 if m.group(1) else 2), text)


def _without_group(match: re.Match[str], group: int) -> str:
    return (
        match.group()[: match.start(group) - match.start()] + "age" + match.group()[match.end(group) - match.start() :]
    )


_AFTER_TENS = "".join(f"(?<!{tens}[ -])" for tens in _TENS.split("|"))
"""Not the units word of a compound number ("twenty-one days", "thirty one tablets"), which text2num reads whole."""
_ONE = re.compile(
    _AFTER_TENS
    + r"\bone(?=\s+(?:[a-z]+\s+)?(?:mg|milligrams?|mcg|micrograms?|grams?|g|ml|millilit(?:er|re)s?|tablets?|pills?"
    r"|capsules?|puffs?|doses?|units?|drops?|patch(?:es)?|teaspoons?|tablespoons?|days?|weeks?|months?|years?|hours?"
    r"|minutes?|kg|kilos?|glass(?:es)?|cups?|drinks?|litres?|liters?|shots?|injections?|inhalers?|sprays?"
    r"|pens?|vials?|sachets?)\b"
    r"|\s+(?:to|or)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d))",
    re.IGNORECASE,
)
_JUST_THE_ONE = re.compile(
    r"\b(?P<lead>(?:just|only)(?: (?:keep|keeps|have|has|had|got|use|uses|take|takes|carry|carries|need|needs))? the )"
    r"one\b(?!\s+(?:of|who|that|which|with|i|you|he|she|they|we)\b)",
    re.IGNORECASE,
)
"""A count said as "just the one" ("just the one chest infection last winter", "I only carry the one pen" are 1),
not a pronoun."""
_PRONOUN_ONE = re.compile(
    _AFTER_TENS + r"(?<!\bpoint )(?<!\bhundred and )(?<!\bthousand and )\bone\b"
    r"(?!\s+point\s+(?:zero|one|two|three|four|five|six|seven|eight|nine)\b)(?!\s+(?:hundred|thousand)\b)",
    re.IGNORECASE,
)
"""Every "one" but one in a decimal ("one point two" is 1.2, "eight point one" 8.1, read by text2num) or in hundreds
and thousands ("a hundred and one" is 101)."""
_HIDDEN_ONE = "\ue000"
_ACRONYM = re.compile(r"\b[A-Z]{2,}s?\b")
_HIDDEN_ACRONYM = "\ue001"
_AND_A_HALF = re.compile(r"\b(\d+) and a half\b", re.IGNORECASE)
_HALF_A = re.compile(r"\bhalf (?:a|an) (?=[a-z])", re.IGNORECASE)
_STRENGTH_TABLET = r"(\d+(?:\.\d+)?) ?(mg|mcg|micrograms?|milligrams?|g)\b((?: [a-z]+)?) (?:tablet|pill)s?\b"
_HALF_OF_STRENGTH = (
    re.compile(rf"\bhalf (?:of )?(?:a|an|one|the) {_STRENGTH_TABLET}", re.IGNORECASE),
    re.compile(
        rf"\b(?:cut|split|break|snap) (?:the|a|an|one|your) {_STRENGTH_TABLET} in (?:half|two)\b", re.IGNORECASE
    ),
)
"""Half of a tablet of a strength is half that strength: "half of a 10 mg prednisone tablet" is 5 mg of prednisone,
and so is "cut the 10 mg tablet in half"."""
_PACKS = re.compile(
    r"\b(?:(\d+(?:\.\d+)?)|an?|one)\s+(?:(?:full|whole)\s+)?packs?\b(?![ -]years?\b)(?: of (?:cigarettes|smokes))?",
    re.IGNORECASE,
)
"""Cigarettes counted in packs of twenty ("half a pack a day" is 10 cigarettes a day); not pack-years."""
_ONE_OF_STRENGTH = re.compile(r"\b1 (?=\d+(?:\.\d+)? ?(?:mg|mcg|g|ml|milligrams?|micrograms?|grams?)\b)", re.IGNORECASE)
"""One pill of a strength ("one five milligram pill", read "1 5 mg pill"): the count is an article, not a number
beside the dose."""

# The unit words converted, by what they measure; pint reads each and does the arithmetic.
_UNITS: dict[str, tuple[str, ...]] = {
    "mass": (
        "mg", "milligram", "milligrams", "mcg", "µg", "microgram", "micrograms", "g", "gram", "grams", "kg",
        "kilogram", "kilograms", "kilo", "kilos", "lb", "lbs", "pound", "pounds",
    ),
    "temperature": (
        "°c", "°f", "degrees celsius", "degrees fahrenheit", "celsius", "fahrenheit", "degrees c", "degrees f",
    ),
    "volume": (
        "ml", "milliliter", "milliliters", "millilitre", "millilitres", "cc", "teaspoon", "teaspoons", "tsp",
        "tablespoon", "tablespoons", "tbsp", "liter", "liters", "litre", "litres",
    ),
    "time": (
        "second", "seconds", "minute", "minutes", "min", "mins", "hour", "hours", "hr", "hrs", "day", "days", "week",
        "weeks",
    ),
    "length": (
        "mm", "millimeter", "millimeters", "millimetre", "millimetres", "cm", "centimeter", "centimeters",
        "centimetre", "centimetres", "inch", "inches",
    ),
}  # fmt: skip
_POUNDS = frozenset({"lb", "lbs", "pound", "pounds"})
_PINT_NAMES = {
    "kilo": "kilogram",
    "kilos": "kilogram",
    "lbs": "lb",
    "degc": "degC",
    "degf": "degF",
    "degcelsius": "degC",
    "degfahrenheit": "degF",
    "celsius": "degC",
    "fahrenheit": "degF",
}
_UNIT_WORDS = {word: kind for kind, words in _UNITS.items() for word in words}
_UNIT_ALTERNATIVES = "|".join(sorted(map(re.escape, _UNIT_WORDS), key=len, reverse=True))
_RANGE = re.compile(
    r"(?<![\w./])(\d+(?:\.\d+)?) ?(to|-|–|or) ?(\d+(?:\.\d+)?)[ -]?(" + _UNIT_ALTERNATIVES + r")\b(?!\s*/)",
    re.IGNORECASE,
)
"""A range whose unit is said once, after its second number ("48 to 72 hours", "2-3 days"): the unit belongs to
both, so each is converted (48 hours is 2 days). Not a mass per volume ("180-220 mg/dL"), whose unit is not "mg"."""
_LONG_RANGE = re.compile(r"(?<![\w./])(\d+(?:\.\d+)?) ?(to|-|–|or) ?(\d+(?:\.\d+)?)[ -]?(months?|years?)\b", re.I)
"""The same for months and years, which are not converted ("every 2 to 3 months" is "every 2 months to 3
months")."""
_FAHRENHEIT_LETTER = re.compile(r"(?<![\w.])(9\d|1[01]\d)(\.\d+)? ?F\b")
"""A body temperature with its scale as a capital letter ("100.4 F", "101F"): Fahrenheit."""
_CONCENTRATION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?) ?(mg|g|mcg|µg|micrograms?|milligrams?|grams?) ?/ ?(dl|l|ml)\b", re.I
)
"""A mass per volume ("11.2 g/dL", "112 g/L"), compared in mg/dL, the unit a bare lab value is most often in."""
_CLOCK = re.compile(r"(?<![\w:.])(\d{1,2}):([0-5]\d)(?![\d:])(?: ?([ap])\.? ?m\b\.?)?", re.IGNORECASE)
"""A clock time with minutes, written as patients say it: "22:00" is "10 pm", "08:30" "8:30 am", "9:00 pm" "9 pm"
(so "22:00" meets "10 pm" and "nine at night" alike); "8:30" without am or pm is left as said."""
_AMOUNT = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)[ -]?(" + _UNIT_ALTERNATIVES + r")\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _registry() -> Any:
    import pint

    return pint.UnitRegistry()


def _fmt(value: float) -> str:
    rounded = round(value, 6)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:g}"


def _canonical(value: float, unit: str) -> str:
    """One amount in its kind's unit: mg, ml, or the largest of days, hours, minutes that keeps a whole number."""
    kind = _UNIT_WORDS[unit.lower()]
    if unit.lower() in _SPOONS:
        return f"{_fmt(value * _SPOONS[unit.lower()])} ml"
    registry = _registry()
    spelt = unit.lower().replace("µg", "microgram").replace("degrees ", "deg").replace("°", "deg")
    quantity = registry.Quantity(value, registry.parse_units(_PINT_NAMES.get(spelt, spelt)))
    if kind == "mass":
        if spelt in _POUNDS:  # a weight in pounds is someone's rounding of kilograms: compared at 2 figures
            kilograms = float(f"{quantity.to('kilogram').magnitude:.2g}")
            return f"{_fmt(kilograms * 1e6)} mg"
        return f"{_fmt(quantity.to('milligram').magnitude)} mg"
    if kind == "volume":
        return f"{_fmt(quantity.to('milliliter').magnitude)} ml"
    if kind == "length":
        return f"{_fmt(round(quantity.to('millimeter').magnitude, 6))} mm"
    if kind == "temperature":
        return f"{_fmt(round(quantity.to('degC').magnitude, 1))} °c"
    minutes = quantity.to("minute").magnitude
    for size, name in ((10080, "week"), (1440, "day"), (60, "hour"), (1, "minute"), (1 / 60, "second")):
        count = minutes / size
        if abs(count - round(count)) < 1e-9 and round(count) >= 1:
            return f"{_fmt(count)} {name}{'s' if round(count) != 1 else ''}"
    return f"{_fmt(minutes)} minutes"


def _words_to_digits(text: str) -> str:
    from text_to_num import alpha2digit

    text = _ONE.sub("1", _JUST_THE_ONE.sub(lambda m: f"{m.group('lead')}1", text))
    # Any other "one" is a pronoun ("the left one, ten days ago"), which text2num would read as a number
    # when another number follows it: kept out of its sight, and put back as it was written.
    kept = _PRONOUN_ONE.findall(text)
    # An acronym is a name, not a number word: a "TENS machine" is no "10 machine".
    acronyms = _ACRONYM.findall(text)
    hidden = _PRONOUN_ONE.sub(_HIDDEN_ONE, _ACRONYM.sub(_HIDDEN_ACRONYM, text))
    converted: str = alpha2digit(hidden, "en", threshold=2)
    for word in kept:
        converted = converted.replace(_HIDDEN_ONE, word, 1)
    for word in acronyms:
        converted = converted.replace(_HIDDEN_ACRONYM, word, 1)
    return converted


def _hundreds(match: re.Match[str]) -> str:
    hundreds, tens, units = match.group(1, 2, 3) if match.group(1) else match.group(4, 5, 6)
    return str(
        100 * _WORD_VALUE[hundreds.lower()] + _WORD_VALUE[tens.lower()] + (_WORD_VALUE[units.lower()] if units else 0)
    )


def _odds(match: re.Match[str]) -> str:
    """ "One in 7" as the whole percent it comes to ("14 percent")."""
    chances = 1 if match.group(1).lower() == "one" else int(match.group(1))
    return f"{round(100 * chances / int(match.group(2)))} percent"


def _clock(match: re.Match[str]) -> str:
    said, minutes, half = match.group(1), match.group(2), (match.group(3) or "").lower()
    hour = int(said)
    if hour > 23:
        return match.group()
    if not half:
        if 1 <= hour <= 12 and not said.startswith("0"):
            return match.group()  # "8:30": morning or evening, as the sentence says
        half = "p" if hour >= 12 else "a"
    twelve = hour % 12 or 12
    return f"{twelve}{'' if minutes == '00' else ':' + minutes} {half}m"


def _concentration(match: re.Match[str], strict: bool) -> str:
    registry = _registry()
    mass = _PINT_NAMES.get(match.group(2).lower(), match.group(2).lower()).replace("µg", "microgram")
    volume = {"dl": "deciliter", "l": "liter", "ml": "milliliter"}[match.group(3).lower()]
    try:
        value = registry.Quantity(float(match.group(1)), registry.parse_units(f"{mass}/{volume}"))
        return f"{_fmt(round(value.to('milligram/deciliter').magnitude, 6))} mg/dl"
    except Exception as exc:  # pint cannot read it: left as written
        if strict:
            raise UnreadableText(f"the unit reader (pint) failed on {match.group()!r}: {exc}") from exc
        return match.group()


class UnreadableText(ValueError):
    """A library that reads numbers or amounts (text2num, pint) failed on a sentence: the reading is incomplete,
    so a checker must say so (uncertain) rather than compare what it has."""


def normalise_quantities(text: str, *, strict: bool = False) -> str:
    """``text`` with its numbers and amounts spelt one way (see the module docstring); unchanged where it holds
    none. A library that fails leaves its step undone, or, with ``strict``, raises :class:`UnreadableText`
    (what a checker that must not guess asks for)."""
    text = _WORD_BEFORE_UNIT.sub(r"\1 \2", text)
    text = _ISH.sub(r"about \1", text)
    text = _LITRES.sub(r"\1 litres", text)
    for pattern, amount in _COMPILED_SPANS:
        text = pattern.sub(amount, text)
    text = _THOUSANDS.sub(lambda m: m.group(1).replace(",", ""), text)
    text = _HUNDREDS_SPOKEN.sub(_hundreds, text)
    text = _BARE_POINT.sub(lambda m: f"zero {m.group(1)}", text)
    text = _SPOKEN_YEAR.sub(_spoken_year, text)
    try:
        text = _words_to_digits(text)
    except Exception as exc:  # text2num on text it cannot parse: the words stay words
        if strict:
            raise UnreadableText(f"the number-word reader (text2num) failed: {type(exc).__name__}: {exc}") from exc
    text = _WHOLE_DECIMAL.sub(r"\1", text)
    text = _DECADES.sub(lambda m: f"{10 * int(m.group(1))} years", text)
    text = _DOSES_PER.sub(r"\1 times a \2", text)
    text = _EACH_SPAN.sub(r"every \1", text)
    text = _ONE_OF_STRENGTH.sub("a ", text)
    text = _AND_A_HALF.sub(lambda m: _fmt(int(m.group(1)) + 0.5), text)
    for halved in _HALF_OF_STRENGTH:
        text = halved.sub(lambda m: f"{_fmt(float(m.group(1)) / 2)} {m.group(2)}{m.group(3)}", text)
    text = _HALF_A.sub("0.5 ", text)
    text = _QUARTER_A.sub("0.25 ", text)
    text = _PACKS.sub(lambda m: f"{_fmt(float(m.group(1) or 1) * 20)} cigarettes", text)

    def interval(match: re.Match[str]) -> str:
        hours = float(match.group(1) or match.group(2))
        per_day = 24 / hours if hours else 0
        if per_day in _PER_DAY_WORDS:
            return _PER_DAY_WORDS[int(per_day)]
        return match.group()

    text = _SHARE.sub(lambda m: f"{_fmt(round(100 * int(m.group(1)) / int(m.group(2)), 2))} percent of", text)
    text = _CHANCE.sub(lambda m: f"{_fmt(round(100 * int(m.group(1)) / int(m.group(2)), 3))} percent", text)
    text = _ODDS.sub(_odds, text)
    text = _SCORE.sub(r"\1 out of \2", text)  # the score "6/10" is said "a six out of ten"
    text = _PRESSURE.sub(r"\1/\2", text)  # "130 over 80" is the reading 130/80
    text = _CLOCK.sub(_clock, text)
    text = _FAHRENHEIT_LETTER.sub(r"\1\2 °F", text)
    text = _RANGE.sub(lambda m: f"{m.group(1)} {m.group(4)} to {m.group(3)} {m.group(4)}", text)
    text = _LONG_RANGE.sub(lambda m: f"{m.group(1)} {m.group(4)} to {m.group(3)} {m.group(4)}", text)
    text = _CONCENTRATION.sub(lambda m: _concentration(m, strict), text)
    text = _APART.sub(r"every \1 \2", text)
    text = _EVERY_HOURS.sub(interval, text)
    text = _TIMES_A_DAY.sub(lambda m: _PER_DAY_WORDS[int(m.group(1) or m.group(2))], text)
    text = _ALTERNATE.sub(lambda m: f"every 2 {m.group(1).lower()}s", text)
    text = _DAYS_OUT_OF.sub(lambda m: f"{m.group(1)} days a {m.group(2).lower()}", text)

    def canonical(match: re.Match[str]) -> str:
        try:
            return _canonical(float(match.group(1)), match.group(2))
        except Exception as exc:  # pint cannot read it: left as written
            if strict:
                raise UnreadableText(
                    f"the unit reader (pint) failed on {match.group()!r}: {type(exc).__name__}: {exc}"
                ) from exc
            return match.group()

    return _AMOUNT.sub(canonical, text)


@lru_cache(maxsize=8192)
def numbers_in_digits(text: str) -> str:
    """``text`` with its number words in digits and nothing else changed ("about four kilograms" is "about 4
    kilograms", where :func:`normalise_quantities` gives milligrams): the number as the speaker said it, which a
    bare number in another sentence ("around four") may repeat. Unchanged where the number reader fails."""
    try:
        return _words_to_digits(text)
    except Exception:  # text2num on text it cannot parse: the words stay words, as in normalise_quantities
        return text


__all__ = ["AGE_AT", "BARE_AGE", "UnreadableText", "normalise_quantities", "numbers_in_digits", "without_ages"]
