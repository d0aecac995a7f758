"""``commonsense-paper``: Commonsense-T2I exactly as published.

The paper is ../shared/reference/papers/commonsense-t2i.txt (Fu et al., "Commonsense-T2I Challenge"); where its text
is silent or differs from the authors' released code (repository zeyofu/Commonsense-T2I: generate_images.py,
evaluate.py; protocols.md T2), each line below says which one it follows: the code that made the printed Table 2.
docs/methods/commonsense-t2i.md explains every line.
"""

from core.presets import PRESETS, Choice, Preset

GENERATE = "Commonsense-T2I generate_images.py"
EVALUATE = "Commonsense-T2I evaluate.py"

PRESETS.register(Preset(
    name="commonsense-paper",
    title="Commonsense-T2I, as published",
    suite="commonsense",
    report="commonsense",
    paper="commonsense-t2i.txt",
    description="The twelve systems of Table 2 with the authors' generation settings, four images per prompt, the "
                "GPT-4o fit judge and the ViT-L/14 CLIP evaluator of §3.1, and Tables 1 and 2.",
    choices={
        # --- data ------------------------------------------------------------------------------------------------
        "data.benchmark": Choice(
            "data.json (150 items: prompt1, prompt2, description1, description2, category, likelihood) imported "
            "with python -m arena suites import commonsense data.json",
            "paper §2.1 and Appendix A.1; the dataset CommonsenseT2I/CommonsensenT2I that evaluate.py loads",
            "The bundled sample (suites/data/commonsense_sample.json, 14 items) is the project's own, not the "
            "published 150."),
        "data.description": Choice(
            "a description's lines joined with ', '", f"{EVALUATE}: description.replace('\\n', ', ')"),
        # --- generation ------------------------------------------------------------------------------------------
        "generation.models": Choice(
            ("sd-2-1", "sdxl", "sdxl-partner-negative", "openjourney-v4", "playground-v2.5", "lcm-dreamshaper-v7",
             "sd3", "sd3-partner-negative", "flux-dev", "flux-schnell", "dall-e-3", "dall-e-3-no-revision"),
            "paper §3.1, systems (1)-(12), the rows of Table 2"),
        "generation.images_per_prompt": Choice(
            4, "paper §3.1: 'we generate the images for each data sample four times'; generate_images.py range(4)"),
        "generation.seed_policy": Choice(
            "derived", "project default: a seed per image from (seed, model, prompt, index)",
            "generate_images.py runs the diffusers models unseeded (FLUX with a random seed per image); seeding "
            "each image makes a run repeatable and changes nothing else."),
        "generation.model.sd-2-1": Choice(
            {}, f"{GENERATE} load_sd_21_model: DPMSolverMultistepScheduler swapped in, pipe(prompt) (the registry's "
            "sd-2-1)"),
        "generation.model.sdxl": Choice(
            {"steps": 28, "guidance": 7.0}, f"{GENERATE} generate_image_sd_model: num_inference_steps=28, "
            "guidance_scale=7.0", "The registry's sdxl follows its model card (50 steps, guidance 5.0)."),
        "generation.model.sdxl-partner-negative": Choice(
            {"steps": 28, "guidance": 7.0}, f"paper §3.1 (4) 'uses pairwise prompts as negative prompts'; {GENERATE} "
            "generate_image_sd_model: 28 steps, guidance 7.0",
            "The released script hands the partner prompt over as use_negative_prompt=..., an argument the diffusers "
            "pipelines do not have (SDXL's ignores it, SD3's refuses it); the preset passes it as negative_prompt, "
            "as the paper says."),
        "generation.model.openjourney-v4": Choice({}, f"{GENERATE} openjourneyv4: pipe(prompt), fp16"),
        "generation.model.playground-v2.5": Choice(
            {}, f"{GENERATE} generate_image_playground25_model: 50 steps, guidance 3 (the registry's)"),
        "generation.model.lcm-dreamshaper-v7": Choice(
            {}, f"{GENERATE} generate_image_lcm_model: num_inference_steps=4, guidance_scale=8.0, float32",
            "The script loads the old custom pipeline latent_consistency_txt2img (revision fb9c5d); the preset runs "
            "diffusers' LatentConsistencyModelPipeline with the same steps, guidance and 50 original steps."),
        "generation.model.sd3": Choice(
            {}, f"{GENERATE} generate_image_sd_model: 28 steps, guidance 7.0 (the registry's sd3)"),
        "generation.model.sd3-partner-negative": Choice(
            {}, "paper §3.1 (5), as sdxl-partner-negative: 28 steps, guidance 7.0, the partner as negative prompt"),
        "generation.model.flux-dev": Choice(
            {}, f"{GENERATE} generate_image_flux_dev_model: 1024 px, guidance 3.5, 50 steps, max_sequence_length 512"),
        "generation.model.flux-schnell": Choice(
            {}, f"{GENERATE} generate_image_flux_schnell_model: guidance 0.0, 4 steps, max_sequence_length 256"),
        "generation.model.dall-e-3": Choice(
            {}, f"{GENERATE} generate_image_dalle_model: model dall-e-3, size 1024x1024, quality standard, n=1 "
            "(style left to the API: vivid)"),
        "generation.model.dall-e-3-no-revision": Choice(
            {}, "paper §3.1 (12) and OpenAI's prompting guide: the prefix 'I NEED to test how the tool works with "
            "extremely simple prompts. DO NOT add any detail, just use it AS-IS:'",
            "The paper prints the prefix, a space and {prompt}; generate_images.py joins prefix + prompt without a "
            "space. The preset sends what the code sent."),
        # --- judge -----------------------------------------------------------------------------------------------
        "judge.task": Choice("commonsense", "paper §2.3 and §3.1: fit(I, D) for each image and both descriptions"),
        "judge.model": Choice(
            "gpt-4o", "paper §3.2 (GPT-4o 'can be a good candidate for automatic evaluation'); evaluate.py's default "
            "evaluator GPT4VO = gpt-4o",
            "Table 2 also has gpt-4-vision-preview, gpt-4-turbo and Gemini 1.0 Pro Vision: run the judge again with "
            "--judge-model to fill those columns."),
        "judge.image_detail": Choice("low", f"{EVALUATE} query_gpt4v: image_url detail 'low'"),
        "judge.options": Choice(
            {"seed": 42, "failed_fit": "unfit", "jpeg_quality": 75, "max_tokens": 10},
            f"{EVALUATE}: random.seed(42) for the 'fits both' draws; an answer that is not 1 or 0 becomes -1 and "
            "supports no description, so its pair scores 0; the image sent is the .jpg generate_images.py saved "
            "(Pillow's default quality 75) as data:image/jpeg; max_tokens=10",
            "The draws follow a seeded generator per image, not the script's one random.choice sequence. The judge "
            "sees each stored image re-encoded as that JPEG (an imported JPEG as it is); the project's default "
            "sends the stored image and asks with the template's 20 tokens."),
        # --- metrics ---------------------------------------------------------------------------------------------
        "metrics.names": Choice(("commonsense",), "paper §3.1: CLIP as an additional evaluator (Table 2, column CLIP)"),
        "metrics.option.clip_model": Choice(
            "ViT-L-14", "paper §3.1 'CLIP (ViT-L/14)'; evaluate.py clip.load('ViT-L/14')",
            "The project's default CLIP is ViT-B-32 (the taxonomy paper's); this preset alone switches to ViT-L/14."),
        "metrics.option.clip_pretrained": Choice("openai", "evaluate.py: OpenAI's clip package weights"),
        "metrics.option.commonsense_jpeg_quality": Choice(
            75, f"{EVALUATE} eval_clip: preprocess(Image.open(...jpg)), the JPEGs {GENERATE} saved with Pillow's "
            "default quality 75", "The project's default scores the stored image as it is."),
        # --- rating and report -----------------------------------------------------------------------------------
        "rating.protocol": Choice(
            "arena", "the paper rates no votes (accuracies only): human votes on its prompts use the arena's own fit"),
        "report.name": Choice("commonsense", "paper Tables 1 and 2: python -m arena report commonsense"),
    },
))
