"""Scored regex router: question text -> category and its tools; a hint for the model and the fallback when the
model's own classification fails (see classify.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The paper's table of tools (section 3.3): a shared core for both tasks, analysis tools for Task II only.
CORE_TOOLS = ("draw_line", "draw_rectangle", "draw_circle", "crop", "compare_crops")
ANALYSIS_TOOLS = ("overlay_grid", "extract_channel", "sample_color", "isolate_color", "blur")
TASK_TOOLS = {1: CORE_TOOLS, 2: CORE_TOOLS + ANALYSIS_TOOLS}
GENERAL = "general"


@dataclass(frozen=True)
class Cue:
    """One pattern and how much it says about its category: 4 names the illusion or figure, 3 is the exact
    question type, 2 a wording typical of the category, 1 a word that only leans towards it."""

    weight: int
    pattern: re.Pattern


@dataclass(frozen=True)
class Category:
    """One prompt category: the cues that signal it and the tools its strategy uses."""

    name: str
    tools: tuple[str, ...]
    cues: tuple[Cue, ...]


@dataclass
class Route:
    """Which category a question was given and why, as logged in the trace."""

    task: int
    category: str
    tools: list[str]
    matched: list[str] = field(default_factory=list)  # the regex cues that fired, so a person sees why
    score: int = 0  # the regex score of the chosen category (0: nothing fired)
    source: str = "regex"  # regex, model, or fallback (the model's classification failed; regex used)
    regex_category: str = ""  # what the regex router said, kept when the model decided
    note: str = ""  # why the model's classification was not used, when it was not
    sent: dict = field(default_factory=dict)  # what the classification request sent the vendor (model router)

    def hint(self) -> str:
        """The line shown to the model next to the question."""
        tools = ", ".join(self.tools)
        if self.source == "model":
            return (f"Category (your classification): '{self.category}'. Follow its strategy "
                    f"(suggested tools: {tools}).")
        if self.category == GENERAL:
            return ("Pre-router: no category matched; use the general strategy or pick the category that fits. "
                    f"Suggested tools: {tools}.")
        return (f"Pre-router suggestion: category '{self.category}' (suggested tools: {tools}). "
                "If another category fits the question better, follow that one instead.")


def _cat(name: str, tools: tuple[str, ...], *cues: tuple[int, str]) -> Category:
    return Category(name, tools, tuple(Cue(w, re.compile(p, re.I)) for w, p in cues))


COLOUR = (r"colou?r(s|ed)?|shades?|hues?|tones?|tints?|brightness|lightness|luminance|intensity|grey value|"
          r"gr[ae]y level|ink|pigment")
LIGHTER = r"brighter|darker|lighter|paler|deeper|redder|bluer|greener|yellower|greyer|grayer|whiter|blacker"
SHAPES = r"circles?|discs?|dots?|squares?|rectangles?|shapes?|targets?|moons?|balls?|rings?|hearts?|diamonds?"
LINE = r"lines?|segments?|bars?|shafts?|strokes?|rails?|arcs?|spans?|arrows?"
# A capitalised word that starts a proper name ("the Leaning Tower of Pisa", "the Crooked House"): a word there
# names a place, not what the picture shows, so a slant word in it is no slant cue.
NAME_WORD = r"(?!(?-i:[A-Z][a-z]+ (of )?[A-Z]))"
NAMED = r"(?-i:[A-Z][a-z]{2,})"  # a capitalised word after "the": a named landmark, statue or place

TASK1 = (
    _cat("size comparison", ("draw_rectangle", "draw_circle", "crop", "compare_crops"),
         (4, r"\bebbinghaus\b|\btitchener\b|\bdelb(oe|œ)uf\b|\bjastrow\b|\bshepard\b"),
         (2, r"\bsizes?\b|\bsized\b|\bdiameters?\b|\bradius\b|\bradii\b|\bsame area\b"), (1, r"\barea\b"),
         (2, r"\b(bigger|larger|smaller|biggest|largest|smallest|wider|narrower|taller)\b"),
         (1, r"\b(equally|as) (big|large|small|wide)\b"),
         (1, rf"\b({SHAPES})\b.*\b(equal|identical|same)\b\W*$")),
    _cat("colour comparison", ("crop", "compare_crops", "draw_rectangle"),
         (4, r"\bsimultaneous contrast\b|\bwhite'?s illusion\b|\badelson\b|\bchecker[- ]?shadow\b"),
         (2, rf"\b({COLOUR})\b"), (2, rf"\b({LIGHTER})\b"),
         (2, r"\b(equally|as) (light|dark|bright|pale)\b|\bsame (grey|gray|blue|red|green|pink|white|black)\b"),
         (2, r"\bthe (grey|gray|white|black|red|green|blue|orange|pink) (of|in|on)\b"),
         (1, r"\b(reflect\w*|amount of) light\b|\bin shadow\b")),
    _cat("line length", ("draw_line", "crop", "compare_crops"),
         (4, r"\bm[uü]ller[- ]?lyer\b|\bponzo\b|\bvertical[- ]horizontal illusion\b|\binverted t\b"),
         (2, r"\blengths?\b|\blonger\b|\bshorter\b|\blongest\b|\bshortest\b|\b(equally|as) long\b"),
         (2, r"\bhalfway\b|\bmid-?point\b|\bcloser to (one|either|the other) end\b|\bmiddle of the line\b|"
             r"\bextends? further\b"),
         (2, r"\bdistances?\b(?! apart)|\bspans?\b.*\bsame\b|\bfrom end to end\b.*\bmeasure|"
             r"\bmeasure\b.*\bend to end\b"),
         (1, rf"\b({LINE})\b.*\b(equal|same)\b")),
    _cat("line straightness", ("draw_line", "crop"),
         (4, r"\bhering\b|\bwundt\b|\borbison\b|\bstarburst\b"),
         (2, r"\bstraight\b"),
         (2, r"\b(bent|bends?|bending|curved?|curves?|curving|bow(s|ed|ing)?|bulg\w*|wav(y|e|ing)|warped|"
             r"sag(s|ging)?|distorted|kinked)\b")),
    _cat("line alignment", ("draw_line", "crop"),
         (4, r"\bpoggendorff\b|\bcollinear\b"),
         (2, r"\b(aligned|alignment|align|line up|lined up|in line with|match up)\b"),
         (2, r"\bcontinu(e|ed|es|ation|ous)\b|\bextension\b|\bextended\b|\bif (you )?continue\b"),
         (3, r"\bsame (straight )?line\b|\bsingle (unbroken |straight )?line\b|\bone (continuous|straight) "
             r"(line|path)\b|\bunbroken line\b|\bout of line\b"),
         (2, r"\b(interrupted|broken) line\b|\bbehind the (occluder|rectangle|bar|pillar)\b|\btransversal\b"),
         (2, r"\bruler\b.*\b(along|touch\w*)\b"),
         (1, r"\bshifted\b|\boffset\b|\bwould (it )?(meet|miss|touch)\b|\bconnect\w*\b|\bdiagonals?\b")),
    _cat("line parallelism", ("draw_line", "crop", "compare_crops"),
         (4, r"\bz[oö]llner\b|\bcaf[eé][- ]wall\b|\bmunsterberg\b"),
         (2, r"\bparallel\b|\b(converg\w*|diverg\w*)\b|\bsame distance apart\b|\bequidistant\b"),
         (2, r"\b(slope|slant|tilt|lean)\w*\b.*\b(toward|towards)\b.*\b(each other|one another)\b"),
         (2, r"\b(closer together|further apart|farther apart|without meeting|never meet)\b"),
         (2, r"\b(gap|spacing|distance) between\b.*\b(lines|rows)\b.*\b(constant|same|equal)\b"),
         (2, r"\blines\b.*\b(slope|slant|tilt)\w*\W*$"),
         (1, r"\b(tilt|slant|slope)\w*\b.*\b(relative to|others)\b|\bsame direction\b|\blevel with one another\b"),
         (1, r"\b(mortar|bricks?|tiles?|stripes?)\b")),
    _cat("boundary detection", ("crop", "compare_crops", "draw_line"),
         (4, r"\bmach bands?\b|\bcornsweet\b|\bchevreul\b|\bcraik\b"),
         (2, r"\bboundar(y|ies)\b|\bborders?\b|\bseams?\b|\bcontours?\b|\binterfaces?\b|\btransitions?\b|"
             r"\bjunctions?\b"),
         (2, r"\b(dividing|separating|separator) (line|stripe)s?\b|\bseparat(ed|ing)\b|\bsharp edge\b|"
             r"\bthin (dark |light )?line\b|\bextra lines?\b"),
         (3, r"\b(uniform|constant|flat) (in colou?r|brightness|steps?)\b|\b(constant|uniform) brightness\b|"
             r"\bflat steps\b"),
         (2, r"\bedges?\b.*\b(between|where)\b|\bwhere\b.*\b(meets?|ends?)\b.*\b(band|stripe|strip|region)|"
             r"\b(line|edge|gap)\b.*\bwhere\b.*\b(regions?|bands?|strips?|stripes?) meet\b"),
         (2, r"\b(rim|fringe|halo|glow)\b.*\bedges?\b"), (2, r"\b(single|one) flat\b"),
         (3, r"\b(adjacent|neighbou?ring|stacked)\b.*\b(bands?|regions?|strips?|stripes?)\b|"
             r"\b(bands?|regions?|strips?|stripes?) (next to|beside) (it|each other|one another)\b"),
         (2, r"\b(split|divided?)\b.*\binto\b.*\b(bands|strips|stripes|steps)\b"),
         (1, r"\b(light|bright|dark) (stripe|bands?)\b|\bmeet directly\b|\bgap between the adjacent\b")),
)

TASK2 = (
    _cat("counting", ("overlay_grid", "crop", "draw_circle", "compare_crops"),
         (3, r"\bhow many\b|\bcount\b|\bnumber of\b|\btotal number\b")),
    _cat("hidden content", ("isolate_color", "blur", "extract_channel", "crop"),
         (4, r"\bishihara\b|\bcolou?r[- ]?blind\w*\b|\b(test|dotted|colou?r|ishihara) plate\b|"
             r"\bplates? of (colou?red )?dots\b|\brandom-dot\b"),
         (2, r"\bhidden\b|\bconceal\w*\b|\bcamouflag\w*\b|\bemerges?\b|\bsquint\b|\bembedded\b|\bdisguised\b"),
         (2, r"\bwhat (number|digit|letter|word|shape|figure|image|animal)\b|\bwhich (digit|letter|number)\b"),
         (2, r"\bwhat is written\b|\bmade up by\b|\bformed by\b|\bappears among\b|"
             r"\b(is|are) there (any |a )?(numbers?|digits?|letters?|words?)\b"),
         (2, r"\b(any|a) (face|faces|people|person|animal|figure)s? (hidden|visible)\b|"
             r"\b(is|are) there (any |a )?(face|faces|people|person|animal)s?\b")),
    _cat("odd one out", ("overlay_grid", "crop", "compare_crops", "sample_color"),
         (3, r"\bodd one\b|\bodd\b.*\bout\b|\bnot like the others\b|\bdoes not belong\b|\bunique item\b"),
         (2, r"\bdiffer(s|ent)? from (the others|the rest|all the others)\b|\bstands? out\b|"
             r"\bdoes not match\b|\bsingle \w+ that is different\b|\bsmall difference\b"),
         (2, r"\bamong all the\b|\bwhich (cell|row|column|tile)\b|\b(one|the) (number|letter) \w+ among\b"),
         (1, r"\bdifferent\b|\bidentical-looking\b")),
    _cat("colour comparison", ("sample_color", "crop", "compare_crops", "extract_channel"),
         (4, r"\bthe dress\b|\bchecker[- ]?shadow\b|\badelson\b|\bsimultaneous contrast\b"),
         (2, rf"\b({COLOUR})\b"), (2, rf"\b({LIGHTER})\b"),
         (2, r"\bsame (grey|gray|blue|red|green|pink|white|black)\b|\b(equal|same) (brightness|tone)\b"),
         (1, r"\b(white|black|red|green|blue|pink|gold|grey|gray) and (white|black|red|green|blue|gold)\b")),
    _cat("motion illusion", ("blur", "crop", "extract_channel"),
         (4, r"\brotating snakes\b|\bperipheral drift\b|\bmotion illusion\b|\banimation\b|\banimated\b"),
         (2, r"\b(mov(e|es|ing|ement)|motion|rotat\w*|spin(s|ning)?|puls\w*|flicker\w*|drift\w*|swirl\w*|"
             r"vibrat\w*|shimmer\w*|turn(s|ing)?|flowing|expanding|in motion)\b"),
         (1, r"\bstill image\b|\bstatic\b")),
    _cat("impossible figure", ("crop", "compare_crops", "draw_line"),
         (4, r"\bpenrose\b|\bescher\w*\b|\bdevil'?s fork\b|\bblivet\b|\bimpossible (figure|object|shape|"
             r"triangle|cube|trident)\b|\bparadox\w*\b"),
         (2, r"\bimpossible\b"),
         # Existence asked in plain words, however the figure is referred to ("can the figure shown in the image
         # exist", "could a physical model of this object be built"), and where ("in the real 3-d world").
         (2, r"\b(could|can|would|does|is it possible for)\b[^?.]{0,60}?\b(exist|be (built|made|constructed))\b"),
         (2, r"\b(exist\w*|built|made|constructed)\b[^?.]{0,25}?\b(in|as) (the |a )?(real|physical|actual|3-?d|"
             r"three[- ]dimensional)\b|\bexist\w* (physically|in reality)\b"),
         (2, r"\bgeometrically (possible|consistent|impossible)\b|\banatomically possible\b|\bclosed loop\b|"
             r"\b(walk|climb) up (these|the) stairs forever\b|\bpossible to build\b|\bbe (built|made|constructed) "
             r"(in real life|from real|with straight)"),
         (1, r"\breal shape\b|\bforever\b|\bcannot exist\b")),
    _cat("3-d interpretation", ("crop", "draw_line", "extract_channel"),
         (4, r"\bnecker\b|\bhollow[- ]face\b|\bspinning dancer\b|\bschr[oö]der\b"),
         (2, r"\b(3-?d|three[- ]dimensional)\b(?!.*\b(exist|built)\b)|\bconvex\b|\bconcave\b|\bbumps?\b|"
             r"\bdents?\b|\bhollow\b|\bpopping out\b|\b(raised|sunken|indented)\b"),
         (2, r"\bfacing (up|down|left|right|towards|away)|\bat the front\b|\b(closer|nearer) to the viewer\b|"
             r"\bnearer\b|\bseen from (above|below)\b|\binside or the outside\b|\binto (it|the page)\b"),
         (4, r"\bdancer\b"),
         (2, r"\bwhich way is\b.*\bspinning\b|\bgo(es)? up or hang\b|\bhang\w* from the ceiling\b.*\bstair")),
    _cat("parallel lines", ("draw_line", "crop", "compare_crops"),
         (4, r"\bz[oö]llner\b|\bcaf[eé][- ]wall\b"),
         (2, r"\bparallel\b|\b(converg\w*|diverg\w*)\b|\bequidistant\b|\bwedge-shaped\b"),
         (3, r"\b(closer together|further apart|farther apart|or do they meet)\b"),
         (2, r"\bspacing between\b|\blines\b.*\bsame direction\b|\brows of bricks\b|\bmortar\b")),
    _cat("alignment and slant", ("draw_line", "crop", "compare_crops"),
         (4, r"\bpoggendorff\b|\bcollinear\b|\btilt illusion\b"),
         (2, rf"\b{NAME_WORD}(aligned|alignment|line up|lined up|tilt\w*|slant\w*|lean(s|ing)?(?! against)|"
             r"inclin\w*|crooked|angled|askew|upright|level)\b"),
         (2, r"\bsame straight line\b|\bstraight row\b|\bcontinuous behind\b|\bpoint in the same direction\b"),
         (1, r"\b(horizontal|vertical)\b")),
    _cat("size and length", ("draw_line", "draw_rectangle", "crop", "compare_crops"),
         (4, r"\bebbinghaus\b|\bm[uü]ller[- ]?lyer\b|\bponzo\b|\bjastrow\b|\bshepard\b|\bdelb(oe|œ)uf\b"),
         (2, r"\b(longer|shorter|longest|shortest|lengths?|bigger|larger|smaller|biggest|largest|smallest|"
             r"taller|wider|size|sizes|height|area)\b"),
         (1, r"\bequal in (size|length)\b|\bsame (size|height|length)\b|\bcurvature\b")),
    _cat("forced perspective", ("crop", "draw_line", "compare_crops"),
         (3, r"\bforced perspective\b|\btrick shot\b"),
         (2, r"\b(giant|tiny|miniature|huge|so small|small enough)\b|\bfarther from the camera\b|"
             r"\bfar-?away\b|\bdistant\b"),
         (3, r"\b(really|actually|truly) (hold|holding|touch\w*|pinch\w*|lean\w*|resting|being held|so "
             r"different|a giant|bigger)\b|\bpinch\w* the top\b|\bon the other'?s palm\b|\bin (the|his|her|"
             r"the \w+'s) hand\b"),
         (2, rf"\b(against|touch\w*|holding|hold\w* up|pinch\w*|lift\w*|push\w*|carry\w*|on top of) the "
             rf"(real |actual )?((tower|pyramid|landmark|moon|sun|building|car|bus|truck|house)\b|{NAMED})"),
         # Someone inside a small near object (a cup, a mouth, a hand): the scale trick of a staged photo.
         (2, r"\b(person|people|man|woman|girl|boy|child|kid|someone)\b[^?.]*?\b(in|into|inside|enter\w*|"
             r"fit in(to)?) (the|a|his|her|their|the \w+'s) (cup|teacup|mug|glass|bottle|mouth|hand|palm|shoe)\b"),
         (3, r"\b(bigger|larger|taller) than the (house|building|tower|car|mountain|tree)\b|"
             r"\b(bigger|larger|taller)\b[^?.]*\b(house|building|tower|mountain|pyramid|landmark)\b[^?.]*\bor\b"
             r"[^?.]*\b(person|man|woman|boy|girl|child|people)\b|\b(bigger|larger|taller)\b[^?.]*\b(person|man|"
             r"woman|boy|girl|child|people)\b[^?.]*\bor\b[^?.]*\b(house|building|tower|mountain|pyramid|landmark)\b"),
         (1, r"\bperspective\b|\bscale\b|\b(landmark|tower|pyramid|moon|sun)\b")),
    _cat("entity realism", ("crop", "sample_color", "extract_channel"),
         (3, r"\b(wax figure|mannequin|sculpture|statue|decoy|stuffed|mural|cgi|computer rendering|digitally "
             r"generated|ai-generated|photoshop\w*)\b"),
         (2, r"\b(real|genuine|actual|living|alive|fake|artificial)\b.*\b(person|human|animal|cat|dog|horse|bird|"
             r"fruit|cake|food|scene|landscape|face|or a|or made|or artificial)\b"),
         (2, r"\b(in|of) (this|the) (image|picture|photo)\b.*\breal\W*$"),
         (2, r"\b(alive|living)\b|\bmade of plastic\b|\bmade to look like\b|\bpainting\b|\bphotograph or\b"),
         (1, r"\b(painted to look|toy|model)\b")),
    _cat("spatial relation and support", ("crop", "draw_line", "compare_crops"),
         (3, r"\bwhat (is )?(supporting|holding up|keeps?)\b|\bfloating\b|\blevitat\w*\b|\bhovering\b"),
         (2, r"\b(on top of|underneath|beneath|under|behind|in front|on the (table|road|wall|ground|floor|"
             r"man's head)|leaning against|hanging from|standing on|sitting on|in the air|touch the ground)\b"),
         (1, r"\b(supported|support\w*|resting|rests|attached|suspended|above|below)\b")),
    _cat("physical plausibility", ("draw_line", "draw_circle", "crop", "compare_crops"),
         (3, r"\bphysically (possible|plausible|impossible|realistic)\b|\bplausib\w*\b|\bgravity\b|\bobey\b"),
         (2, r"\b(be|get) (opened|used|ridden|climbed|sat on)\b"), (1, r"\bphysically\b"),
         (2, r"\b(could|can|would) (a person|someone|you|this|the|it)\b.*\b(sit|use|open|pour|climb|ride|hold|"
             r"protect|flow|hold up|walk|support a person|carry)\b|\brideable\b|\busable\b|\bin reality\b|"
             r"\bstable\b|\bbalanc\w*\b"),
         (1, r"\b(afford\w*|function\w*|work as)\b")),
    _cat("symmetry", ("draw_line", "crop", "compare_crops", "overlay_grid"),
         (3, r"\bsymmetr\w*\b|\bmirror[- ]image\b|\breflection of the\b|\b(about|along|across) (its|the) "
             r"(vertical|horizontal|central) axis\b"),
         (2, r"\b(two|both) (halves|sides)\b|\b(left|right) and (left|right) halves\b|\bsame on both sides\b|"
             r"\bfold\w* (the picture |it )?in half\b|\bflipped\b|\bsame on the left and the right\b|"
             r"\b(vertical|horizontal) axis\b|\bidentical arms\b|\btwo wings\b"),
         (1, r"\b(left|right) (eye|side|half|wing)\b.*\b(same|identical)\b|\bidentical\b")),
    _cat("real vs painted holes", ("crop", "extract_channel", "compare_crops"),
         (4, r"\btrompe[- ]l'?oeil\b|\b3-?d (painting|art|drawing|street art)\b|\bpainted on\b"),
         (2, r"\b(hole|holes|pit|opening|gap|crack|chasm|tunnel|crater|manhole|cliff|drop(s)? away|window)\b"),
         (2, r"\bfall into\b|\bgoing down into the sidewalk\b"),
         (3, r"\b(is|are) there (really |truly )?(a|any) (real |actual )?"
             r"(hole|pit|crack|gap|opening|chasm|crater)s?\b"),  # the question type: is there a hole
         (2, r"\b(crack|hole|pit|gap|opening)\b.*\b(3-?d|three-dimensional)\b")),
)

TASKS = {1: TASK1, 2: TASK2}
GENERAL_TOOLS = {1: ("draw_line", "draw_rectangle", "crop", "compare_crops"),
                 2: ("crop", "compare_crops", "draw_line", "sample_color", "overlay_grid")}


def categories(task: int) -> list[str]:
    """The category names of a task, in prompt order."""
    return [c.name for c in TASKS[_check_task(task)]]


def tools_of(category: str, task: int) -> list[str]:
    """The tools a category's strategy suggests (the general ones for 'general')."""
    for cat in TASKS[_check_task(task)]:
        if cat.name == category:
            return list(cat.tools)
    if category == GENERAL:
        return list(GENERAL_TOOLS[task])
    raise ValueError(f"category must be one of {', '.join(categories(task))} or general, got {category!r}")


