"""The eight prompts of the SANEval paper's Appendix C, verbatim, as registered judge templates (T4, published
protocol).

The paper "lists the exact prompts used for LLMs and VLMs ... verbatim"; so do these templates: every word, quote
and typo as printed (prompts 1-4 open a quote before ``{prompt}`` and never close it; prompts 5 and 6 are the same
text; prompt 8's ranges are written ``0.8--0.9``). What the printed page adds or loses is not prompt text: the
PDF's margin line numbers are left out, lines wrapped by the page's box are joined, its bullets and arrows are
written ``•`` / ``-`` and ``→``, and two example replies the text extraction cut short are completed from their
own pattern (prompt 2's first example ends ``"obj2": "bike"}``; prompt 4's third has ``"dog": 1,``).

Placeholders are the paper's: ``{prompt}``, ``{available_relationships}`` (prompt 2: the relations of
:data:`judges.saneval_rules.PUBLISHED_RELATIONS`, comma-separated), ``{available_numbers}`` (prompt 4: the number
words of :data:`AVAILABLE_NUMBERS`), ``{object_names}`` (prompts 5 and 6: a Python-style list, as the authors'
code formats it), ``{expected_attribute}`` and ``{response}`` (prompt 8). Prompt 7's three neutral questions are
the project's ``saneval_question_color`` / ``_shape`` / ``_texture`` templates, already word for word the paper's.

Which step sends which prompt (:mod:`judges.saneval`, ``protocol="published"``): 1 the objects, then by category
2 the spatial triplet, 3 the object-attribute lists or 4 the counts; 6 maps the detector's labels onto the
prompt's objects, 5 groups the same names for the numeracy feedback; 7 asks the VLM about each detected object's
crop; 8 rates each answer against each expected attribute.
"""

from __future__ import annotations

from judges.prompts import JUDGE_TEMPLATES, JudgeTemplate, TokenBudget

# The number words of the authors' code (ssa/scoring NUMERIC_QUERIES), filled into prompt 4's {available_numbers}.
AVAILABLE_NUMBERS = ("a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight")

PROMPT_1_OBJECTS = """Extract all significant objects (nouns) from the following text prompt.

Text Prompt: "{prompt}

- Identify all significant objects (nouns) mentioned in the prompt, including:
  - Living beings (people, animals, creatures)
  - Substantial physical objects (vehicles, furniture, buildings, tools, toys)
  - Natural features (trees, rocks, mountains, water bodies)
  - Important branded items or recognizable objects
- Do **not** include:
  - Positional/directional terms (top, bottom, left, right, front, back, side, center)
  - Clothing items (shirts, pants, shoes, hats) unless they are the main focus
  - Body parts (hands, face, legs) unless they are the main focus
  - Abstract concepts (time, love, happiness)
  - Very small or insignificant items (buttons, zippers, laces)
  - Prepositions or spatial relationships (on, in, under, above, below)
- Return the result as a JSON array containing object names in lowercase, singular form.

For example:

- "a red car and blue bike" → ["car", "bike"]
- "large wooden table with metal legs" → ["table"]
- "small white dog running in the park" → ["dog", "park"]
- "three books on the shelf" → ["book", "shelf"]"""

PROMPT_2_SPATIAL = """Extract the spatial relationship and objects from the following text prompt.
Text Prompt: "{prompt}
Available spatial relationships: {available_relationships}
• Identify:
  - The first object (obj1) - the reference object
  - The spatial relationship - must be exactly one from the available relationships
  - The second object (obj2) - the object being positioned relative to obj1
• Return the result as a JSON object with exactly these keys:
  - "obj1": the first/reference object (lowercase, singular form)
  - "relationship": the spatial relationship (exactly as written in available relationships)
  - "obj2": the second object (lowercase, singular form)
• If no valid spatial relationship is found, return an empty object: {}
• Focus on the main spatial relationship in the prompt
For example:
• "a red car on the left of a blue bike" → {"obj1": "car", "relationship": "on the left of", "obj2": "bike"}
• "dog next to the table" → {"obj1": "dog", "relationship": "next to", "obj2": "table"}
• "cat on top of the chair" → {"obj1": "cat", "relationship": "on top of", "obj2": "chair"}"""

PROMPT_3_ATTRIBUTES = """Extract objects and their attributes from the following text prompt.
Text Prompt: "{prompt}
• Identify all objects (nouns) and their associated attributes (adjectives or descriptive words).
• Return the result as a JSON object where:
  - Keys are object names (lowercase, singular form)
  - Values are lists of attributes associated with each object
• Only include objects that have explicit attributes mentioned.
• If an object has no attributes, don't include it.
For example:
• "a red car and blue bike" → {"car": ["red"], "bike": ["blue"]}
• "large wooden table" → {"table": ["large", "wooden"]}
• "small white dog running" → {"dog": ["small", "white"]}"""

