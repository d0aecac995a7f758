"""How far a model's own text encoders put a SemVarBench sentence from its permutation (SemVarBench §4.3, Fig. 6;
Appendix F.1, Fig. 14).

The paper measures "the text encoder's ability" by the similarity of the embeddings of T_a and T_pv (and T_pi) under
each model's text encoder(s), plotted against the judge's scores (Fig. 6) and as 1 − cos(T_a, T_pv) per model
(Fig. 14). It does not say how a sentence becomes one vector. Table 1's #DIM column ("pooled dimension of text
encoders' outputs") does, for all nine open models, if the vector is (:func:`chosen_encoders`):

- the pooled output of each CLIP encoder (``CLIPTextModel``: ``pooler_output``; ``CLIPTextModelWithProjection``:
  ``text_embeds``) and the ChatGLM encoder's last-token state (what ``KolorsPipeline`` passes as its pooled
  embedding), concatenated: SD 1.5 768, SD 2.1 1024, SD XL 768 + 1280 = 2048, SD CA 1280 (the prior's encoder),
  Kolors 4096, SD 3 768 + 1280 = 2048 and FLUX.1 768 (the T5 beside them is left out);
- for a model with no such encoder (DeepFloyd IF, PixArt-α: T5 only), the mean of its T5 encoder's last hidden
  states over the prompt's tokens: 4096.

(tests/test_semvarbench_text_encoders.py checks that rule against Table 1 from the real models' widths.) The text is
tokenized as the pipeline does (CLIP: 77 tokens, ChatGLM: 256, T5: the encoder's limit).

``python -m judges metrics --metrics text_encoders --suite semvarbench --models sd-v1-5,sdxl,...`` loads only the text
encoders and tokenizers of each model (from the registry's weights or hub id, or ``--text-encoders MODEL=SOURCE``:
DALL-E 3 has none, and the paper "deduced" its similarity with T5-XXL) and stores, on each image of a T_pv or T_pi
prompt, ``semvar_text_similarity`` = cos(E(T_a), E(T_p)) (scorer ``text-encoders``, version: the source). With
``--tiny`` each model's tiny stand-in pipeline gives the encoders (tests).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.registry import load
from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.registry import METRICS, Metric, MetricRun, ScorerContext, Skip
from judges.selection import image_rows

NAME = "semvar_text_similarity"
SCORER = "text-encoders"
POOLED_CLASSES = ("CLIPTextModel", "CLIPTextModelWithProjection", "ChatGLMModel")
CHATGLM_LENGTH = 256  # KolorsPipeline's max_length


def chosen_encoders(classes: Sequence[str]) -> list[int]:
    """Which of a pipeline's text encoders (by class name, in model_index order) make the sentence vector: the
    pooled ones (CLIP, ChatGLM) when there are any, else all (T5); the module docstring says why."""
    pooled = [index for index, name in enumerate(classes) if name in POOLED_CLASSES]
    return pooled or list(range(len(classes)))


def encoder_components(index: dict) -> list[tuple[str, str, list]]:
    """(encoder component, tokenizer component, [library, class]) of a pipeline's model_index: its ``text_encoder*``
    components, or the prior's (``prior_text_encoder``) when it has one (Stable Cascade's combined pipeline: the
    prior's encoder conditions the image)."""
    names = [name for name in index if name.startswith("prior_text_encoder")] or \
        [name for name in index if name.startswith("text_encoder")]
    found = []
    for name in sorted(names):
        value = index[name]
        if isinstance(value, list) and value[0] is not None:
            found.append((name, name.replace("text_encoder", "tokenizer"), value))
    return found


def _class(library: str, name: str):
    if library == "transformers":
        return load(f"transformers:{name}")
    try:
        return load(f"diffusers.pipelines.{library}:{name}")
    except (ImportError, AttributeError):
        return load(f"{library}:{name}")