@dataclass(frozen=True)
class CategoryMatch:
    """How strongly one category fired on a question."""

    total: int  # the weights of the cues that fired, added
    strongest: int  # the weight of the most specific cue that fired
    matched_chars: int  # how much of the question the cues matched (a longer phrase is the more specific)
    position: int  # order in the prompt, the last resort
    category: Category
    cues: list[str]

    def key(self) -> tuple[int, int, int, int]:
        return (-self.total, -self.strongest, -self.matched_chars, self.position)


def scores(question: str, task: int) -> list[CategoryMatch]:
    """Every category that fired, best first: highest total weight; ties go to the more specific category (its
    strongest cue, then the longer matched wording), and only then to the earlier category in the prompt."""
    fired = []
    for position, cat in enumerate(TASKS[_check_task(task)]):
        found = [(c, c.pattern.search(question)) for c in cat.cues]
        hits = [(c, m) for c, m in found if m]
        if hits:
            fired.append(CategoryMatch(sum(c.weight for c, _ in hits), max(c.weight for c, _ in hits),
                               sum(len(m.group(0)) for _, m in hits), position, cat,
                               [c.pattern.pattern for c, _ in hits]))
    return sorted(fired, key=CategoryMatch.key)


def route(question: str, task: int) -> Route:
    """The best-scoring category; nothing fired -> general."""
    ranked = scores(question, task)
    if not ranked:
        return Route(task, GENERAL, list(GENERAL_TOOLS[task]), regex_category=GENERAL)
    best = ranked[0]
    return Route(task, best.category.name, list(best.category.tools), best.cues, best.total,
                 regex_category=best.category.name)


def _check_task(task: int) -> int:
    if task not in TASKS:
        raise ValueError(f"task must be 1 (yes/no) or 2 (multiple choice), got {task!r}")
    return task
