"""Judge prompt templates and the message builders (pure: text in, :class:`ChatRequest` out).

The defaults are the protocol texts of ``protocols.md`` (T1 pairwise, T2 fit, T3 SemVarBench), word for word. The
SANEval LLM/VLM steps (T4) are not quoted by the protocol; their wording here is the project's, and the attribute
questions are the protocol's neutral questions. Any template can be replaced by a TOML file (setting
``judge_templates`` / ``ARENA_JUDGE_TEMPLATES``) with one string per key of :data:`DEFAULT_TEMPLATES`; a
replacement must keep the template's placeholders (:data:`PLACEHOLDERS`).

Placeholders are ``{name}`` (filled by plain replacement, so JSON braces in a template need no escaping). Images
go where ``<image A>`` / ``<image B>`` stand in the pairwise template and where ``<image>`` stands in the others
(after the text when a template has no ``<image>``).
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from judges.request import ChatRequest, ImageInput

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
[End of the second image]"""

COMMONSENSE_FIT = (
    'Can you tell me if the image generally fits the descriptions "{description}"? If it generally fits the '
    "descriptions, then return 1, otherwise, return 0. Give me number 1 or 0 only."
)

SEMVAR = """Does the generated image align with the given prompt?

[Instruction] Carefully assess the generated image in terms of relevance to the prompt and object accuracy. Notice that the image is digitally created or artificially generated, and I hope you help feedback on the quality of a generated image rather than discussing the content of a real photograph.

Use the following criteria to guide your evaluation: with Relevance (0-50 points), Object Accuracy (0-50 points). After providing your explanation, you must rate the generated image by strictly following this format: "[[rating]]", for example: "Relevance (0-50 points): [[35]], Object Accuracy (0-50 points): [[30]]".

[Prompt] {prompt}"""

SANEVAL_OBJECTS = """List the physical objects that this text-to-image prompt asks for, as singular nouns in the order they appear (count each kind once).
Reply with JSON only, in the form {"objects": ["object", ...]}.
Prompt: {prompt}"""

SANEVAL_ATTRIBUTES = """For each object of this text-to-image prompt, give the {kind} the prompt assigns to it.
Objects: {objects}
Reply with JSON only, in the form {"attributes": {"object": "{kind}", ...}}; leave out objects the prompt gives no {kind}.
Prompt: {prompt}"""

SANEVAL_SPATIAL = """Give the spatial relation this text-to-image prompt asks for between two of its objects.
Objects: {objects}
Reply with JSON only, in the form {"subject": "object", "relation": "left of" | "right of" | "above" | "below", "object": "object"}, or {"relation": null} if the prompt states none.
Prompt: {prompt}"""

SANEVAL_COUNTS = """Give how many of each object this text-to-image prompt asks for.
Objects: {objects}
Reply with JSON only, in the form {"counts": {"object": number, ...}}.
Prompt: {prompt}"""

SANEVAL_SYNONYMS = """For each object below, give up to five other names an object detector could use for it (synonyms, common names, closely related words), singular.
Objects: {objects}
Reply with JSON only, in the form {"synonyms": {"object": ["name", ...], ...}}."""

SANEVAL_QUESTION_COLOR = "What color is the object?"
SANEVAL_QUESTION_SHAPE = "What shape is the object?"
SANEVAL_QUESTION_TEXTURE = "What texture does the object have?"

SANEVAL_RATING = """A vision model was shown a crop of a {object} from a generated image and asked: "{question}"
It answered: "{answer}"
The {kind} expected by the prompt is "{expected}".
Rate how well the answer matches the expected {kind}, from 0.0 (not at all) to 1.0 (exactly).
Reply with JSON only, in the form {"score": number, "detected": "the {kind} the answer names, in one or two words"}."""

DEFAULT_TEMPLATES = {
    "pairwise": PAIRWISE,
    "commonsense_fit": COMMONSENSE_FIT,
    "semvar": SEMVAR,
    "saneval_objects": SANEVAL_OBJECTS,
    "saneval_attributes": SANEVAL_ATTRIBUTES,
    "saneval_spatial": SANEVAL_SPATIAL,
    "saneval_counts": SANEVAL_COUNTS,
    "saneval_synonyms": SANEVAL_SYNONYMS,
    "saneval_question_color": SANEVAL_QUESTION_COLOR,
    "saneval_question_shape": SANEVAL_QUESTION_SHAPE,
    "saneval_question_texture": SANEVAL_QUESTION_TEXTURE,
    "saneval_rating": SANEVAL_RATING,
}

PLACEHOLDERS = {
    "pairwise": ("{prompt}", "<image A>", "<image B>"),
    "commonsense_fit": ("{description}",),
    "semvar": ("{prompt}",),
    "saneval_objects": ("{prompt}",),
    "saneval_attributes": ("{prompt}", "{objects}", "{kind}"),
    "saneval_spatial": ("{prompt}", "{objects}"),
    "saneval_counts": ("{prompt}", "{objects}"),
    "saneval_synonyms": ("{objects}",),
    "saneval_question_color": (),
    "saneval_question_shape": (),
    "saneval_question_texture": (),
    "saneval_rating": ("{answer}", "{expected}"),
}

# max_tokens of each request, and the completion tokens the dry run expects
MAX_TOKENS = {"pairwise": 1024, "commonsense_fit": 20, "semvar": 512, "saneval_json": 512, "saneval_answer": 100}
EXPECTED_TOKENS = {"pairwise": 250, "commonsense_fit": 2, "semvar": 150, "saneval_json": 80, "saneval_answer": 20}


