"""Deterministic pre-router: question text -> category and recommended tools (a hint the model may override)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Category:
    """One prompt category: the words that signal it and the tools its strategy uses."""

    name: str
    tools: tuple[str, ...]
    patterns: tuple[str, ...]


@dataclass
class Route:
    """What the pre-router decided, as logged in the trace."""

    task: int
    category: str
    tools: list[str]
    matched: list[str] = field(default_factory=list)  # the patterns that fired, so a person sees why

    def hint(self) -> str:
        """The line shown to the model next to the question."""
        if self.category == "general":
            return ("Pre-router: no category matched; use the general strategy or pick the category that fits. "
                    f"Suggested tools: {', '.join(self.tools)}.")
        return (f"Pre-router suggestion: category '{self.category}' (suggested tools: {', '.join(self.tools)}). "
                "If another category fits the question better, follow that one instead.")


SIZE_TOOLS = ("draw_rectangle", "draw_circle", "crop", "compare_crops")
LINE_TOOLS = ("draw_line", "crop", "compare_crops")
COLOUR_WORDS = r"colou?rs?|shades?|hues?|brightness|lightness|brighter|darker|lighter|greyer|grayer|luminance"

TASK1 = (
    Category("boundary detection", ("crop", "compare_crops", "draw_line"), (
        r"\bboundar(y|ies)\b", r"\bedges?\b.*\bbetween\b", r"\bseparat(e|ing|or)\b.*\b(line|regions?|bands?)\b",
        r"\bborders?\b", r"\b(dividing|separating) lines?\b", r"\bbands?\b.*\b(uniform|line)\b",
        r"\b(uniform|homogeneous|even)\b.*\b(bands?|regions?|stripes?|steps?)\b", r"\bmach\b", r"\bchevreul\b",
        r"\bvisible lines?\b.*\b(between|where)\b", r"\bline where\b",
        r"\b(strips?|bands?|steps?|regions?)\b.*\b(neighbou?ring|next to|adjacent)\b",
        r"\b(neighbou?ring|adjacent)\b.*\b(strips?|bands?|steps?|regions?)\b")),
    Category("colour comparison", ("crop", "compare_crops", "convert_grayscale"), (
        rf"\b({COLOUR_WORDS})\b", r"\bsame (colou?r|shade|brightness)\b", r"\bidentical in colou?r\b",
        r"\b(white|black|red|green|blue|yellow)er\b", r"\bequally (light|dark|bright)\b",
        r"\bthe (gr[ae]y|white|black|red|green|blue|orange) of\b")),
    Category("line straightness", ("draw_line", "crop"), (
        r"(?<!same )(?<!one )\bstraight\b",
        r"\b(bent|bend|bends|bending|curved?|curving|bowed|bulg\w*|wav(y|ing)|warped)\b",
        r"\bhering\b", r"\bwundt\b", r"\borbison\b")),
    Category("line parallelism", ("draw_line", "crop", "compare_crops"), (
        r"\bparallel\b", r"\b(converg\w*|diverg\w*)\b", r"\bz[oö]llner\b", r"\bcaf[eé] wall\b",
        r"\b(tilt|slant)\w*\b.*\b(lines|rows|columns)\b", r"\bsame distance apart\b",
        r"\b(tilt|lean|slop|slant)\w*\b.*\b(one another|each other)\b", r"\btowards or away from\b")),
    Category("line alignment", ("draw_line", "crop"), (
        r"\b(aligned|alignment|align)\b", r"\bcollinear\b", r"\bsame (straight )?line\b",
        r"\bcontinu(e|ed|ation|ous)\b", r"\bpoggendorff\b", r"\bline up\b", r"\bmeet\b.*\bline\b",
        r"\boffset\b", r"\bout of line\b", r"\bwould (miss|meet)\b", r"\bone straight line\b")),
    Category("line length", LINE_TOOLS, (
        r"\blength\b", r"\blonger\b", r"\bshorter\b", r"\b(equally|as) long\b", r"\bsame length\b",
        r"\bm[uü]ller", r"\bdistances?\b", r"\bsegments?\b.*\b(equal|long)\b", r"\blines?\b.*\bequal\b",
        r"\bponzo\b.*\bline", r"\bhalfway\b", r"\bmid-?point\b", r"\bcloser to\b.*\bend\b")),
    Category("size comparison", SIZE_TOOLS, (
        r"\bsizes?\b", r"\b(bigger|larger|smaller|wider|narrower|taller)\b", r"\bsame size\b",
        r"\b(diameter|radius|area)\b", r"\bequal(ly)? (big|large|sized)\b", r"\bebbinghaus\b", r"\bdelboeuf\b",
        r"\bas (big|large|small|wide|tall)\b",
        r"\b(circles?|squares?|discs?|shapes?)\b.*\b(equal|same)\b")),
)

TASK2 = (
    Category("hidden content", ("isolate_color", "blur", "extract_channel", "convert_grayscale", "crop"), (
        r"\bhidden\b", r"\bconceal\w*\b", r"\bishihara\b", r"\bwhat (number|digit|letter|word)\b",
        r"\b(number|digit|letter|word|text) (is )?(hidden|shown|visible|written|embedded)\b",
        r"\bcan you (see|read|find)\b", r"\bcolou?r[- ]blind\w*\b", r"\bdotted plate\b", r"\bembedded\b")),
    Category("counting", ("overlay_grid", "crop", "draw_circle", "draw_text"), (
        r"\bhow many\b", r"\bnumber of\b", r"\bcount\w*\b", r"\btotal\b")),
    Category("odd one out", ("overlay_grid", "crop", "compare_crops", "sample_color"), (
        r"\bodd one\b", r"\bodd\b.*\bout\b", r"\bdiffers? from the (others|rest)\b", r"\bdifferent from the\b",
        r"\bwhich (one|item|object|tile|cell|square|circle)\b.*\bdifferent\b", r"\bstands? out\b",
        r"\bunlike the others\b", r"\bwhere is the\b.*\b(different|odd|unique)\b")),
    Category("motion illusion", ("blur", "convert_grayscale", "crop"), (
        r"\b(mov(e|es|ing|ement)|motion|rotat\w*|spin\w*|puls\w*|flicker\w*|drift\w*|swirl\w*|vibrat\w*)\b",
        r"\banimated\b", r"\bstatic\b")),
    Category("impossible figure", ("crop", "compare_crops", "draw_line"), (
        r"\bimpossible\b", r"\bpenrose\b", r"\bescher\b", r"\bcould (this|it|the object) (exist|be built)\b",
        r"\bexist in (3d|three)", r"\bgeometrically (possible|consistent)\b", r"\bdevil'?s fork\b",
        r"\b(endless|never-ending|infinite) (stair|loop)")),
    Category("3-d interpretation", ("crop", "convert_grayscale", "draw_line"), (
        r"\b(3-?d|three[- ]dimensional)\b", r"\bconvex\b", r"\bconcave\b", r"\b(facing|faces)\b.*\b(up|down|left|"
        r"right|towards|away)\b", r"\bnecker\b", r"\bdepth\b", r"\bin front\b", r"\bpopping out\b",
        r"\b(raised|sunken|indented|protrud\w*)\b")),
    Category("parallel lines", ("draw_line", "crop", "compare_crops"), (
        r"\bparallel\b", r"\b(converg\w*|diverg\w*)\b", r"\bz[oö]llner\b", r"\bcaf[eé] wall\b",
        r"\b(tilt|lean|slop|slant)\w*\b.*\b(one another|each other)\b", r"\btowards or away from\b")),
    Category("alignment and slant", ("draw_line", "crop"), (
        r"\b(aligned|alignment|collinear|slant\w*|tilt\w*|slope\w*|inclin\w*)\b", r"\bsame (straight )?line\b",
        r"\bpoggendorff\b", r"\b(horizontal|vertical|level)\b", r"\bstraight\b", r"\b(bent|curved?)\b")),
    Category("size and length", ("draw_line", "draw_rectangle", "crop", "compare_crops"), (
        r"\b(longer|shorter|length)\b", r"\b(bigger|larger|smaller|size)\b", r"\bsame size\b",
        r"\bebbinghaus\b", r"\bm[uü]ller", r"\bponzo\b", r"\bequal(ly)? (long|big|large)\b")),
    Category("forced perspective", ("crop", "draw_line", "compare_crops"), (
        r"\bforced perspective\b", r"\b(giant|tiny|miniature|huge)\b", r"\b(actually|really) (hold|holding|"
        r"touch\w*|pinch\w*|lean\w*)\b", r"\bholding up\b", r"\bperspective\b", r"\bscale\b", r"\btrick shot\b",
        r"\bdistance from the camera\b")),
    Category("entity realism", ("crop", "sample_color", "convert_grayscale"), (
        r"\b(real|fake|genuine|artificial)\b.*\b(person|animal|object|scene|photo|image|cat|dog|bird|fruit|"
        r"food|statue|people|car|building)\b", r"\b(painting|painted|sculpture|statue|mural|drawing|"
        r"reflection|mirror|mannequin|costume|toy|model|cgi|rendered|3d print\w*|photoshop\w*|edited)\b",
        r"\bis (it|this) (a )?(real|photo)\b")),
    Category("spatial relation and support", ("crop", "draw_line", "convert_grayscale"), (
        r"\b(on top of|underneath|beneath|behind|supported|supporting|support|resting|rests|held up|"
        r"hanging|attached|suspended|floating|levitat\w*)\b", r"\bwhat is holding\b", r"\b(above|below)\b")),
    Category("physical plausibility", ("draw_line", "draw_circle", "crop"), (
        r"\bphysically\b", r"\bplausib\w*\b", r"\b(possible|impossible) to (use|open|sit|walk|climb|drink)\b",
        r"\bgravity\b", r"\bbalanc\w*\b", r"\b(could|can) (you|someone|a person) (use|open|sit|walk|climb)\b",
        r"\bafford\w*\b", r"\bfunction(al)?\b.*\b(door|chair|stair|object)\b", r"\bdefy\w*\b")),
    Category("symmetry", ("draw_line", "crop", "compare_crops", "overlay_grid"), (
        r"\bsymmetr\w*\b", r"\bmirror image\b", r"\b(two|both) halves\b", r"\bidentical halves\b")),
    Category("real vs painted holes", ("crop", "extract_channel", "convert_grayscale"), (
        r"\b(hole|holes|pit|opening|gap|crack|tunnel|crater|hollow)\b", r"\btrompe[- ]l'?oeil\b",
        r"\b(flat|painted) (surface|on the (ground|floor|wall))\b", r"\b3d (painting|art)\b")),
    Category("colour comparison", ("sample_color", "crop", "compare_crops", "convert_grayscale"), (
        rf"\b({COLOUR_WORDS})\b", r"\bsame colou?r\b", r"\b(white|black|red|green|blue|yellow)er\b")),
)

TASKS = {1: TASK1, 2: TASK2}
GENERAL_TOOLS = {1: ("draw_line", "draw_rectangle", "crop", "compare_crops"),
                 2: ("crop", "compare_crops", "draw_line", "sample_color", "overlay_grid")}
_COMPILED = {task: [(c, [re.compile(p, re.I) for p in c.patterns]) for c in cats] for task, cats in TASKS.items()}


def categories(task: int) -> list[str]:
    """The category names of a task, in prompt order of precedence."""
    return [c.name for c in TASKS[_check_task(task)]]


def route(question: str, task: int) -> Route:
    """Pick the category whose patterns fire most; ties go to the category listed first; none -> general."""
    best: tuple[int, Category, list[str]] | None = None
    for cat, patterns in _COMPILED[_check_task(task)]:
        fired = [p.pattern for p in patterns if p.search(question)]
        if fired and (best is None or len(fired) > best[0]):
            best = (len(fired), cat, fired)
    if best is None:
        return Route(task, "general", list(GENERAL_TOOLS[task]))
    return Route(task, best[1].name, list(best[1].tools), best[2])


def _check_task(task: int) -> int:
    if task not in TASKS:
        raise ValueError(f"task must be 1 (yes/no) or 2 (multiple choice), got {task!r}")
    return task