PROMPT_4_COUNTS = """Extract all objects and their exact quantities from the following text prompt.
Text Prompt: "{prompt}
Available number words: {available_numbers}
• Identify all objects (nouns) and their associated quantities (numbers).
• Include both written numbers (e.g., "seven") and numeric digits (e.g., "7").
• Return a JSON object with exactly these keys:
  - "objects": a dictionary mapping object names to their quantities as integers
  - "numbers_found": a list of the number words/digits found in the prompt
For example:
• "seven horses and 4 pigs" → {"objects": {"horse": 7, "pig": 4}, "numbers_found": ["seven", "4"]}
• "three red cars and two blue bikes" → {"objects": {"car": 3, "bike": 2}, "numbers_found": ["three", "two"]}
• "a single dog and five cats" → {"objects": {"dog": 1, "cat": 5}, "numbers_found": ["a", "five"]}
Conversion rules:
• "one"/"a"/"an"/"single" = 1
• "two"/"couple" = 2
• "three" = 3
• "four" = 4
• "five" = 5
• "six" = 6
• "seven" = 7
• "eight" = 8
• "nine" = 9
• "ten" = 10
• "dozen" = 12
• "hundred" = 100
Guidelines:
• Convert object names to lowercase, singular form.
• Only include objects that have explicit or implied quantities.
• If no specific number is mentioned but the object appears in a counting context, assume quantity 1.
• Focus on the main objects being counted in the prompt."""

PROMPT_5_SYNONYMS = """Analyze the following list of objects and identify any synonyms or similar objects that should be grouped together.

Objects: {object_names}

- For each group of synonymous objects, choose the most common/standard term to represent the group.
- Return the result as a JSON object where:
  - Keys are the standard/representative terms (lowercase, singular form).
  - Values are arrays of all synonymous terms that should be grouped under that key.

For example:

- ["boy", "child", "person", "girl"] → {"person": ["boy", "child", "person", "girl"]}
- ["house", "home", "building"] → {"house": ["house", "home", "building"]}
- ["car", "vehicle", "automobile"] → {"car": ["car", "vehicle", "automobile"]}
- ["dog", "cat", "bird"] → {"dog": ["dog"], "cat": ["cat"], "bird": ["bird"]}
- ["bee", "bird", "animal"] → {"bee": ["bee"], "bird": ["bird", "animal"]}
- ["desk", "table", "furniture"] → {"desk": ["desk", "table"], "furniture": ["furniture"]}

Only group objects that are truly synonymous or refer to the same type of thing. Keep unrelated objects separate."""  # noqa: E501 (Appendix C verbatim, its lines as printed)

PROMPT_6_MAPPING = PROMPT_5_SYNONYMS  # the paper prints the same text for "mapping synonyms"

PROMPT_8_RATING = """You are evaluating whether a description matches a specific attribute.

Expected attribute: "{expected_attribute}"
Description: "{response}"

Rate how well the description matches the expected attribute on a scale from 0.0 to 1.0:

- 1.0: Perfect match (the description clearly contains or describes the expected attribute)
- 0.8--0.9: Very good match (the description strongly suggests the expected attribute)
- 0.5--0.7: Partial match (the description somewhat relates to the expected attribute)
- 0.2--0.4: Weak match (there might be some connection but it's unclear)
- 0.0--0.1: No match (the description doesn't relate to the expected attribute at all)

Consider semantic similarity, synonyms, and related concepts. For example:

- "red" matches "crimson" or "scarlet" (0.8--0.9)
- "large" matches "big" or "huge" (0.8--0.9)
- "wooden" matches "made of wood" (1.0)
- "smooth" might partially match "polished" (0.6--0.7)

Respond with only a number between 0.0 and 1.0 (e.g., "0.8")."""

_JSON = TokenBudget(max_tokens=512, expected_tokens=80)

PAPER_OBJECTS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_objects", PROMPT_1_OBJECTS, ("{prompt}",), **_JSON))
PAPER_SPATIAL_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_spatial", PROMPT_2_SPATIAL, ("{prompt}", "{available_relationships}"), **_JSON))
PAPER_ATTRIBUTES_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_attributes", PROMPT_3_ATTRIBUTES, ("{prompt}",), **_JSON))
PAPER_COUNTS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_counts", PROMPT_4_COUNTS, ("{prompt}", "{available_numbers}"), **_JSON))
PAPER_SYNONYMS_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_synonyms", PROMPT_5_SYNONYMS, ("{object_names}",), **_JSON))
PAPER_MAPPING_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_mapping", PROMPT_6_MAPPING, ("{object_names}",), **_JSON))
PAPER_RATING_TEMPLATE = JUDGE_TEMPLATES.register(JudgeTemplate(
    "saneval_paper_rating", PROMPT_8_RATING, ("{expected_attribute}", "{response}"), max_tokens=20,
    expected_tokens=4))

PAPER_TEMPLATES = (PAPER_OBJECTS_TEMPLATE, PAPER_SPATIAL_TEMPLATE, PAPER_ATTRIBUTES_TEMPLATE, PAPER_COUNTS_TEMPLATE,
                   PAPER_SYNONYMS_TEMPLATE, PAPER_MAPPING_TEMPLATE, PAPER_RATING_TEMPLATE)


def object_names_text(names) -> str:
    """``{object_names}`` as the authors' code fills it: Python's list repr (``['dog', 'cat']``)."""
    return repr([str(name) for name in names])