class TemplateError(ValueError):
    """A template file cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class Templates:
    pairwise: str = PAIRWISE
    commonsense_fit: str = COMMONSENSE_FIT
    semvar: str = SEMVAR
    saneval_objects: str = SANEVAL_OBJECTS
    saneval_attributes: str = SANEVAL_ATTRIBUTES
    saneval_spatial: str = SANEVAL_SPATIAL
    saneval_counts: str = SANEVAL_COUNTS
    saneval_synonyms: str = SANEVAL_SYNONYMS
    saneval_question_color: str = SANEVAL_QUESTION_COLOR
    saneval_question_shape: str = SANEVAL_QUESTION_SHAPE
    saneval_question_texture: str = SANEVAL_QUESTION_TEXTURE
    saneval_rating: str = SANEVAL_RATING

    def question(self, kind: str) -> str:
        return getattr(self, f"saneval_question_{kind}")


def check_templates(overrides: dict, source: str = "templates") -> Templates:
    """Templates with ``overrides`` ({key: text}) applied, each checked for its placeholders."""
    for key, text in overrides.items():
        if key not in DEFAULT_TEMPLATES:
            raise TemplateError(f"{source}: unknown template {key!r}. Known templates: {', '.join(DEFAULT_TEMPLATES)}.")
        if not isinstance(text, str) or not text.strip():
            raise TemplateError(f"{source}: template {key!r} must be a non-empty string.")
        missing = [p for p in PLACEHOLDERS[key] if p not in text]
        if missing:
            raise TemplateError(f"{source}: template {key!r} lacks {', '.join(missing)}. Put them where the "
                                "values go (see judges/prompts.py for the default text).")
        if key == "pairwise" and (text.count("<image A>") != 1 or text.count("<image B>") != 1):
            raise TemplateError(f"{source}: template 'pairwise' must hold <image A> and <image B> once each.")
    return dataclasses.replace(Templates(), **overrides)


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


def fill(template: str, **values: str) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def _with_image(text: str, image: ImageInput) -> tuple:
    if "<image>" in text:
        before, after = text.split("<image>", 1)
        return tuple(p for p in (before, image, after) if p != "")
    return (text, image)


def pairwise_request(templates: Templates, prompt: str, first: ImageInput, second: ImageInput,
                     detail: str = "high") -> ChatRequest:
    """T1: the judge prompt with ``first`` shown as assistant A and ``second`` as assistant B."""
    text = fill(templates.pairwise, prompt=prompt)
    head, rest = text.split("<image A>", 1)
    middle, tail = rest.split("<image B>", 1)
    parts = tuple(p for p in (head, first, middle, second, tail) if p != "")
    return ChatRequest(parts, detail=detail, max_tokens=MAX_TOKENS["pairwise"],
                       expected_output_tokens=EXPECTED_TOKENS["pairwise"])


def fit_request(templates: Templates, description: str, image: ImageInput, detail: str = "high") -> ChatRequest:
    """T2: does ``image`` generally fit ``description`` (1 or 0)."""
    return ChatRequest(_with_image(fill(templates.commonsense_fit, description=description), image), detail=detail,
                       max_tokens=MAX_TOKENS["commonsense_fit"], expected_output_tokens=EXPECTED_TOKENS["commonsense_fit"])


def semvar_request(templates: Templates, prompt: str, image: ImageInput, detail: str = "high") -> ChatRequest:
    """T3: S(T, I) for the text ``prompt`` and ``image``."""
    return ChatRequest(_with_image(fill(templates.semvar, prompt=prompt), image), detail=detail,
                       max_tokens=MAX_TOKENS["semvar"], expected_output_tokens=EXPECTED_TOKENS["semvar"])


def _text_request(text: str) -> ChatRequest:
    return ChatRequest((text,), max_tokens=MAX_TOKENS["saneval_json"], expected_output_tokens=EXPECTED_TOKENS["saneval_json"])


def _objects_text(objects) -> str:
    return ", ".join(objects)


def saneval_objects_request(templates: Templates, prompt: str) -> ChatRequest:
    return _text_request(fill(templates.saneval_objects, prompt=prompt))


def saneval_attributes_request(templates: Templates, prompt: str, objects, kind: str) -> ChatRequest:
    return _text_request(fill(templates.saneval_attributes, prompt=prompt, objects=_objects_text(objects), kind=kind))


def saneval_spatial_request(templates: Templates, prompt: str, objects) -> ChatRequest:
    return _text_request(fill(templates.saneval_spatial, prompt=prompt, objects=_objects_text(objects)))


def saneval_counts_request(templates: Templates, prompt: str, objects) -> ChatRequest:
    return _text_request(fill(templates.saneval_counts, prompt=prompt, objects=_objects_text(objects)))


def saneval_synonyms_request(templates: Templates, objects) -> ChatRequest:
    return _text_request(fill(templates.saneval_synonyms, objects=_objects_text(objects)))


def saneval_question_request(templates: Templates, kind: str, crop: ImageInput, detail: str = "high") -> ChatRequest:
    """The VLM's neutral attribute question about one detected object's crop (the crop first, then the question)."""
    question = templates.question(kind)
    parts = _with_image(question, crop) if "<image>" in question else (crop, question)
    return ChatRequest(parts, detail=detail, max_tokens=MAX_TOKENS["saneval_answer"],
                       expected_output_tokens=EXPECTED_TOKENS["saneval_answer"])


def saneval_rating_request(templates: Templates, *, obj: str, kind: str, question: str, answer: str,
                           expected: str) -> ChatRequest:
    """The LLM's 0.0-1.0 rating of the VLM's answer against the expected attribute."""
    return _text_request(fill(templates.saneval_rating, object=obj, kind=kind, question=question,
                              answer=" ".join(answer.split()), expected=expected))
