"""``python -m arena plan``: how many more votes, per sampling strategy, until each target holds.

``python -m arena plan --target ci=15 [--target top=3 --target spearman=0.95] [--suite S ...]`` fits the human votes
of the leaderboard slice its filters choose and prints, per sampling strategy, the median votes still needed until
each target holds and their 10–90% range over simulated continuations (:mod:`sampling.planner` says how).
"""

from __future__ import annotations

from arena.leaderboard.compute import leaderboard_options, read_slice
from arena.study_plan import in_play, planner_params
from datamodel.catalog import models_with_images
from datamodel.connection import connect
from ratings.votes import TIE_POLICIES
from sampling.planner import StudyPlan, Target, format_plan, plan_study
from sampling.strategies import STRATEGIES


def plan_for(db, options, *, targets, strategies, repetitions: int, seed: int, horizon: int | None,
             warmup_battles: int, warmup_share: float) -> tuple[StudyPlan, list[str]]:
    """The plan of the human votes of the slice ``options`` chooses (and the models it covers)."""
    arrays = read_slice(db, options)
    models, counts = in_play(arrays.models, arrays.take(arrays.human).counts(), models_with_images(db, options.suite))
    params = planner_params(options, warmup_battles=warmup_battles, warmup_share=warmup_share)
    plan = plan_study(counts, targets=targets, strategies=strategies, params=params, repetitions=repetitions,
                      seed=seed, horizon=horizon)
    return plan, models


def cmd_plan(args, settings) -> int:
    if args.repetitions < 2:
        raise ValueError(f"--repetitions {args.repetitions}: the plan needs at least 2 simulated continuations.")
    targets = [Target.parse(text) for text in (args.target or ["ci=15"])]
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    options = leaderboard_options(settings, suite=args.suite, subset=args.subset, variant=args.variant,
                                  category=args.category, voter=args.voter, tie_policy=args.tie_policy,
                                  include_excluded=args.include_excluded, source=args.source)
    db = connect(settings.database, synchronous=settings.sqlite_synchronous)
    plan, models = plan_for(db, options, targets=targets, strategies=strategies, repetitions=args.repetitions,
                            seed=args.seed, horizon=args.horizon, warmup_battles=settings.warmup_battles,
                            warmup_share=settings.warmup_share)
    print(f"{len(models)} models: {', '.join(models)}.")
    print(format_plan(plan))
    return 0


def add_commands(commands) -> None:
    """``python -m arena plan``."""
    plan = commands.add_parser("plan", help="how many more votes, per sampling strategy, until intervals, the top K "
                                            "or the ranking settle")
    plan.add_argument("--target", action="append", metavar="TARGET",
                      help="ci=X (every 95%% interval within ±X Elo), top=K (the top K settled) or spearman=R "
                           "(Spearman >= R against the final ranking); repeat for several (default ci=15)")
    plan.add_argument("--strategies", default=",".join(STRATEGIES),
                      help=f"comma-separated sampling strategies to plan for (default {','.join(STRATEGIES)})")
    plan.add_argument("--repetitions", type=int, default=40,
                      help="simulated continuations per strategy (default 40)")
    plan.add_argument("--horizon", type=int,
                      help="more votes to look ahead (default: four times the votes so far, at least 20000)")
    plan.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    plan.add_argument("--suite", help="only votes on prompts of this suite, e.g. taxonomy")
    plan.add_argument("--subset", help="only votes on prompts of this subset, e.g. Easy")
    plan.add_argument("--variant", help="with_definition or without_definition (taxonomy)")
    plan.add_argument("--category", help="only votes on prompts of this category (metadata category)")
    plan.add_argument("--voter", help="one annotator's votes only")
    plan.add_argument("--source", help="only these votes: arena (this arena's own) or an import source")
    plan.add_argument("--tie-policy", choices=list(TIE_POLICIES),
                      help="ties and both-bad in the fit (default: the tie_policy setting)")
    plan.add_argument("--include-excluded", action="store_true", help="count votes flagged as excluded")
    plan.set_defaults(handler=cmd_plan)
