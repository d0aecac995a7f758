"""How much a rater knows of a model before answering on it: ``python -m tools.rating_reveals``.

The Ratings tab tells a model once the rater's answers on its unit are in (:mod:`arena.rating_session`). This tool
measures whether that leaks: on a throwaway arena of its own (``--items`` Commonsense-T2I items, SemVarBench items
and SANEval prompts, drawn by four models, as :mod:`tools.rating_timing` builds it), ``--raters`` simulated raters
answer ``--answers`` questions of each rating task in turn (random answers on the task's scale, through the same
functions as the page), and for every answer given just after a model was told it counts whether the answer is on
that model. It prints, per task:

- **after a reveal**: the answers given right after a model was told, how many were on that model, their share, and
  the share chance gives (each told model's share of all the task's answers, averaged over the reveals): the rule
  holds when the two agree;
- **if each answer told its model**: the same count had every answer's receipt named its image's model (the rule
  before the fourth security review): the share of answers on the model of the answer before, and on the very same
  image. That is what the reviewer measured (Commonsense-T2I 75% and 50%, SemVarBench 86% and 57%).

Nothing is timed; the figures depend only on ``--seed``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TASKS = ("commonsense_fit", "semvar_alignment", "saneval_adherence")


@dataclass(frozen=True)
class RevealShare:
    """One task's figures (module docstring)."""

    task: str
    answers: int
    after_reveal: int  # answers given right after a model was told
    on_revealed: int  # ... on that model
    chance: float  # the share chance gives
    on_previous_model: float  # share of answers on the model of the answer before
    on_previous_image: float  # ... on its very image

    @property
    def share(self) -> float:
        return self.on_revealed / self.after_reveal if self.after_reveal else float("nan")


def random_answer(scale, rng: random.Random) -> dict:
    """A valid answer on ``scale`` (a choice scale's point, or every score of a scores scale), drawn at random."""
    from datamodel.rating_scales import ChoiceScale

    if isinstance(scale, ChoiceScale):
        return {scale.name: rng.choice(scale.values)}
    return {score.name: rng.randint(scale.low, scale.high) for score in scale.scores}


def measure_task(db, task: str, *, raters: int, answers: int, seed: int) -> RevealShare:
    """Open ``task`` alone (as many raters per item as there are raters), let ``raters`` raters answer ``answers``
    questions each, and count (module docstring)."""
    from arena import rating_session as raters_module
    from datamodel.human_ratings import set_assignment
    from judges.rating_tasks import RATING_TASKS

    for name in TASKS:
        set_assignment(db, name, raters_per_item=max(1, raters), active=name == task)
    scale = RATING_TASKS[task].scale
    pool, rng = raters_module.RatingPool(), random.Random(seed)
    given: list[tuple[str, str]] = []  # (model, image) of every answer, all raters
    pairs: list[tuple[str, str, str | None, str | None, str | None]] = []  # this answer's, the told model, previous
    for r in range(raters):
        session = raters_module.start(db, f"reveal-{task}-{seed}-{r}", "reveal-token-1", open_signup=True)
        try:
            session = raters_module.next_question(db, rng, session, pool=pool)
        except raters_module.NoQuestionAvailable:
            continue
        told = previous = previous_image = None
        for _ in range(answers):
            if session.current is None:
                break
            image = str(session.current.image_id)
            session = raters_module.answer(db, session, random_answer(scale, rng), pool=pool, rng=rng, rules=None)
            assert session.receipt is not None  # answer() stored this answer
            model = session.receipt.model
            given.append((model, image))
            pairs.append((model, image, told, previous, previous_image))
            told, previous, previous_image = session.revealed, model, image
    totals = Counter(model for model, _ in given)
    after = [(model, told) for model, _, told, _, _ in pairs if told is not None]
    followers = [(model, image, before, before_image) for model, image, _, before, before_image in pairs
                 if before is not None]
    return RevealShare(
        task=task, answers=len(given), after_reveal=len(after),
        on_revealed=sum(model == told for model, told in after),
        chance=sum(totals[told] / len(given) for _, told in after) / len(after) if after else float("nan"),
        on_previous_model=sum(m == b for m, _, b, _ in followers) / len(followers) if followers else float("nan"),
        on_previous_image=sum(i == bi for _, i, _, bi in followers) / len(followers) if followers else float("nan"))


def measure(root: Path, *, items: int, raters: int, answers: int, seed: int = 0) -> list[RevealShare]:
    """Build the throwaway arena under ``root`` and measure every rating task."""
    from datamodel.connection import connect
    from datamodel.media import MediaStore
    from datamodel.renditions import Renditions
    from tools.rating_timing import build_arena

    settings = build_arena(root, items)
    db = connect(settings.db_path)
    Renditions.from_settings(MediaStore(settings.media_dir), settings).render_missing(db)  # questions show these
    try:
        return [measure_task(db, task, raters=raters, answers=answers, seed=seed) for task in TASKS]
    finally:
        db.close()


def report(shares: list[RevealShare]) -> str:
    lines = [f"{'task':18} {'answers':>7}  after a reveal: {'answers':>7} {'on it':>6} {'share':>6} {'chance':>6}"
             f"  | if each answer told its model: on that model, on that image"]
    for s in shares:
        lines.append(f"{s.task:18} {s.answers:7}  {'':16}{s.after_reveal:7} {s.on_revealed:6} {s.share:6.1%} "
                     f"{s.chance:6.1%}  | {s.on_previous_model:.1%}, {s.on_previous_image:.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.rating_reveals", description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=40, help="items of each suite in the throwaway arena (default 40)")
    parser.add_argument("--raters", type=int, default=8, help="simulated raters per task (default 8)")
    parser.add_argument("--answers", type=int, default=60, help="answers per rater and task (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="the draws' and answers' seed (default 0)")
    args = parser.parse_args(argv)
    if min(args.items, args.raters, args.answers) < 1:
        parser.error("--items, --raters and --answers must be 1 or more")
    with tempfile.TemporaryDirectory(prefix="rating-reveals-") as root:
        print(report(measure(Path(root), items=args.items, raters=args.raters, answers=args.answers, seed=args.seed)))


if __name__ == "__main__":
    main()
