"""``semvarbench-paper``: SemVarBench exactly as published.

The paper is ../shared/reference/papers/semvarbench.txt (Zhu et al., "Evaluating semantic variation in text-to-image
synthesis: a causal perspective", ICLR 2025); the released data is the repository zhuxiangru/SemVarBench
(protocols.md, T3). docs/methods/semvarbench.md explains every line.
"""

from core.presets import PRESETS, Choice, Preset

PRESET = PRESETS.register(Preset(
    name="semvarbench-paper",
    title="SemVarBench, as published",
    suite="semvarbench",
    report="semvarbench",
    paper="semvarbench.txt",
    description="The 684 test items, one image per sentence from each model with its default settings (DPM-Solver++ "
                "for SD 1.5 and 2.1), the paper's alignment prompt scored by an MLLM seven times per item, "
                "SemVarEffect per model, category and aspect.",
    choices={
        # --- data ----------------------------------------------------------------------------------------------
        "data.benchmark": Choice(
            "the released test set: python -m arena suites import semvarbench <repository or "
            "benchmark/testset/test_data.txt> (684 items, 20 categories from testset_divided_category/*.txt)",
            "zhuxiangru/SemVarBench benchmark/testset and testset_divided_category; paper §3.3, Table 7"),
        "data.api_models": Choice(
            "Midjourney V6, DALL-E 3, CogView-3-Plus and Ideogram 2 have no weights: their images enter with "
            "python -m arena import-images",
            "paper Table 1 (API-based models), §4.1"),
        # --- generation ----------------------------------------------------------------------------------------
        "generation.models": Choice(
            ("sd-v1-5", "sd-2-1", "sdxl-base-refiner", "stable-cascade", "deepfloyd-if", "pixart-alpha", "kolors",
             "sd3", "flux-dev"),
            "paper Table 1 and Appendix D.1 (the nine open-source models, hub ids in its footnotes 3-10)",
            "'All other settings are left as default' (D.1) is read as each model's card: footnote 5 names SDXL's "
            "base and refiner (the card's ensemble of experts: sdxl-base-refiner, 40 steps, the refiner from 80 %), "
            "footnote 6 Stable Cascade's prior and decoder (the card's two pipelines: 1024 px, 20 + 10 steps), and "
            "FLUX.1-dev runs the card's 50 steps. The other reading, each diffusers pipeline's call defaults "
            "(Stable Cascade's combined pipeline 512 px, 60 + 12 steps; FLUX.1-dev 28 steps; SDXL base then the "
            "refiner's img2img defaults), is the preset semvarbench-paper-pipeline-defaults."),
        "generation.model.sd-v1-5": Choice(
            {"scheduler": "DPMSolverMultistepScheduler"},
            "Appendix D.1: 'The schedulers for SD 1.5 and SD 2.1 are set to DPM-Solver++' (diffusers' "
            "DPMSolverMultistepScheduler, whose default algorithm is dpmsolver++)"),
        "generation.model.sd-2-1": Choice(
            {"scheduler": "DPMSolverMultistepScheduler"}, "Appendix D.1 (as for SD 1.5)"),
        "generation.images_per_prompt": Choice(
            1, "§4.1: 'For each sentence, we generate one image' (684 x 3 images per model)"),
        # --- judge ---------------------------------------------------------------------------------------------
        "judge.task": Choice("semvar", "§4.1 Metrics; eqs. 2-4: seven S(T, I) per item, SemVarEffect"),
        "judge.model": Choice(
            "gpt-4-turbo-2024-04-09",
            "Appendix D.2 (model versions); Tables 9, 10 and Figs. 7-8 are GPT-4 Turbo's",
            "Table 2 has four evaluators: run the judge once more per evaluator with --judge-model gpt-4o-2024-05-13, "
            "claude-3-5-sonnet-20240620 or gemini-1.5-pro-001 (on an OpenAI-compatible endpoint); the report puts "
            "each in its column group."),
        "judge.templates": Choice(
            {}, "Appendix D.2: the alignment prompt, quoted word for word by the semvar task's own template"),
        # --- rating and report ---------------------------------------------------------------------------------
        "rating.protocol": Choice(
            "arena", "the paper fits no rating: the arena leaderboard keeps the project's own Bradley-Terry"),
        "report.name": Choice("semvarbench", "paper Tables 2, 4, 7, 9, 10, 11, 12, 14, Appendix C.3, the aspects of "
                              "§4.3 and Figures 6 and 14"),
        "report.evaluators": Choice(
            {"Gemini 1.5 Pro": "gemini-1.5-pro-001", "Claude 3.5 Sonnet": "claude-3-5-sonnet-20240620",
             "GPT-4o": "gpt-4o-2024-05-13", "GPT-4 Turbo": "gpt-4-turbo-2024-04-09"},
            "Appendix D.2: 'The versions of these MLLMs used are as follows: Gemini 1.5 Pro (gemini-1.5-pro-001), "
            "Claude 3.5 Sonnet (claude-3-5-sonnet-20240620), GPT-4o (gpt-4o-2024-05-13), and GPT-4 Turbo "
            "(gpt-4-turbo-2024-04-09)'",
            "Only these dated models fill the paper's column groups of Table 2 (and Fig. 6 and Table 4 read the GPT-4o "
            "one); another version (gpt-4o, gpt-4o-2024-08-06) gets a column group of its own."),
    },
))
