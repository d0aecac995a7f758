"""``saneval-paper``: SANEval exactly as published.

The paper is ../shared/reference/papers/saneval.txt ("SANEval: open-vocabulary compositional benchmarks with
failure-mode diagnosis"); where its text is silent, the authors' released code (repository nielseni6/saneval,
protocols.md T4) says what was done, and each line below says which one it follows. docs/methods/saneval.md explains
every line.
"""

from core.presets import PRESETS, Choice, Preset

PRESETS.register(Preset(
    name="saneval-paper",
    title="SANEval, as published",
    suite="saneval",
    report="saneval",
    paper="saneval.txt",
    description="5,000 prompts in the published strata, Appendix C's prompts 1-8 to Gemini 2.5 Flash, an "
                "open-vocabulary detector, the published spatial, numeracy and binding scores and feedback.",
    choices={
        # --- data ----------------------------------------------------------------------------------------------
        "data.prompts": Choice(
            "python -m arena suites build saneval --preset saneval-paper: 1,000 prompts per category (275 with 1 "
            "object, 275 with 2, 275 with 3-5, 125 with 6-10, 50 with 11-15), written by the LLM and accepted by a "
            "person (python -m arena suites review saneval, or the admin tab's prompt check)",
            "paper §3.1 (Dataset Curation: 'prompts ... were generated using Gemini-2.5-Flash and subsequently "
            "validated by human annotators'; Prompt Cardinality Breakdown)",
            "The paper's own 5,000 prompts are not released with the code, nor the prompt it gave the LLM: the "
            "writer's request is the project's (suites.saneval.WRITER_REQUEST), asking for the paper's form. A "
            "one-object spatial prompt places the object in the picture ('a lamp on the left of the image'): the "
            "paper gives spatial a 1-object stratum without saying what it relates. --generator script is the "
            "offline fallback (word lists holding every object and attribute of the paper's examples)."),
        "suite.options": Choice(
            {"strata": "published", "generator": "llm", "writer_model": "gemini-2.5-flash"},
            "paper §3.1 (the strata; Gemini-2.5-Flash wrote the prompts); Appendix B (Gemini-2.5-Flash)",
            "Counts stay within prompt 4's number words (one to eight, the authors' list), so every count can be "
            "read back."),
        "data.models": Choice(
            "Imagen 3.0, Imagen 4.0, Imagen 4.0 Ultra, Nano Banana, Seedream 3.0 and GPT Image 1 are API models: "
            "their images enter with python -m arena import-images",
            "paper §4.1, Table 1; Appendix B (API endpoints of OpenAI, Google and ByteDance via Fal-AI)"),
        "generation.models": Choice((), "paper §4.1: all six systems are API models (no open weights)"),
        # --- judge ---------------------------------------------------------------------------------------------
        "judge.task": Choice("saneval", "paper §3.2-3.6"),
        "judge.model": Choice(
            "gemini-2.5-flash",
            "Appendix B: 'both the Vision-Language Model (VLM) and Large Language Model (LLM) components ... "
            "default to Gemini-2.5-Flash'",
            "Give an OpenAI-compatible endpoint that serves it (--base-url / judge_base_url)."),
        "judge.options": Choice(
            {"protocol": "published", "flag_threshold": 0.75},
            "Appendix C (prompts 1-8 verbatim), §3.4-3.6 (scores), Table 5 (feedback, flagged under 0.75); the "
            "authors' code for the eight relations, the spatial score's confidence weighting and the 32 px crops",
            "§3.4 says a score under 0.5 is flagged; Table 5 and the code flag under 0.75, which the preset follows. "
            "The detector is YOLO-E in the paper (§3.3): pass --detector; a transformers OWLv2 / Grounding DINO "
            "folder is the modular alternative the paper allows, named in every score's details."),
        # --- rating and report ---------------------------------------------------------------------------------
        "rating.protocol": Choice(
            "arena", "the paper fits no rating: the arena leaderboard keeps the project's own Bradley-Terry"),
        "report.name": Choice("saneval", "paper Tables 1-5"),
        "report.human_task": Choice(
            "saneval_adherence_10",
            "Appendix D, Table 4: 100 answers per benchmark, every cell a multiple of 0.001 (answers in tenths)",
            "The paper says 'Likert-style scales' and shows its interface only in figures; a five-point Likert's "
            "means of 100 answers move in steps of 0.0025, which only 6 of Table 4's 30 cells are. The preset's "
            "Table 4 reads the 0-10 task (value v / 10); the project's five-point task (saneval_adherence) stays "
            "under the arena preset."),
    },
))