@dataclass
class TextEncoders:
    """A model's chosen text encoders (:func:`chosen_encoders`) and their tokenizers."""

    source: str
    parts: list[tuple[str, Any, Any]]  # (class name, encoder, tokenizer)
    device: str = "cpu"

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.parts]

    def embed(self, texts: Sequence[str]):
        """(len(texts), dim): each text's vector (module docstring), the chosen encoders' parts concatenated."""
        import torch

        vectors = []
        with torch.inference_mode():
            for class_name, model, tokenizer in self.parts:
                vectors.append(_vector(class_name, model, tokenizer, list(texts), self.device).float().cpu())
        return torch.cat(vectors, dim=-1)


def _vector(class_name: str, model, tokenizer, texts: list[str], device: str):
    if class_name.startswith("CLIPTextModel"):
        tokens = tokenizer(texts, padding="max_length", max_length=tokenizer.model_max_length, truncation=True,
                           return_tensors="pt").to(device)
        output = model(input_ids=tokens.input_ids)
        return output.text_embeds if class_name == "CLIPTextModelWithProjection" else output.pooler_output
    if class_name == "ChatGLMModel":  # KolorsPipeline.encode_prompt's pooled embedding: the last token's last state
        tokens = tokenizer(texts, padding="max_length", max_length=CHATGLM_LENGTH, truncation=True,
                           return_tensors="pt").to(device)
        output = model(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"],
                       position_ids=tokens["position_ids"], output_hidden_states=True)
        return output.hidden_states[-1][-1, :, :]
    limit = min(getattr(tokenizer, "model_max_length", 512) or 512, 512)
    tokens = tokenizer(texts, padding=True, max_length=limit, truncation=True, return_tensors="pt").to(device)
    hidden = model(input_ids=tokens.input_ids, attention_mask=tokens.attention_mask).last_hidden_state
    mask = tokens.attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def _model_index(source: str) -> tuple[dict, str]:
    """(model_index.json, the folder it is in) of a local pipeline folder or a hub id in the local cache."""
    folder = Path(source)
    if (folder / "model_index.json").is_file():
        return json.loads((folder / "model_index.json").read_text()), str(folder)
    from huggingface_hub import hf_hub_download

    path = Path(hf_hub_download(source, "model_index.json"))
    return json.loads(path.read_text()), source


def load_text_encoders(source: str, *, variant: str = "", device: str = "cpu") -> TextEncoders:
    """The chosen text encoders of the pipeline at ``source`` (a folder in save_pretrained layout, or a hub id),
    loaded alone (no denoiser, no VAE); a T5 or CLIP encoder folder of its own (config.json, no model_index) is
    loaded as the one encoder (``--text-encoders dall-e-3=/data/t5-xxl``)."""
    folder = Path(source)
    if (folder / "config.json").is_file() and not (folder / "model_index.json").is_file():
        import transformers

        config = json.loads((folder / "config.json").read_text())
        class_name = (config.get("architectures") or ["T5EncoderModel"])[0]
        model = getattr(transformers, class_name).from_pretrained(folder).eval().to(device)
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        return TextEncoders(source, [(class_name, model, tokenizer)], device)
    index, root = _model_index(source)
    components = encoder_components(index)
    if not components:
        raise OSError(f"{source}: no text encoder in its model_index.json.")
    keep = chosen_encoders([value[1] for _, _, value in components])
    parts = []
    for position in keep:
        name, tokenizer_name, (library, class_name) = components[position]
        extra = {"variant": variant} if variant else {}
        try:
            model = _class(library, class_name).from_pretrained(root, subfolder=name, **extra)
        except (OSError, ValueError):
            model = _class(library, class_name).from_pretrained(root, subfolder=name)
        library_t, tokenizer_class = index[tokenizer_name]
        tokenizer = _class(library_t, tokenizer_class).from_pretrained(root, subfolder=tokenizer_name)
        parts.append((class_name, model.eval().to(device), tokenizer))
    return TextEncoders(source, parts, device)


def text_encoder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--text-encoders", action="append", default=[], metavar="MODEL=SOURCE",
                        help="the text encoders of MODEL from SOURCE (a pipeline folder, a hub id, a registry model "
                             "name, or a T5/CLIP encoder folder), e.g. dall-e-3=/data/t5-v1_1-xxl (SemVarBench used "
                             "T5-XXL for DALL-E 3); default: the registry's weights of each model")


