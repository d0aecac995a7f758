"""Judge prompt templates: one :class:`JudgeTemplate` declaration each, and the message builders (pure: text in,
:class:`ChatRequest` out).

A declaration holds everything about one template: its key, its default text, the placeholders a replacement must
keep, and its token budget (``max_tokens`` of the request, and the completion tokens the dry run expects). The
registry of declarations (:data:`JUDGE_TEMPLATES`) is what :class:`Templates`, :func:`check_templates`,
:func:`load_templates` and the views :data:`DEFAULT_TEMPLATES`, :data:`PLACEHOLDERS`, :data:`MAX_TOKENS` and
:data:`EXPECTED_TOKENS` read. The built-in templates are declared below; a judge task declared elsewhere lists its
own in its :class:`judges.tasks.JudgeTask`, which registers them.

The defaults are the protocol texts of ``protocols.md`` (T1 pairwise, T2 fit, T3 SemVarBench), word for word, the
T1 pairwise one with "second image" where the taxonomy paper's Figure 7 says "first" twice; the figure as printed is
``pairwise_taxonomy_paper``, which the taxonomy-paper preset sends in its place. The
SANEval LLM/VLM steps (T4) are not quoted by the protocol; their wording here is the project's, and the attribute
questions are the protocol's neutral questions. Any registered template can be replaced by a TOML file (setting
``judge_templates`` / ``ARENA_JUDGE_TEMPLATES``) with one string per template key; a replacement must keep the
template's placeholders.

Placeholders are ``{name}`` (filled by plain replacement, so JSON braces in a template need no escaping). Images
go where ``<image A>`` / ``<image B>`` stand in the pairwise template and where ``<image>`` stands in the others
(after the text when a template has no ``<image>``).
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from core.registry import Registry, RegistryError
from judges.request import ChatRequest, ImageInput


class TemplateError(ValueError):
    """A template file cannot be used, or two declarations clash; the message names the key and the fix."""


@dataclass(frozen=True)
class JudgeTemplate:
    """One judge prompt template, declared once.

    - ``key``: its name in :class:`Templates` (``templates.<key>``) and in a template file.
    - ``text``: the default text, with ``{name}`` placeholders and the image markers.
    - ``placeholders``: what a replacement text must keep; those in ``once`` must appear exactly once.
    - ``max_tokens``: the completion limit of its requests; ``expected_tokens``: the completion tokens the dry run
      counts per request.

    :meth:`version` names the text a judge asked with (the pairwise judge's voter name carries it).
    """

    key: str
    text: str
    placeholders: tuple[str, ...] = ()
    max_tokens: int = 1024
    expected_tokens: int = 200
    once: tuple[str, ...] = ()

    def fill(self, templates: Templates, **values: Any) -> str:
        """This template's text in ``templates`` (the default or its replacement) with ``values`` filled in."""
        return fill(templates.text(self.key), **values)

    def version(self, templates: Templates) -> str:
        """The version of this template's text in ``templates`` (the default or its replacement): the first 8 hex
        digits of the SHA-256 of the text, so any change of wording is another version, and the same text always
        the same one."""
        return hashlib.sha256(templates.text(self.key).encode("utf-8")).hexdigest()[:8]

    def request(self, parts: Iterable, detail: str = "high") -> ChatRequest:
        """A request of ``parts`` (text and images, in order) with this template's token budget."""
        return ChatRequest(tuple(parts), detail=detail, max_tokens=self.max_tokens,
                           expected_output_tokens=self.expected_tokens)

    def build(self, templates: Templates, image: ImageInput | None = None, detail: str = "high",
              **values: Any) -> ChatRequest:
        """The filled text as a request, with ``image`` where ``<image>`` stands (after the text if it does not)."""
        text = self.fill(templates, **values)
        return self.request((text,) if image is None else _with_image(text, image), detail)

    def problems(self, text: Any) -> str | None:
        """Why ``text`` cannot replace this template (None when it can)."""
        if not isinstance(text, str) or not text.strip():
            return f"template {self.key!r} must be a non-empty string."
        missing = [p for p in self.placeholders if p not in text]
        if missing:
            return (f"template {self.key!r} lacks {', '.join(missing)}. Put them where the values go (see "
                    f"judges/prompts.py or the module declaring {self.key!r} for the default text).")
        if any(text.count(p) != 1 for p in self.once):
            return f"template {self.key!r} must hold {' and '.join(self.once)} once each."
        return None


def _check_key(template: JudgeTemplate, others: list[JudgeTemplate]) -> None:
    if not template.key.isidentifier() or hasattr(Templates, template.key):
        raise RegistryError(f"template key {template.key!r} cannot be read as templates.{template.key}. Choose a "
                            "Python name that is not a method of Templates (text, question, replace, texts, ...).")


# the modules declaring the built-in judge tasks (judges.tasks.JUDGE_TASKS), whose templates come with them
JUDGE_TASK_MODULES = ("judges.commonsense", "judges.pairwise", "judges.saneval", "judges.semvar",
                      "judges.semvar_tokens")
# every template: the built-in ones (declared below and in judges.saneval_paper_prompts), then those of the judge
# tasks, the plug-ins' included (a plug-in task registers its templates with it)
JUDGE_TEMPLATES = Registry[JudgeTemplate](
    "judge_templates", ("judges.prompts", "judges.saneval_paper_prompts", *JUDGE_TASK_MODULES), what="template",
    key=lambda template: template.key, groups=("judge_tasks",), check=_check_key)


class _Column(Mapping):
    """A read-only, live view {key: one field of the declaration} of the registered templates."""

    def __init__(self, field: str):
        self._field = field

    def __getitem__(self, key: str) -> Any:
        if key not in JUDGE_TEMPLATES:
            raise KeyError(key)
        return getattr(JUDGE_TEMPLATES.get(key), self._field)

    def __iter__(self) -> Iterator[str]:
        return iter(JUDGE_TEMPLATES.names())

    def __len__(self) -> int:
        return len(JUDGE_TEMPLATES.names())

    def __repr__(self) -> str:
        return repr(dict(self))


DEFAULT_TEMPLATES: Mapping[str, str] = _Column("text")
PLACEHOLDERS: Mapping[str, tuple[str, ...]] = _Column("placeholders")
# max_tokens of each template's requests, and the completion tokens the dry run expects
MAX_TOKENS: Mapping[str, int] = _Column("max_tokens")
EXPECTED_TOKENS: Mapping[str, int] = _Column("expected_tokens")


class Templates:
    """The text of every registered template: its declared default, or the replacement given for its key.

    Read a text as an attribute (``templates.pairwise``) or with :meth:`text`; ``Templates(semvar="...")`` and
    :meth:`replace` give replacements (unchecked: :func:`check_templates` checks them). Immutable and compared by
    texts; a template registered after the object was made is seen with its default text.
    """

    __slots__ = ("_overrides",)
    _overrides: dict[str, str]  # {key: replacement text}

    def __init__(self, **overrides: str):
        for key in overrides:
            JUDGE_TEMPLATES.get(key)  # raises for an unknown key, naming the known ones
        object.__setattr__(self, "_overrides", dict(overrides))

    def text(self, key: str) -> str:
        """The text of template ``key``: its replacement, or the declared default."""
        if key in self._overrides:
            return self._overrides[key]
        return JUDGE_TEMPLATES.get(key).text

    def __getattr__(self, key: str) -> str:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self.text(key)
        except RegistryError as error:
            raise AttributeError(str(error)) from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"Templates are immutable: use templates.replace({key}=...) for another text.")

    def question(self, kind: str) -> str:
        """The neutral SANEval question about one attribute ``kind`` (color, shape, texture)."""
        return self.text(f"saneval_question_{kind}")

    def replace(self, **overrides: str) -> Templates:
        """A copy with ``overrides`` ({key: text}) replacing these texts."""
        return Templates(**{**self._overrides, **overrides})

    def texts(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """{key: text} of ``keys`` (default: every registered template)."""
        return {key: self.text(key) for key in (JUDGE_TEMPLATES if keys is None else keys)}

    @property
    def overridden(self) -> tuple[str, ...]:
        """The keys whose text was replaced."""
        return tuple(self._overrides)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Templates) and self.texts() == other.texts()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.texts().items())))

    def __repr__(self) -> str:
        return f"Templates({', '.join(f'{key}=...' for key in self._overrides)})"

    def __reduce__(self):  # copy and pickle: rebuilt from the replacements
        return (_templates_with, (dict(self._overrides),))


