"""``arena``: the project's own defaults, what every command does without ``--preset``.

It sets nothing a command does not already do by default (a test checks that applying it changes no option); its
lines say what those defaults are and why they differ from the published protocols.
"""

from core.presets import PRESETS, Choice, Preset

PRESETS.register(Preset(
    name="arena",
    title="The project's own defaults",
    published=False,
    description="Every command's default behaviour: the models' own recommended settings, the corrected judge prompt "
                "asked in both orders, the project's rating fit.",
    choices={
        "generation.seed_policy": Choice(
            "derived", "project default: a stable hash of (seed, model, prompt, index), so adding a model or a "
            "prompt changes no other image"),
        "judge.task": Choice(
            "pairwise", "project default: the options below are the pairwise judge's; every other judge task keeps "
            "its own defaults"),
        "judge.templates": Choice(
            {}, "project default: each task's own template (the pairwise one says 'second image' where the taxonomy "
            "paper's Figure 7 says 'first' twice)"),
        "judge.options": Choice(
            {"single_order": False, "source": "draw", "user_prompt": "generation"},
            "project default: each battle asked in both orders, a disagreement counts as a tie (Chatbot Arena's "
            "rule for its LLM judge); battles drawn like the arena draws them; the judge sees the generation prompt"),
        "rating.protocol": Choice(
            "arena", "project default: Bradley-Terry with the tie_policy setting, the weak prior of "
            "rating_prior_sd, rounded ratings"),
    },
))
