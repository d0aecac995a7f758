"""``consistency-paper``: consistency over paraphrases (abstract vs realistic objects) exactly as published.

The paper is ../shared/reference/papers/hollinger-consistency.txt (Hollinger, "Comparing Text-to-Image Consistency
between Abstract and Realistic Objects"); where its text is silent or differs from the author's released code
(repository marchollinger/t2i_object_consistency_benchmark: run_benchmark.py, utils/sim_scores.py,
utils/t2i_variants.py; protocols.md T5), each line below says which one it follows.
docs/methods/consistency.md explains every line.
"""

from core.presets import PRESETS, Choice, Preset

PAPER_SETTINGS = "paper Figure 1, 2 and 3 captions: num_inference_steps=50, guidance_scale=7.5 for every SD version"
VARIANTS = "t2i_variants.py SD: StableDiffusionPipeline.from_pretrained(model_id, fp16), pipe(prompt=prompt)"

PRESETS.register(Preset(
    name="consistency-paper",
    title="Consistency over paraphrases (Hollinger), as published",
    suite="paraphrase",
    report="consistency",
    paper="hollinger-consistency.txt",
    description="SD 2.0, 2.1, 3-medium at 50 steps / guidance 7.5 and DALL-E 3, one image per wording, the ALIGN "
                "score of each image with its own wording, its spread per object, and Table 1.",
    choices={
        # --- data ------------------------------------------------------------------------------------------------
        "data.benchmark": Choice(
            "abstract_vs_realistic.tsv (80 objects x 5 wordings) imported with python -m arena suites import "
            "paraphrase FILE",
            "paper §2 (n_a = n_r = 40, m = 5); the repository's data/abstract_vs_realistic.csv (tab-separated), "
            "../shared/data/hollinger/abstract_vs_realistic.tsv"),
        # --- generation ------------------------------------------------------------------------------------------
        "generation.models": Choice(
            ("sd-2", "sd-2-1", "sd3", "dall-e-3"), "paper §3 and Figure 3: SD 2.0, 2.1, 3-medium and DALL-E 3"),
        "generation.images_per_prompt": Choice(
            1, "paper §2: 'the model uses prompt variation L_ij to generate image I_ij'; run_benchmark.py: one "
            "image per row"),
        "generation.seed_policy": Choice(
            "derived", "project default: a seed per image from (seed, model, prompt, index)",
            "run_benchmark.py calls the pipelines unseeded; seeding each image makes a run repeatable."),
        "generation.model.sd-2": Choice(
            {"scheduler": "", "steps": 50, "guidance": 7.5}, f"{PAPER_SETTINGS}; {VARIANTS} (the repository's own "
            "scheduler, model id stabilityai/stable-diffusion-2)",
            "The registry's sd-2 swaps in the Euler scheduler of its model card; the code does not."),
        "generation.model.sd-2-1": Choice(
            {"scheduler": "", "steps": 50, "guidance": 7.5}, f"{PAPER_SETTINGS}; {VARIANTS} (the repository's own "
            "scheduler)",
            "The registry's sd-2-1 swaps in DPMSolverMultistepScheduler (its model card, and Commonsense-T2I's "
            "code); the consistency code does not."),
        "generation.model.sd3": Choice(
            {"steps": 50, "guidance": 7.5}, PAPER_SETTINGS,
            "The code calls pipe(prompt=prompt), which for SD3 in today's diffusers means 28 steps and guidance 7.0; "
            "the paper states 50 / 7.5 for every SD version and the preset follows the paper."),
        "generation.model.dall-e-3": Choice(
            {}, "paper Figure 3 caption: size 1024x1024, style vivid, quality standard (the registry's dall-e-3); "
            "t2i_variants.py DALL_E: langchain's DallEAPIWrapper(model='dall-e-3')"),
        # --- metrics ---------------------------------------------------------------------------------------------
        "metrics.names": Choice(
            ("align", "consistency"), "paper §2, eq. 1 (v_ij = ALIGNScore(I_ij, L_ij)) and eqs. 2-5 (s_i, S_a, S_r, "
            "S_final); Table 1 (std, min, median)"),
        "metrics.option.align_model": Choice(
            "kakaobrain/align-base", "sim_scores.py ALIGNScore: AlignModel / AlignProcessor 'kakaobrain/align-base', "
            "logits_per_image"),
        "metrics.option.consistency_source": Choice(
            "align_score", "paper §2, eq. 1: the ALIGN score of each image with its own wording",
            "The code's alternative is CLIP (openai/clip-vit-base-patch16); the project's CLIP variant is "
            "--consistency-source clip_score."),
        # --- rating and report -----------------------------------------------------------------------------------
        "rating.protocol": Choice(
            "arena", "the paper rates no votes: human votes on its prompts use the arena's own fit"),
        "report.name": Choice("consistency", "paper Table 1 and Figure 3: python -m arena report consistency"),
    },
))