def _templates_with(overrides: dict[str, str]) -> Templates:
    return Templates(**overrides)


def check_templates(overrides: dict, source: str = "templates") -> Templates:
    """Templates with ``overrides`` ({key: text}) applied, each checked for its placeholders."""
    for key, text in overrides.items():
        try:
            template = JUDGE_TEMPLATES.get(key)
        except RegistryError as error:
            raise TemplateError(f"{source}: {error}") from None
        problem = template.problems(text)
        if problem:
            raise TemplateError(f"{source}: {problem}")
    return Templates(**overrides)


def load_templates(path: str | Path | None) -> Templates:
    """The default templates, with the replacements of the TOML file at ``path`` (none: the defaults)."""
    if not path:
        return Templates()
    path = Path(path)
    if not path.is_file():
        raise TemplateError(f"template file {path} does not exist. Create it or unset ARENA_JUDGE_TEMPLATES.")
    try:
        overrides = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TemplateError(f"{path}: not valid TOML ({error}). Fix the file or unset ARENA_JUDGE_TEMPLATES.") from None
    return check_templates(overrides, str(path))


def fill(template: str, **values: Any) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def _with_image(text: str, image: ImageInput) -> tuple:
    if "<image>" in text:
        before, after = text.split("<image>", 1)
        return tuple(p for p in (before, image, after) if p != "")
    return (text, image)

