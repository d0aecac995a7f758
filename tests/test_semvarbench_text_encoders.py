"""SemVarBench's text-encoder analysis (§4.3 Fig. 6, Appendix F.1 Fig. 14): a sentence's vector under each model's
own text encoders, the rule checked against Table 1's #DIM, and the similarities computed with tiny random encoders
of each pipeline layout through the same loading as real weights."""

from __future__ import annotations

import pytest
from support.shared import SHARED

from judges.metrics.text_encoders import chosen_encoders

PAPER = SHARED / "reference" / "papers" / "semvarbench.txt"

# The text encoders of each open model in model_index order, with the width of each one's output: the pooled
# projection or pooler output of CLIP (hidden_size / projection_dim of the hub configs: CLIP ViT-L 768, OpenCLIP
# ViT-H 1024, OpenCLIP ViT-bigG 1280), ChatGLM3's hidden size 4096, T5-XXL's d_model 4096.
ENCODERS = {
    "SD 1.5": [("CLIPTextModel", 768)],
    "SD 2.1": [("CLIPTextModel", 1024)],
    "SD XL 1.0": [("CLIPTextModel", 768), ("CLIPTextModelWithProjection", 1280)],
    "SD CA": [("CLIPTextModelWithProjection", 1280)],  # the prior's encoder (prior_text_encoder)
    "DeepFloyd": [("T5EncoderModel", 4096)],
    "PixArt": [("T5EncoderModel", 4096)],
    "Kolors": [("ChatGLMModel", 4096)],
    "SD 3": [("CLIPTextModelWithProjection", 768), ("CLIPTextModelWithProjection", 1280), ("T5EncoderModel", 4096)],
    "FLUX.1": [("CLIPTextModel", 768), ("T5EncoderModel", 4096)],
}


def test_the_sentence_vector_rule_gives_table_1s_dimension_for_every_open_model():
    """Table 1, #DIM ("pooled dimension of text encoders' outputs"), all nine open-source lines: the pooled CLIP and
    ChatGLM outputs concatenated, T5 only where a model has nothing else."""
    if not PAPER.is_file():
        pytest.skip(f"{PAPER} (the SemVarBench paper's text in ../shared) is missing")
    printed = {}
    for line in PAPER.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) > 4 and cells[1] in ENCODERS and cells[2] == "Diffusion":
            printed[cells[1]] = int(cells[3])
    assert len(printed) == 9
    for model, encoders in ENCODERS.items():
        chosen = chosen_encoders([name for name, _ in encoders])
        assert sum(encoders[k][1] for k in chosen) == printed[model], model


MODELS = ("sd-v1-5", "sdxl", "pixart-alpha", "kolors", "stable-cascade", "flux-dev", "sd3")
ITEMS = (("sv1", "A dog chasing a cat", "A cat chasing a dog", "A cat being chased by a dog"),
         ("sv2", "A red cup on a blue book", "A blue cup on a red book", "On a blue book, a red cup"))


@pytest.fixture(scope="module")
def semvar_images(tmp_path_factory):
    from support.openai_stub import colored

    from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    root = tmp_path_factory.mktemp("semvar-text")
    db, media = connect(root / "a.db"), MediaStore(root / "media")
    specs = [PromptSpec("semvarbench", key, text, role=role, metadata={"categories": ["Action"]})
             for key, *texts in ITEMS for role, text in zip(("anchor", "permutation", "paraphrase"), texts)]
    ids = add_prompts(db, specs).ids
    for m, model in enumerate((*MODELS, "dall-e-3")):
        model_id = add_model(db, model)
        for n, prompt_id in enumerate(ids):
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(colored((m, n, 9))))
    yield db, media
    db.close()


@pytest.mark.slow
def test_each_models_own_tiny_text_encoders_give_the_similarities(semvar_images, artefact_cache):
    """``judges metrics --metrics text_encoders --tiny``: every pipeline layout's encoders load alone from the tiny
    stand-in's folder (as real weights would), the vector is the rule's (its width the chosen encoders' widths
    summed), and each T_pv / T_pi image holds cos(E(T_a), E(T_p)). DALL-E 3 has none and is named with the fix;
    --text-encoders gives it another model's."""
    import torch

    from judges.metrics.commands import compute_metrics
    from judges.metrics.registry import Scorers, metric_options
    from judges.metrics.text_encoders import NAME, load_text_encoders

    db, media = semvar_images
    summary = compute_metrics(db, media, "semvarbench", ["text_encoders"],
                              Scorers(metric_options(), tiny=True, cache_dir=artefact_cache))
    dims = summary["text_encoders"]["dimensions"]
    # tiny widths: CLIP 32 (with projection 32), T5 d_model 32; SD XL and SD 3 join two CLIP encoders
    assert dims == {"sd-v1-5": 32, "sdxl": 64, "pixart-alpha": 32, "kolors": 32, "stable-cascade": 32,
                    "flux-dev": 32, "sd3": 64}
    assert "dall-e-3" in summary["text_encoders"]["skipped"]
    assert "--text-encoders dall-e-3=SOURCE" in summary["text_encoders"]["skipped"]["dall-e-3"]
    rows = db.execute("SELECT m.name, p.item_key, p.role, x.value, x.details FROM metrics x JOIN models m ON "
                      "m.id = x.model_id JOIN images i ON i.id = x.image_id JOIN prompts p ON p.id = i.prompt_id "
                      "WHERE x.name = ?", [NAME]).fetchall()
    assert len(rows) == len(MODELS) * 2 * 2  # two items, T_pv and T_pi, per model
    texts = {(key, role): text for key, *all_texts in ITEMS
             for role, text in zip(("anchor", "permutation", "paraphrase"), all_texts)}
    from generators.tiny import ensure_tiny

    sdxl = load_text_encoders(str(ensure_tiny(artefact_cache, "tiny-sdxl")), variant="fp16")
    assert sdxl.names == ["CLIPTextModel", "CLIPTextModelWithProjection"]
    for model, key, role, value, _ in rows:
        if model == "sdxl":
            a, b = torch.nn.functional.normalize(sdxl.embed([texts[(key, "anchor")], texts[(key, role)]]), dim=-1)
            assert value == pytest.approx(float(a @ b), abs=1e-5)
        assert -1.0 <= value <= 1.0 + 1e-6
    summary = compute_metrics(db, media, "semvarbench", ["text_encoders"],
                              Scorers(metric_options(text_encoders=["dall-e-3=pixart-alpha"]), tiny=True,
                                      cache_dir=artefact_cache), models=["dall-e-3"])
    assert summary["text_encoders"]["dimensions"] == {"dall-e-3": 32}  # PixArt's T5, as the paper's T5-XXL


def test_the_tiny_kolors_text_encoder_is_finite():
    """The tiny Kolors stand-in's ChatGLM encoder had its weights left as allocated (NaN among them): every
    embedding it gave, and so every image of the tiny Kolors, came from NaN."""
    import torch

    from generators.tiny import build_tiny_kolors

    pipeline = build_tiny_kolors(0)
    tokens = pipeline.tokenizer(["A dog chasing a cat"], padding="max_length", max_length=256, return_tensors="pt")
    output = pipeline.text_encoder(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"],
                                   position_ids=tokens["position_ids"], output_hidden_states=True)
    assert all(torch.isfinite(state).all() for state in output.hidden_states)