class EncoderSource:
    """The metric's scorer: which text encoders each model has (the registry, ``--text-encoders``, tiny stand-ins),
    loaded once per source."""

    def __init__(self, context: ScorerContext):
        from generators.registry import load_registry

        self.context = context
        self.registry = load_registry()
        self.overrides = {}
        for given in getattr(context.options, "text_encoders", None) or []:
            model, sep, source = given.partition("=")
            if not sep or not model or not source:
                raise ValueError(f"--text-encoders {given!r}: write MODEL=SOURCE, e.g. dall-e-3=/data/t5-v1_1-xxl.")
            self.overrides[model] = source
        self._loaded: dict[str, TextEncoders] = {}

    def source_of(self, model: str) -> tuple[str, str] | None:
        """(source, weights variant) of ``model``'s text encoders, or None when it has none (an API model)."""
        source = self.overrides.get(model)
        spec = self.registry.get(source or model)
        if source and spec is None:
            return source, ""
        if spec is None or spec.kind != "diffusers":
            return None
        if self.context.tiny:
            from generators.tiny import TINY_RECIPES, ensure_tiny, recipe_for

            recipe = TINY_RECIPES.get(spec.tiny) or recipe_for(spec.hub_id, spec.pipeline_class)
            if recipe is None:
                return None
            return str(ensure_tiny(self.context.tiny_cache(), recipe.name)), recipe.variant
        return spec.source, spec.variant

    def encoders(self, source: str, variant: str) -> TextEncoders:
        if source not in self._loaded:
            self._loaded[source] = load_text_encoders(source, variant=variant, device=self.context.options.device)
        return self._loaded[source]


def _make(context: ScorerContext) -> EncoderSource:
    return EncoderSource(context)


def score_text_similarity(run: MetricRun, scorer: EncoderSource) -> dict:
    """``semvar_text_similarity`` on each image of a permutation (T_pv) or paraphrase (T_pi) prompt of each model
    (module docstring); models without text encoders are listed with the fix."""
    import torch

    rows = image_rows(run.db, run.suite, models=run.models)
    by_model: dict[str, list] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    written, skipped, dims = 0, {}, {}
    for model, images in sorted(by_model.items()):
        found = scorer.source_of(model)
        if found is None:
            skipped[model] = ("no text encoder in the registry (an API model): give one with --text-encoders "
                              f"{model}=SOURCE (the paper used T5-XXL for DALL-E 3)")
            continue
        try:
            encoders = scorer.encoders(*found)
        except (OSError, ValueError) as error:  # weights not on this machine, a folder that is no pipeline
            skipped[model] = f"its text encoders cannot be loaded from {found[0]}: {error}"
            continue
        anchors = {row.item_key: row.text for row in images if row.role == "anchor"}
        targets = [row for row in images if row.role in ("permutation", "paraphrase") and row.item_key in anchors]
        texts = list(dict.fromkeys([*anchors.values(), *(row.text for row in targets)]))
        if not targets:
            continue
        vectors = torch.nn.functional.normalize(encoders.embed(texts), dim=-1)
        position = {text: k for k, text in enumerate(texts)}
        dims[model] = int(vectors.shape[-1])
        metrics = []
        for row in targets:
            cosine = float(vectors[position[anchors[row.item_key]]] @ vectors[position[row.text]])
            metrics.append(MetricRow(row.model_id, NAME, cosine, SCORER, image_id=row.image_id, suite=run.suite,
                                     subset=row.subset, scorer_version=encoders.source,
                                     details={"with": "anchor", "role": row.role, "encoders": encoders.names,
                                              "dim": dims[model], "source": encoders.source}))
        written += write_metrics(run.db, metrics)
    if not written and skipped:
        raise Skip("; ".join(f"{model}: {why}" for model, why in skipped.items()))
    return {"text_encoders": {"rows": written, "dimensions": dims, "skipped": skipped}}


METRICS.register(Metric(
    name="text_encoders", title="SemVarBench Figs. 6 and 14: cos of T_a and T_pv / T_pi under each model's own text "
    "encoders (semvar_text_similarity)", stored=(NAME,), direction="none", make_scorer=_make,
    options=(text_encoder_options,), score=score_text_similarity, default=False,
))