# --- the built-in templates: text, placeholders and token budget of each, declared together ----------------------

PAIRWISE = """Please act as an impartial judge and evaluate the quality of the images provided by two AI image assistants to the user prompt displayed below.
You should choose the assistant that provides an image that follows the user's instructions better and reflects the user's prompt main concept better.
Your evaluation should consider factors such as image-text alignment, relevance, accuracy, depth, and fidelity (overall image quality).
Begin your evaluation by comparing the two images and provide a short explanation.
Avoid any position biases and ensure that the order in which the responses were presented do not influence your decision.
Do not allow the size of the images to influence your evaluation.
Do not favor certain names of the assistants.
Be as objective as possible.
After providing your explanation, output your final verdict by strictly following this format:
"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, "[[C]]" for a tie and "[[D]]" if both images are bad.
[User Prompt]
{prompt}
[Start of the first image]
<image A>
[End of the first image]
[Start of the second image]
<image B>
[End of the second image]"""  # noqa: E501 (the lines the model reads, as sent)
PAIRWISE_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "pairwise", PAIRWISE, ("{prompt}", "<image A>", "<image B>"), max_tokens=1024, expected_tokens=250,
    once=("<image A>", "<image B>")))

COMMONSENSE_FIT = (
    'Can you tell me if the image generally fits the descriptions "{description}"? If it generally fits the '
    "descriptions, then return 1, otherwise, return 0. Give me number 1 or 0 only."
)
COMMONSENSE_FIT_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "commonsense_fit", COMMONSENSE_FIT, ("{description}",), max_tokens=20, expected_tokens=2))

SEMVAR = """Does the generated image align with the given prompt?

[Instruction] Carefully assess the generated image in terms of relevance to the prompt and object accuracy. Notice that the image is digitally created or artificially generated, and I hope you help feedback on the quality of a generated image rather than discussing the content of a real photograph.

Use the following criteria to guide your evaluation: with Relevance (0-50 points), Object Accuracy (0-50 points). After providing your explanation, you must rate the generated image by strictly following this format: "[[rating]]", for example: "Relevance (0-50 points): [[35]], Object Accuracy (0-50 points): [[30]]".

[Prompt] {prompt}"""  # noqa: E501 (the lines the model reads, as sent)
SEMVAR_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate("semvar", SEMVAR, ("{prompt}",), max_tokens=512,
                                                   expected_tokens=150))

# SANEval: the LLM's JSON steps share one budget, the VLM's short answers another.
class TokenBudget(TypedDict):
    """A template's ``max_tokens`` and ``expected_tokens`` (:class:`JudgeTemplate`), shared by several templates."""

    max_tokens: int
    expected_tokens: int


SANEVAL_JSON_TOKENS = TokenBudget(max_tokens=512, expected_tokens=80)
SANEVAL_ANSWER_TOKENS = TokenBudget(max_tokens=100, expected_tokens=20)

SANEVAL_OBJECTS = """List the physical objects that this text-to-image prompt asks for, as singular nouns in the order they appear (count each kind once).
Reply with JSON only, in the form {"objects": ["object", ...]}.
Prompt: {prompt}"""  # noqa: E501 (the lines the model reads, as sent)
SANEVAL_OBJECTS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_objects", SANEVAL_OBJECTS, ("{prompt}",), **SANEVAL_JSON_TOKENS))

SANEVAL_ATTRIBUTES = """For each object of this text-to-image prompt, give the {kind} the prompt assigns to it.
Objects: {objects}
Reply with JSON only, in the form {"attributes": {"object": "{kind}", ...}}; leave out objects the prompt gives no {kind}.
Prompt: {prompt}"""  # noqa: E501 (the lines the model reads, as sent)
SANEVAL_ATTRIBUTES_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_attributes", SANEVAL_ATTRIBUTES, ("{prompt}", "{objects}", "{kind}"), **SANEVAL_JSON_TOKENS))

SANEVAL_SPATIAL = """Give the spatial relation this text-to-image prompt asks for between two of its objects.
Objects: {objects}
Reply with JSON only, in the form {"subject": "object", "relation": "left of" | "right of" | "above" | "below", "object": "object"}, or {"relation": null} if the prompt states none.
Prompt: {prompt}"""  # noqa: E501 (the lines the model reads, as sent)
SANEVAL_SPATIAL_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_spatial", SANEVAL_SPATIAL, ("{prompt}", "{objects}"), **SANEVAL_JSON_TOKENS))

SANEVAL_COUNTS = """Give how many of each object this text-to-image prompt asks for.
Objects: {objects}
Reply with JSON only, in the form {"counts": {"object": number, ...}}.
Prompt: {prompt}"""
SANEVAL_COUNTS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_counts", SANEVAL_COUNTS, ("{prompt}", "{objects}"), **SANEVAL_JSON_TOKENS))

SANEVAL_SYNONYMS = """For each object below, give up to five other names an object detector could use for it (synonyms, common names, closely related words), singular.
Objects: {objects}
Reply with JSON only, in the form {"synonyms": {"object": ["name", ...], ...}}."""  # noqa: E501 (the lines the model reads, as sent)
SANEVAL_SYNONYMS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_synonyms", SANEVAL_SYNONYMS, ("{objects}",), **SANEVAL_JSON_TOKENS))

SANEVAL_QUESTION_COLOR = "What color is the object?"
SANEVAL_QUESTION_SHAPE = "What shape is the object?"
SANEVAL_QUESTION_TEXTURE = "What texture does the object have?"
SANEVAL_QUESTION_TEMPLATES = {
    kind: JUDGE_TEMPLATES.register(JudgeTemplate(f"saneval_question_{kind}", text, **SANEVAL_ANSWER_TOKENS))
    for kind, text in (("color", SANEVAL_QUESTION_COLOR), ("shape", SANEVAL_QUESTION_SHAPE),
                       ("texture", SANEVAL_QUESTION_TEXTURE))}

SANEVAL_RATING = """A vision model was shown a crop of a {object} from a generated image and asked: "{question}"
It answered: "{answer}"
The {kind} expected by the prompt is "{expected}".
Rate how well the answer matches the expected {kind}, from 0.0 (not at all) to 1.0 (exactly).
Reply with JSON only, in the form {"score": number, "detected": "the {kind} the answer names, in one or two words"}."""  # noqa: E501 (the lines the model reads, as sent)
SANEVAL_RATING_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_rating", SANEVAL_RATING, ("{answer}", "{expected}"), **SANEVAL_JSON_TOKENS))

# The templates the project ships with, in their order (SANEval's template version hashes all of them).
BUILT_IN_TEMPLATES = (PAIRWISE_TEMPLATE, COMMONSENSE_FIT_TEMPLATE, SEMVAR_TEMPLATE, SANEVAL_OBJECTS_TEMPLATE,
                      SANEVAL_ATTRIBUTES_TEMPLATE, SANEVAL_SPATIAL_TEMPLATE, SANEVAL_COUNTS_TEMPLATE,
                      SANEVAL_SYNONYMS_TEMPLATE, *SANEVAL_QUESTION_TEMPLATES.values(), SANEVAL_RATING_TEMPLATE)

# Declared after BUILT_IN_TEMPLATES, so SANEval's template version (a hash of the built-in texts) is unchanged.
# The taxonomy paper's Figure 7 (Appendix E) word for word, its slips kept: both images are framed as "the first
# image", and a stray quotation mark ends the line before "[[D]]" (the figure breaks the line there). ``pairwise``
# above is the project's corrected wording; the taxonomy-paper preset sends this one in its place.
PAIRWISE_TAXONOMY_PAPER = """Please act as an impartial judge and evaluate the quality of the images provided by two AI image assistants to the user prompt displayed below.
You should choose the assistant that provides an image that follows the user's instructions better and reflects the user's prompt main concept better.
Your evaluation should consider factors such as image-text alignment, relevance, accuracy, depth, and fidelity (overall image quality).
Begin your evaluation by comparing the two images and provide a short explanation.
Avoid any position biases and ensure that the order in which the responses were presented do not influence your decision.
Do not allow the size of the images to influence your evaluation.
Do not favor certain names of the assistants.
Be as objective as possible.
After providing your explanation, output your final verdict by strictly following this format:
"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, "[[C]]" for a tie and "
"[[D]]" if both images are bad.
[User Prompt]
{prompt}
[Start of the first image]
<image A>
[End of the first image]
[Start of the first image]
<image B>
[End of the first image]"""  # noqa: E501 (the lines the model reads, as sent)
PAIRWISE_TAXONOMY_PAPER_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "pairwise_taxonomy_paper", PAIRWISE_TAXONOMY_PAPER, ("{prompt}", "<image A>", "<image B>"), max_tokens=1024,
    expected_tokens=250, once=("<image A>", "<image B>")))


# --- the message builders -----------------------------------------------------------------------------------------

def pairwise_request(templates: Templates, prompt: str, first: ImageInput, second: ImageInput,
                     detail: str = "high") -> ChatRequest:
    """T1: the judge prompt with ``first`` shown as assistant A and ``second`` as assistant B."""
    text = PAIRWISE_TEMPLATE.fill(templates, prompt=prompt)
    head, rest = text.split("<image A>", 1)
    middle, tail = rest.split("<image B>", 1)
    return PAIRWISE_TEMPLATE.request((p for p in (head, first, middle, second, tail) if p != ""), detail)


def fit_request(templates: Templates, description: str, image: ImageInput, detail: str = "high") -> ChatRequest:
    """T2: does ``image`` generally fit ``description`` (1 or 0)."""
    return COMMONSENSE_FIT_TEMPLATE.build(templates, image, detail, description=description)


def semvar_request(templates: Templates, prompt: str, image: ImageInput, detail: str = "high") -> ChatRequest:
    """T3: S(T, I) for the text ``prompt`` and ``image``."""
    return SEMVAR_TEMPLATE.build(templates, image, detail, prompt=prompt)


def _objects_text(objects) -> str:
    return ", ".join(objects)


def saneval_objects_request(templates: Templates, prompt: str) -> ChatRequest:
    return SANEVAL_OBJECTS_TEMPLATE.build(templates, prompt=prompt)


def saneval_attributes_request(templates: Templates, prompt: str, objects, kind: str) -> ChatRequest:
    return SANEVAL_ATTRIBUTES_TEMPLATE.build(templates, prompt=prompt, objects=_objects_text(objects), kind=kind)


def saneval_spatial_request(templates: Templates, prompt: str, objects) -> ChatRequest:
    return SANEVAL_SPATIAL_TEMPLATE.build(templates, prompt=prompt, objects=_objects_text(objects))


def saneval_counts_request(templates: Templates, prompt: str, objects) -> ChatRequest:
    return SANEVAL_COUNTS_TEMPLATE.build(templates, prompt=prompt, objects=_objects_text(objects))


def saneval_synonyms_request(templates: Templates, objects) -> ChatRequest:
    return SANEVAL_SYNONYMS_TEMPLATE.build(templates, objects=_objects_text(objects))


def saneval_question_request(templates: Templates, kind: str, crop: ImageInput, detail: str = "high") -> ChatRequest:
    """The VLM's neutral attribute question about one detected object's crop (the crop first, then the question)."""
    template = SANEVAL_QUESTION_TEMPLATES[kind]
    question = templates.text(template.key)
    return template.request(_with_image(question, crop) if "<image>" in question else (crop, question), detail)


def saneval_rating_request(templates: Templates, *, obj: str, kind: str, question: str, answer: str,
                           expected: str) -> ChatRequest:
    """The LLM's 0.0-1.0 rating of the VLM's answer against the expected attribute."""
    return SANEVAL_RATING_TEMPLATE.build(templates, object=obj, kind=kind, question=question,
                                         answer=" ".join(answer.split()), expected=expected)
